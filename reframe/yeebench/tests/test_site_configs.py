"""The checks under a site's own ReFrame configuration, written the way ReFrame's documentation shows:
every check is listed as with the suite's configuration, and every smoke case runs or skips with a
reason naming what to add; none fails and none vanishes."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
CHECKS = REPO / 'reframe/yeebench/checks'

#: ReFrame's tutorial style: one system, one local partition, the builtin environment, no yeebench keys.
MINIMAL = '''
site_configuration = {
    'systems': [{
        'name': 'tutorialsys',
        'descr': 'Example system',
        'hostnames': ['.*'],
        'partitions': [{'name': 'default', 'scheduler': 'local', 'launcher': 'local',
                        'environs': ['builtin']}],
    }],
    'environments': [{'name': 'builtin', 'cc': 'cc', 'cxx': '', 'ftn': ''}],%s
}
'''

#: As the EESSI test suite's example configuration: Slurm partitions described by features
#: ('cpu', 'gpu', 'nvidia'), a processor entry without caches, GPUs as `devices`.
EESSI_LIKE = '''
site_configuration = {
    'systems': [{
        'name': 'example',
        'descr': 'Example cluster',
        'hostnames': ['.*'],
        'modules_system': 'nomod',
        'partitions': [
            {'name': 'cpu', 'scheduler': 'slurm', 'launcher': 'mpirun', 'access': ['-p cpu', '--export=None'],
             'environs': ['default'], 'max_jobs': 4, 'features': ['cpu'],
             'processor': {'num_cpus': 128, 'num_sockets': 2, 'num_cpus_per_socket': 64, 'num_cpus_per_core': 1},
             'extras': {'mem_per_node': 256000}},
            {'name': 'gpu', 'scheduler': 'slurm', 'launcher': 'mpirun', 'access': ['-p gpu', '--export=None'],
             'environs': ['default'], 'max_jobs': 4, 'features': ['gpu', 'nvidia'],
             'processor': {'num_cpus': 72, 'num_sockets': 1, 'num_cpus_per_socket': 72, 'num_cpus_per_core': 1},
             'resources': [{'name': '_rfm_gpu', 'options': ['--gpus-per-node={num_gpus_per_node}']}],
             'devices': [{'type': 'gpu', 'num_devices': 4}],
             'extras': {'mem_per_node': 512000, 'gpu_vendor': 'nvidia'}},
        ],
    }],
    'environments': [{'name': 'default', 'cc': 'cc', 'cxx': '', 'ftn': ''}],
}
'''

CASE = re.compile(r'^\[\s*(OK|SKIP|FAIL)\s*\] \(\s*\d+/\s*\d+\) (.+?) /([0-9a-f]{8}) @(\S+)(?: \[(.*)\])?$')


def reframe(config, *args, tmp_path):
    exe = Path(sys.executable).parent / 'reframe'
    if not exe.exists():
        pytest.skip('reframe is not installed next to this Python')
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(tmp_path / 'rfm'), YEEBENCH_PREFIX=str(REPO / 'build/install'),
               RFM_COLORIZE='n')
    env.pop('RFM_CONFIG_FILES', None)
    out = subprocess.run([str(exe), '-C', str(config), '-c', str(CHECKS), '-R', *args], capture_output=True,
                         text=True, timeout=600, env=env, cwd=tmp_path)
    return out.returncode, re.sub(r'\x1b\[[0-9;]*m', '', out.stdout + out.stderr)


def site_config(tmp_path, text):
    path = tmp_path / 'site.py'
    path.write_text(text)
    return path


def listed(out):
    found = re.search(r'Found (\d+) check\(s\)', out)
    assert found, out
    return int(found.group(1))


def cases(out):
    '''(result, test, partition, reason, hash) of every test case a run reported.'''
    return [(m[1], m[2], m[4], m[5], m[3]) for m in map(CASE.match, out.splitlines()) if m]


@pytest.fixture(scope='module')
def suite_listing(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('suite')
    rc, out = reframe(REPO / 'reframe/config/settings.py', '--system', 'local', '-l', tmp_path=tmp)
    assert rc == 0, out
    return listed(out)


def assert_run_or_skipped_with_a_reason(rc, out):
    assert rc == 0, out
    found = cases(out)
    assert found, out
    assert not [c for c in found if c[0] == 'FAIL'], out
    silent = [c for c in found if c[0] == 'SKIP' and not c[3]]
    assert not silent, silent
    return found


def test_a_documentation_style_configuration_lists_every_check(tmp_path, suite_listing):
    rc, out = reframe(site_config(tmp_path, MINIMAL % ''), '-l', tmp_path=tmp_path)
    assert rc == 0, out
    assert listed(out) == suite_listing


@pytest.mark.parametrize('general', ['', "\n    'general': [{'remote_detect': True}],"], ids=['plain', 'remote_detect'])
def test_a_documentation_style_configuration_runs_or_skips_every_smoke_case(tmp_path, general):
    rc, out = reframe(site_config(tmp_path, MINIMAL % general), '-t', 'smoke', '-S', 'smoke=true', '--dry-run',
                      tmp_path=tmp_path)
    found = assert_run_or_skipped_with_a_reason(rc, out)
    reasons = [c[3] for c in found if c[0] == 'SKIP']
    # launcher `local` starts one process: the multi-rank cases say so and name the key
    assert any("launches with 'local'" in r and 'set its launcher' in r for r in reasons), reasons
    # what a partition does not declare is never reported as a missing program
    assert not any('apt-get' in r for r in reasons), reasons
    assert not any('has no processor entry' in r for r in reasons), reasons


def test_an_eessi_like_configuration_lists_runs_or_skips_and_requests_gpus(tmp_path, suite_listing):
    config = site_config(tmp_path, EESSI_LIKE)
    rc, out = reframe(config, '-l', '--system', 'example:cpu', tmp_path=tmp_path)
    assert rc == 0 and listed(out) == suite_listing, out
    rc, out = reframe(config, '-l', '--system', 'example:gpu', tmp_path=tmp_path)
    assert rc == 0 and listed(out) > suite_listing, out   # the cuda / device-buffer twins too
    # --flex-alloc-nodes: the acceptance checks' "every node" would ask a Slurm this machine lacks
    rc, out = reframe(config, '-t', 'smoke', '-S', 'smoke=true', '--dry-run', '--flex-alloc-nodes=2',
                      '--prefix', str(tmp_path / 'run'), tmp_path=tmp_path)
    found = assert_run_or_skipped_with_a_reason(rc, out)
    reasons = [c[3] for c in found if c[0] == 'SKIP']
    assert not any('GPUs, partition has 0' in r or 'declares no GPUs' in r for r in reasons), reasons
    assert any("declares no numactl: add 'numactl' to its features" in r for r in reasons), reasons
    cuda = [c for c in found if c[0] == 'OK' and '%backend=cuda' in c[1] and c[2].startswith('example:gpu')]
    assert cuda, out
    # every GPU case asks the scheduler for its GPUs, no CPU case does
    scripts = {p.parent.name: p.read_text() for p in (tmp_path / 'run' / 'stage').rglob('Fdtd*_*/rfm_job.sh')}
    asking = {name for name, text in scripts.items() if '#SBATCH --gpus-per-node=' in text}
    assert asking == {f"{c[1].split()[0]}_{c[4]}" for c in cuda}, (asking, cuda)


def test_nodes_from_the_command_line(tmp_path):
    config = site_config(tmp_path, EESSI_LIKE)
    args = ('-n', 'FdtdNodeScaling', '--system', 'example:cpu', '-S', 'smoke=true', '--dry-run')
    # one node: its single case runs, the efficiency is NOT MEASURED (recorded in the check's observations)
    rc, out = reframe(config, *args, tmp_path=tmp_path)
    assert rc == 0 and [c[0] for c in cases(out) if c[1].startswith('FdtdNodeScaling')] == ['OK'], out
    rc, out = reframe(config, *args, '-S', 'max_nodes=3', tmp_path=tmp_path)
    assert rc == 0 and [c[0] for c in cases(out) if c[1].startswith('FdtdNodeScaling')] == ['OK'], out


def test_the_virtual_cluster_check_skips_elsewhere_when_forced_in(tmp_path):
    rc, out = reframe(site_config(tmp_path, MINIMAL % ''), '-n', 'VclusterNetPIPE', '-S', 'valid_systems=*',
                      '--dry-run', tmp_path=tmp_path)
    found = assert_run_or_skipped_with_a_reason(rc, out)
    assert found and all(c[0] == 'SKIP' and 'runs only on the virtual cluster' in c[3] for c in found), out


def test_the_topology_is_detected_once_per_process_and_simulated_setting(monkeypatch):
    from yeebench import simulated_hardware, topology
    calls = []
    real = topology._detect
    monkeypatch.setattr(topology, '_detect', lambda: calls.append(1) or real())
    monkeypatch.setattr(topology, '_DETECTED', {})
    monkeypatch.delenv(simulated_hardware.ENV, raising=False)
    first = topology.detect()
    first.cores.append([999])                 # a caller's change does not reach the next caller
    assert topology.detect().cores[-1] != [999] and len(calls) == 1
    monkeypatch.setenv(simulated_hardware.ENV, 'cores=4,numa=2')
    assert topology.detect().num_numa_nodes == 2 and len(calls) == 2
    topology.detect()
    assert len(calls) == 2
