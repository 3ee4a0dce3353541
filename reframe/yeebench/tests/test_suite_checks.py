"""The check files load cleanly and every experiment family has a smoke case (listing only, no runs)."""
import json
import os
import shlex
import re
import subprocess
import sys
from pathlib import Path

import pytest

from checkfiles import CHECKS, check_file
from test_suite_gpu import TWO_H100, fake_smi

REPO = Path(__file__).resolve().parents[3]
FAMILIES = ('pt2pt', 'collectives', 'binding', 'numa', 'fdtd', 'io')  # check files of those names


def run_reframe(*args, tmp_path, nvidia_smi=None, env_extra=None, expect_rc=0, system='local'):
    '''ReFrame on system local; `nvidia_smi`: sh script of a stand-in nvidia-smi put first on PATH.'''
    reframe = Path(sys.executable).parent / 'reframe'
    if not reframe.exists():
        pytest.skip('reframe is not installed next to this Python')
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(tmp_path))
    if nvidia_smi is not None:
        env['PATH'] = f'{fake_smi(tmp_path, nvidia_smi)}{os.pathsep}{env["PATH"]}'
    env.update(env_extra or {})
    cmd = [str(reframe), '-C', str(REPO / 'reframe/config/settings.py'), '--system', system, *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    assert out.returncode == expect_rc, out.stdout + out.stderr
    return out


def list_checks(*args, tmp_path, nvidia_smi=None):
    out = run_reframe('-l', *args, tmp_path=tmp_path, nvidia_smi=nvidia_smi)
    return out.stdout + out.stderr


def listed(text):
    return [line for line in text.splitlines() if line.startswith('- ')]


def describe(*args, tmp_path):
    '''The checks' variables after their init hooks (reframe --describe), as a list of dicts.'''
    return json.loads(run_reframe('--describe', *args, tmp_path=tmp_path).stdout)


def test_every_family_loads_and_has_smoke_checks(tmp_path):
    files = [arg for f in FAMILIES for arg in ('-c', str(check_file(f)))]
    text = list_checks(*files, '--mode', 'smoke', tmp_path=tmp_path, nvidia_smi='exit 9')   # no GPU
    assert 'WARNING' not in text and 'skipping test file' not in text, text
    cases = listed(text)
    for prefix in ('NetPIPEPt2Pt', 'OsuPt2Pt', 'OsuCollective', 'AffinityPlacement', 'SolverPlacement',
                   'NumaBandwidth', 'NumaSolver', 'FdtdStrongScaling', 'FdtdWeakScaling', 'IoOutput'):
        assert any(line.startswith(f'- {prefix} ') for line in cases), f'no smoke case of {prefix}'
    assert len(cases) <= 16, 'the smoke set grew: keep it within 5 minutes on 2 cores'


def test_full_set_is_parameterised(tmp_path):
    text = list_checks('-c', str(REPO / 'reframe/yeebench/checks/pt2pt/pt2pt.py'), '-t', 'full', tmp_path=tmp_path,
                       nvidia_smi='exit 9')
    # NetPIPE + 4 OSU benchmarks (host buffers only without a GPU), x 3 transports x 2 localities
    assert len(listed(text)) == (1 + 4) * 3 * 2
    with_gpu = list_checks('-c', str(REPO / 'reframe/yeebench/checks/pt2pt/pt2pt.py'), '-t', 'full', tmp_path=tmp_path,
                           nvidia_smi=TWO_H100)
    # ... and with a GPU each OSU benchmark also with device buffers
    assert len(listed(with_gpu)) == (1 + 4 * 2) * 3 * 2


GPU_CASE = ('%backend=cuda', '%buffers=device')
GPU_FILES = ('fdtd', 'pt2pt', 'collectives')


def test_gpu_cases_only_on_gpu_partitions(tmp_path):
    files = [arg for f in GPU_FILES for arg in ('-c', str(check_file(f)))]
    no_gpu = listed(list_checks(*files, '--mode', 'smoke', tmp_path=tmp_path, nvidia_smi='exit 9'))
    gpu = listed(list_checks(*files, '--mode', 'smoke', tmp_path=tmp_path, nvidia_smi=TWO_H100))
    assert not [line for line in no_gpu if any(p in line for p in GPU_CASE)]
    added = [line for line in gpu if line not in no_gpu]
    assert all(any(p in line for p in GPU_CASE) for line in added)
    for prefix in ('FdtdStrongScaling %backend=cuda', 'FdtdWeakScaling %backend=cuda'):
        assert sum(line.startswith(f'- {prefix} ') for line in added) == 2, added   # 1 and 2 GPUs
    assert any(line.startswith('- OsuPt2Pt ') and '%buffers=device' in line for line in added)
    assert any(line.startswith('- OsuCollective ') and '%buffers=device' in line for line in added)
    assert len(gpu) == len(no_gpu) + 6


# (check file, check name, files each of its cases must keep in the output directory)
KEPT_REPORTS = [
    ('fdtd.py', 'FdtdStrongScaling', {'yee-report.json', 'yee-baseline.json'}),
    ('binding.py', 'SolverPlacement', {'yee-report.json', 'affinity.json'}),
    ('binding.py', 'AffinityPlacement', {'affinity.json'}),
    ('numa.py', 'NumaSolver', {'yee-report.json'}),
    ('numa.py', 'NumaBandwidth', {'numa-bw.json'}),
    ('io.py', 'IoOutput', {'yee-report.json'}),
]


@pytest.mark.parametrize('checkfile,name,files', KEPT_REPORTS, ids=[k[1] for k in KEPT_REPORTS])
def test_json_reports_are_kept_for_provenance(checkfile, name, files, tmp_path):
    # ReFrame deletes a passing test's stage directory: only keep_files reach the output directory,
    # where `yeebench results ingest` looks for build info and observed bindings.
    cases = describe('-c', str(check_file(checkfile)), '-n', f'^{name}',
                     '--mode', 'smoke', tmp_path=tmp_path)
    assert cases, f'no smoke case of {name}'
    for case in cases:
        assert files <= set(case['keep_files']), (case['display_name'], case['keep_files'])


def test_cuda_case_fails_when_the_solver_runs_another_backend(tmp_path):
    # a stand-in GPU and a "yee-cuda" that is the CPU build: the run must fail on the report's backend
    yee = REPO / 'build/install/bin/yee'
    if not os.access(yee, os.X_OK):
        pytest.skip('build/install/bin/yee is not built (make build)')
    fake_bin = tmp_path / 'bin'
    fake_bin.mkdir()
    (fake_bin / 'yee').symlink_to(yee)
    # the CPU build refuses --gpu-per-rank itself: the stand-in drops it, so the run reaches the report
    stand_in = fake_bin / 'yee-cuda'
    stand_in.write_text('#!/bin/bash\nargs=()\nfor a in "$@"; do [[ $a == --gpu-per-rank ]] || args+=("$a"); done\n'
                        f'exec {shlex.quote(str(yee))} "${{args[@]}}"\n')
    stand_in.chmod(0o755)
    out = run_reframe('-c', str(REPO / 'reframe/yeebench/checks/fdtd/fdtd.py'), '-n', r'FdtdStrongScaling.*cuda.*cores_used=1\b',
                      '-r', tmp_path=tmp_path, nvidia_smi=TWO_H100,
                      env_extra={'YEEBENCH_PREFIX': str(tmp_path)}, expect_rc=1)
    assert 'solver ran backend cpu, not cuda' in out.stdout, out.stdout


def _results(out):
    '''{(display name prefix, partition): (result word, rest of line)} from ReFrame's progress lines.'''
    found = {}
    for line in re.sub(r'\x1b\[[0-9;]*m', '', out.stdout).splitlines():
        m = re.match(r'\[\s*(OK|SKIP|FAIL)\s*\] \(\s*\d+/\d+\) (\S+) .*@(\S+)\+\S+(.*)$', line)
        if m:
            found.setdefault((m.group(2), m.group(3)), []).append((m.group(1), m.group(4)))
    return found


def test_dry_run_of_the_smoke_set(tmp_path):
    out = run_reframe('-c', str(CHECKS), '-R', '--mode', 'smoke', '--dry-run', tmp_path=tmp_path,
                      nvidia_smi='exit 9')
    assert not [k for k, v in _results(out).items() if any(r == 'FAIL' for r, _ in v)], out.stdout


def test_vcluster_srun_partition_skips_the_binding_checks(tmp_path):
    # srun on the virtual cluster cannot bind CPUs (extras.cpu_binding False); mpirun there can
    out = run_reframe('-c', str(REPO / 'reframe/yeebench/checks/binding/binding.py'), '--mode', 'smoke', '--dry-run',
                      tmp_path=tmp_path, env_extra={'YEEBENCH_VCLUSTER_DIR': str(tmp_path / 'no-cluster')},
                      system='vcluster')
    results = _results(out)
    for check in ('AffinityPlacement', 'SolverPlacement'):
        srun = results[check, 'vcluster:srun']
        assert srun and all(r == 'SKIP' and 'declares no CPU binding' in rest for r, rest in srun), srun
        assert all(r == 'OK' for r, _ in results[check, 'vcluster:mpirun']), results
