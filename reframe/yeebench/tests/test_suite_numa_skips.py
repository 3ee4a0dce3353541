"""NUMA checks: listed and skipped with the true reason when numactl is missing or the policy is refused."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
NUMA = REPO / 'reframe/yeebench/checks/numa/numa.py'
REFUSING_NUMACTL = f'''#!/bin/sh
# numactl as inside `docker run` without CAP_SYS_NICE: topology queries work, policies are refused
case "$1" in --hardware|-H) exec {shutil.which('numactl') or 'false'} "$@" ;; esac
echo "set_mempolicy: Operation not permitted" >&2
exit 1
'''


def reframe(*args, tmp_path, path, expect_rc=0):
    exe = Path(sys.executable).parent / 'reframe'
    if not exe.exists():
        pytest.skip('reframe is not installed next to this Python')
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(tmp_path / 'rfm'), PATH=path,
               YEEBENCH_PREFIX=str(REPO / 'build/install'))
    out = subprocess.run([str(exe), '-C', str(REPO / 'reframe/config/settings.py'), '--system', 'local',
                          '-c', str(NUMA), *args], capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    assert out.returncode == expect_rc, out.stdout + out.stderr
    return out.stdout + out.stderr


def path_without_numactl(tmp_path):
    '''PATH as now, with every directory's numactl hidden (a bin directory of links to everything else).'''
    shadow = tmp_path / 'bin'
    shadow.mkdir()
    for d in os.environ['PATH'].split(os.pathsep):
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            if name != 'numactl' and not (shadow / name).exists():
                (shadow / name).symlink_to(os.path.join(d, name))
    return str(shadow)


def test_without_numactl_the_cases_are_listed_and_skip_with_the_reason(tmp_path):
    path = path_without_numactl(tmp_path)
    listing = reframe('-l', '--mode', 'smoke', tmp_path=tmp_path, path=path)
    assert '- NumaBandwidth %policy=localalloc' in listing and '- NumaSolver %policy=localalloc' in listing
    out = reframe('-n', 'NumaBandwidth', '--mode', 'smoke', '--dry-run', tmp_path=tmp_path, path=path)
    assert out.count('partition local:default has no numactl: numactl is not on PATH') >= 2, out


def test_a_refused_memory_policy_skips_with_numactls_error(tmp_path):
    if not os.access(REPO / 'build/install/bin/numa-bw', os.X_OK) or not shutil.which('numactl'):
        pytest.skip('needs numactl and build/install/bin/numa-bw (make build)')
    fake = tmp_path / 'fake'
    fake.mkdir()
    (fake / 'numactl').write_text(REFUSING_NUMACTL)
    (fake / 'numactl').chmod(0o755)
    out = reframe('-n', 'NumaBandwidth%policy=localalloc', '-r', tmp_path=tmp_path,
                  path=f'{fake}{os.pathsep}{os.environ["PATH"]}')
    assert 'SKIP' in out and 'the memory policy cannot be set here: set_mempolicy: Operation not permitted' in out
    assert 'numa-bw.json' not in out


#: numactl that lets the launch host's probe (`numactl ARGS true`) through and refuses in the job: the
#: partition looks able to set the policy, the node is not (a remote node the launch host cannot probe).
REFUSING_IN_THE_JOB = f'''#!/bin/sh
for last; do :; done
case "$1" in --hardware|-H) exec {shutil.which('numactl') or 'false'} "$@" ;; esac
[ "$last" = true ] && exec {shutil.which('numactl') or 'false'} "$@"
echo "set_mempolicy: Operation not permitted" >&2
exit 1
'''


def test_a_policy_refused_only_in_the_job_skips_with_numactls_error(tmp_path):
    if not os.access(REPO / 'build/install/bin/numa-bw', os.X_OK) or not shutil.which('numactl'):
        pytest.skip('needs numactl and build/install/bin/numa-bw (make build)')
    fake = tmp_path / 'fake'
    fake.mkdir()
    (fake / 'numactl').write_text(REFUSING_IN_THE_JOB)
    (fake / 'numactl').chmod(0o755)
    out = reframe('-n', 'NumaBandwidth%policy=localalloc', '--mode', 'smoke', '-r', tmp_path=tmp_path,
                  path=f'{fake}{os.pathsep}{os.environ["PATH"]}')
    assert 'SKIP' in out and 'FAIL' not in out, out
    assert 'the memory policy cannot be set on the node: set_mempolicy: Operation not permitted' in out, out


def test_numactl_failure_finds_the_refused_call():
    sys.path.insert(0, str(REPO / 'reframe/yeebench/checks/numa'))
    try:
        import numa
    finally:
        sys.path.pop(0)
    assert numa.numactl_failure('x\nset_mempolicy: Operation not permitted\n') == \
        'set_mempolicy: Operation not permitted'
    assert numa.numactl_failure('numa-bw: triad 12 GB/s\n') is None
