"""Which checks each CI stage selects, taken from the stages themselves rather than restated.

Each stage's make target runs with stand-in `reframe` and `yeebench` programs that record their
arguments and run nothing: the recorded ReFrame command (its -c/-n/-x/-t/-S/--system options, exactly
as the stage passes them) is then replayed with `--list`. The virtual cluster's smoke run builds its
ReFrame command in Python (vcluster/smoke.py), so its recorded `yeebench vcluster smoke` options feed
that function instead.
"""
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

#: The make targets of `make test` that select the suite's experiment checks (the container stages run
#: container.py's checks, the Spack stage a `--mode smoke` subset of test-suite's selection).
STAGES = ('test-suite', 'test-vcluster', 'test-acceptance', 'test-acceptance-vcluster')

_REFRAME_STUB = '''#!/bin/sh
# records its arguments (NUL-separated), one file per call; runs nothing
n=$(ls "$STUB_LOG" | wc -l)
printf '%s\\0' "$@" > "$STUB_LOG/reframe.$n"
exit 1
'''
_YEEBENCH_STUB = '''#!/bin/sh
n=$(ls "$STUB_LOG" | wc -l)
printf '%s\\0' "$@" > "$STUB_LOG/yeebench.$n"
if [ "$1 $2" = "vcluster exec" ]; then shift 2; [ "$1" = -- ] && shift; exec "$@"; fi
exit 0   # vcluster preflight/status: a cluster this machine can host, already up
'''
# ReFrame options that run, or say where to write; dropped when listing.
_RUN_FLAGS = {'-r', '--run', '-R', '--dry-run'}
_RUN_OPTS_WITH_VALUE = {'--report-file', '--prefix'}


def _stub_venv(tmp: Path) -> Path:
    venv = tmp / 'venv'
    (venv / 'bin').mkdir(parents=True)
    for name, text in (('reframe', _REFRAME_STUB), ('yeebench', _YEEBENCH_STUB)):
        path = venv / 'bin' / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    (venv / '.installed').touch()    # `make venv` is satisfied
    prefix = tmp / 'prefix' / 'bin'
    prefix.mkdir(parents=True)
    for tool in ('yee', 'numa-bw'):  # the stages' "built first?" guards
        (prefix / tool).touch(mode=0o755)
    return venv


def recorded_calls(target: str, tmp: Path):
    """[(program, [args])] of every stand-in call `make TARGET` made, in order."""
    venv = _stub_venv(tmp)
    log = tmp / 'calls'
    log.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ('MAKEFLAGS', 'MFLAGS', 'MAKELEVEL')}
    env.update(STUB_LOG=str(log), YEEBENCH_VENV=str(venv))   # run.sh finds reframe via YEEBENCH_VENV
    subprocess.run(['make', '-s', target, f'VENV={venv}', f'PREFIX={tmp / "prefix"}', f'BUILD={tmp / "build"}',
                    f'ACCEPTANCE_OUT={tmp / "acceptance"}'],
                   cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    calls = sorted(log.iterdir(), key=lambda p: int(p.suffix[1:]))
    return [(p.stem, p.read_bytes().decode().split('\0')[:-1]) for p in calls]


def _option(args, name):
    return args[args.index(name) + 1] if name in args else None


def reframe_commands(target: str, tmp: Path):
    """The ReFrame argument lists the stage TARGET runs (without the program name)."""
    calls = recorded_calls(target, tmp)
    commands = [args for prog, args in calls if prog == 'reframe']
    for prog, args in calls:
        if prog == 'yeebench' and args[:2] == ['vcluster', 'smoke']:
            sys.path.insert(0, str(REPO / 'reframe'))
            from yeebench.vcluster import smoke
            cmd = smoke.reframe_command(str(tmp / 'smoke'), _option(args, '--partitions') or 'vcluster:srun',
                                        '--own-check-only' not in args)
            commands.append(cmd[1:])
    return commands


def listing_args(args):
    """A stage's ReFrame arguments with what runs or writes removed: ready for `--list`."""
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in _RUN_OPTS_WITH_VALUE:
            skip = True
        elif arg in _RUN_FLAGS or any(arg.startswith(o + '=') for o in _RUN_OPTS_WITH_VALUE):
            continue
        else:
            out.append(arg)
    return out


_CASE = re.compile(r'^- (\S+)((?: %\S+=\S+)*) /\w+$')


def listed_cases(text):
    """[(check name, {parameter: value})] of a `reframe --list` output (test cases, not fixtures)."""
    cases = []
    for line in text.splitlines():
        m = _CASE.match(line)
        if m:
            params = dict(p[1:].split('=', 1) for p in m.group(2).split())
            cases.append((m.group(1), params))
    return cases


def selected_cases(target: str, tmp: Path):
    """[(check, params)] the stage TARGET selects, on the systems it names."""
    reframe = Path(sys.executable).parent / 'reframe'
    cases = []
    for i, args in enumerate(reframe_commands(target, tmp)):
        env = dict(os.environ, YEEBENCH_RFM_DIR=str(tmp / f'rfm{i}'))
        out = subprocess.run([str(reframe), *listing_args(args), '--list'], cwd=REPO, env=env,
                             capture_output=True, text=True, timeout=300)
        if out.returncode != 0:
            raise RuntimeError(f'{target}: reframe --list failed: {out.stdout[-2000:]}{out.stderr[-2000:]}')
        cases += listed_cases(out.stdout)
    return cases
