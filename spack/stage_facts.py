"""Facts the Spack stage (spack/stage.sh) prints and checks, one line each; exit 1 when a fact is wrong.

    python -m stage_facts lock spack.lock                 specs, externals, what Spack builds
    python -m stage_facts ctest PACKAGE TEST_LOG          build-time ctest counts (none failed, some ran)
    python -m stage_facts test-run LOG                    `spack test run` parts (none failed, some passed)
    python -m stage_facts origins REPORT VIEW PREFIX      every spack case ran binaries from the view
    python -m stage_facts ratio REPORT OUT.json           Spack-built / CMake-built solver Mcells/s (best of each)
    python -m stage_facts provenance INGEST_LOG LOCK      the ingested run carries spack.lock's sha256
"""
import datetime
import hashlib
import json
import os
import re
import sys
import tempfile
from pathlib import Path

from yeebench.results import report_reader
from yeebench.results.errors import ResultsError


class FactError(Exception):
    pass


def lock_summary(lock_path):
    specs = json.loads(Path(lock_path).read_text())['concrete_specs'].values()
    externals = sorted(s['name'] for s in specs if 'external' in s)
    built = sorted(s['name'] for s in specs if 'external' not in s)
    return (f'{len(externals) + len(built)} specs: {len(externals)} external, '
            f'{len(built)} from source ({", ".join(built)})')


def ctest_counts(package, log_path):
    try:
        text = Path(log_path).read_text(errors='replace')
    except OSError:
        raise FactError(f'{package}: no build-time test log {log_path} (installed without --test=root? '
                        f'run `spack -e . install --test=root --overwrite {package}`)')
    found = re.findall(r'(\d+)% tests passed, (\d+) tests? failed out of (\d+)', text)
    if not found:
        raise FactError(f'{package}: no ctest summary in {log_path}')
    failed, total = int(found[-1][1]), int(found[-1][2])
    skipped = len(re.findall(r'\*\*\*Skipped', text))  # ctest's mark on a test's own line
    if failed or total == 0:
        raise FactError(f'{package}: ctest ran {total} tests, {failed} failed ({log_path})')
    built = datetime.datetime.fromtimestamp(Path(log_path).stat().st_mtime, datetime.timezone.utc)
    return (f'{package}: ctest {total} tests, {total - failed - skipped} passed, {skipped} skipped, 0 failed '
            f'(build of {built:%Y-%m-%d %H:%M} UTC)')


def test_run_counts(log_path):
    text = Path(log_path).read_text(errors='replace')
    parts = {k: re.findall(rf'^{k}: (\S+)', text, re.M) for k in ('PASSED', 'FAILED', 'SKIPPED')}
    if parts['FAILED'] or not parts['PASSED']:
        raise FactError(f'spack test run: {len(parts["FAILED"])} failed, {len(parts["PASSED"])} passed '
                        f'({", ".join(parts["FAILED"])}) in {log_path}')
    return (f'spack test run: {len(parts["PASSED"])} passed, {len(parts["SKIPPED"])} skipped, 0 failed '
            f'({", ".join(sorted(set(parts["PASSED"])))})')


def _testcases(report_path):
    report, _ = report_reader.load_report(report_path)
    for _, case in report_reader.iter_testcases(report):
        yield case


def _as_run(path):
    '''A program the solver fixture linked into its stage's bin/ (kept by --keep-stage-files) is the
    link's target; any other path as it was run.'''
    if os.path.islink(path) and os.path.basename(os.path.dirname(path)) == 'bin':
        return os.path.normpath(os.path.join(os.path.dirname(path), os.readlink(path)))
    return path


def _programs(case):
    '''The programs a case measured: its executable, or what a wrapper (numactl ...) runs; for a script
    the case kept with its results (a sweep: `bash sweep.sh`), every executable file the script names.'''
    words = [str(w) for w in [case.get('executable') or '', *(case.get('executable_opts') or [])]]
    script = os.path.join(case.get('outputdir') or '', words[1]) if len(words) > 1 else ''
    if words[0] in ('bash', 'sh') and os.path.isfile(script):
        with open(script) as fh:
            named = [w for w in fh.read().split() if w.startswith('/')]
        found = [w for w in named if os.path.isfile(w) and os.access(w, os.X_OK)]
        if not found:
            raise FactError(f'{case.get("unique_name")}: its script {script} names no program')
        return found
    return [next((w for w in words if w.startswith('/')), words[0])]


#: The tag of a check whose program is built in its own job from the suite's sources (reframe/README.md):
#: it runs no installed program, so where its program came from is not judged.
BUILT_IN_JOB = 'built-in-job'


def origins(report_path, view, prefix):
    '''Every program a -p spack case ran lies in the view; every -p host program in PREFIX; cases
    tagged BUILT_IN_JOB are named in the result as not judged.'''
    view, prefix = os.path.abspath(view), os.path.abspath(prefix)  # the paths as run, not resolved
    counted = {'spack': 0, 'host': 0}
    built_in_job = set()
    for case in _testcases(report_path):
        env = case.get('environ')
        if case.get('result') == 'skip' or env not in counted:
            continue
        if BUILT_IN_JOB in (case.get('tags') or ()):
            built_in_job.add(case.get('unique_name'))
            continue
        where = view if env == 'spack' else prefix
        for exe in _programs(case):
            if not os.path.abspath(exe).startswith(where + os.sep):   # a view's links stay as run
                exe = _as_run(exe)
            if not os.path.abspath(exe).startswith(where + os.sep):
                raise FactError(f'{case.get("unique_name")} in -p {env} ran {exe!r}, not a program in {where}')
        counted[env] += 1
    if not counted['spack']:
        raise FactError(f'no -p spack case ran in {report_path}')
    line = f'programs: {counted["spack"]} -p spack cases from the view {view}, {counted["host"]} -p host from {prefix}'
    if built_in_job:
        line += (f'; not judged, their program is built in the job (tag {BUILT_IN_JOB}): '
                 f'{", ".join(sorted(built_in_job))}')
    return line


SCALING_CHECKS = ('FdtdStrongScaling', 'FdtdWeakScaling')


def mcells_samples(report_path):
    '''{environ: [Mcells/s, ...]} of every 1-core solver run of the scaling checks' smoke cases: a
    1-core case itself, or the 1-core baseline a multi-core case runs first (same grid).'''
    samples = {}
    for case in _testcases(report_path):
        params = report_reader.parameters(case)
        if (report_reader.check_name(case) in SCALING_CHECKS and case.get('result') == 'pass'
                and str(params.get('threads_per_rank')) == '1' and params.get('backend', 'cpu') == 'cpu'):
            layout = (case.get('observations') or {}).get('layout') or {}
            if layout.get('baseline_mcells_per_s'):
                samples.setdefault(case['environ'], []).append(float(layout['baseline_mcells_per_s']))
    missing = {'spack', 'host'} - set(samples)
    if missing:
        raise FactError(f'no passing 1-core {" or ".join(SCALING_CHECKS)} run for -p {", ".join(sorted(missing))} '
                        f'in {report_path}')
    return samples


def write_ratio(report_path, out_path):
    '''Best Spack-built over best CMake-built Mcells/s (best of each: the least disturbed run).'''
    samples = mcells_samples(report_path)
    best = {env: max(values) for env, values in samples.items()}
    doc = {'metric': 'spack_over_cmake_mcells_per_s', 'ratio': best['spack'] / best['host'],
           'spack_mcells_per_s': best['spack'], 'cmake_mcells_per_s': best['host'],
           'samples': {'spack': samples['spack'], 'cmake': samples['host']},
           'runs': '1-core solver runs of the FdtdStrongScaling/FdtdWeakScaling smoke cases (48^3 cells, 30 steps)',
           'report': str(Path(report_path).resolve()), 'load_average': list(os.getloadavg())}
    out = Path(out_path)
    with tempfile.NamedTemporaryFile('w', dir=out.parent, delete=False, suffix='.tmp') as tmp:
        json.dump(doc, tmp, indent=1)
    os.replace(tmp.name, out)
    return (f'Spack/CMake solver Mcells/s = {doc["ratio"]:.3f} (best of {len(samples["spack"])}: '
            f'{best["spack"]:.1f} / best of {len(samples["host"])}: {best["host"]:.1f}, same run, '
            f'load {doc["load_average"][0]:.2f}) -> {out}')


def provenance(ingest_log, lock_path):
    text = Path(ingest_log).read_text()
    dirs = [Path(w) for w in re.findall(r'(\S+)', text) if (Path(w) / 'provenance.json').is_file()]
    if not dirs:
        raise FactError(f'no run directory with provenance.json named in {ingest_log}')
    recorded = json.loads((dirs[-1] / 'provenance.json').read_text())['environment_image']['spack_lock_sha256']
    expected = hashlib.sha256(Path(lock_path).read_bytes()).hexdigest()
    if recorded != expected:
        raise FactError(f'{dirs[-1]}/provenance.json records spack.lock {recorded}, expected {expected}')
    return f'provenance: {dirs[-1]} records spack.lock sha256 {expected[:12]}'


COMMANDS = {'lock': lock_summary, 'ctest': ctest_counts, 'test-run': test_run_counts, 'origins': origins,
            'ratio': write_ratio, 'provenance': provenance}


def main(argv):
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip())
        return 2
    try:
        print(COMMANDS[argv[0]](*argv[1:]))
    except (FactError, ResultsError, OSError, ValueError, KeyError, TypeError) as err:
        print(f'{argv[0]}: {err}')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
