"""Hardware-dependent tests under simulated machines of this kind (YEEBENCH_SIMULATE_HW): each one
sizes itself from what it detects or skips naming the fact it lacks, whatever the CPU.

The layouts: the development machine (AMD EPYC, 32 MiB L3), a KVM Intel Xeon reporting a 260 MiB L3,
and shapes CI never meets (one core with four NUMA nodes, a small cache on two sockets)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from yeebench import simulated_hardware, topology
from yeebench import scaling
from yeebench.results import host_info

REPO = Path(__file__).resolve().parents[3]
MiB = 2**20

LAYOUTS = {
    'epyc-32MiB-llc': 'llc=32Mi,cores=2,numa=1',
    'xeon-260MiB-llc': 'llc=260Mi,cores=2,numa=1',
    'one-core-four-numa': 'llc=260Mi,cores=1,numa=4',
    'small-cache-two-sockets': 'llc=8Mi,cores=2,sockets=2,numa=2',
}

# The tests that read the machine's cache, cores or NUMA nodes (the hardware audit in reframe/README.md).
SENSITIVE = [
    'reframe/yeebench/results/tests/test_results_plausibility.py',
    'reframe/yeebench/results/tests/test_results_ingest.py',
    'reframe/yeebench/tests/test_smoke_set.py::test_smoke_numa_bw_arrays_are_four_times_the_last_level_cache',
    'reframe/yeebench/tests/test_suite_config.py',
    'reframe/yeebench/tests/test_suite_placement.py',
]


def test_the_override_parses_strictly():
    assert simulated_hardware.parse('llc=260Mi, cores=1,numa=4') == {'llc': 260 * MiB, 'cores': 1, 'numa': 4}
    assert simulated_hardware.parse('mem=8G') == {'mem': 8 * 10**9}
    assert simulated_hardware.parse('') == {}
    for bad in ('llc=lots', 'cores=0', 'cores=-1', 'l3=32Mi', 'llc', 'numa=2.5', 'llc=0'):
        with pytest.raises(ValueError, match=simulated_hardware.ENV):
            simulated_hardware.parse(bad)


def test_every_detection_reports_the_simulated_machine(monkeypatch):
    monkeypatch.setenv(simulated_hardware.ENV, 'llc=260Mi,cores=1,numa=4,mem=2Gi')
    topo = topology.detect()
    assert (topo.num_cores, topo.num_numa_nodes, topo.source) == (1, 4, 'simulated')
    assert topo.numa_nodes == [[0], [], [], []]     # nodes beyond the cores hold memory only
    assert host_info.llc_bytes() == scaling.llc_from_sysfs()[0] == 260 * MiB
    assert host_info.memory_bytes() == 2 * 2**30
    monkeypatch.setenv(simulated_hardware.ENV, 'llc=8Mi,cores=4,sockets=2,numa=2')
    topo = topology.detect()
    assert topo.sockets == topo.numa_nodes == [[0, 1], [2, 3]]
    monkeypatch.setenv(simulated_hardware.ENV, 'llc=32Mi')   # the cache alone: the real topology stays
    assert topology.detect().source != 'simulated' and host_info.llc_bytes() == 32 * MiB


def test_an_explicit_sysfs_path_is_never_simulated(monkeypatch, tmp_path):
    monkeypatch.setenv(simulated_hardware.ENV, 'llc=260Mi')
    assert scaling.llc_from_sysfs(str(tmp_path))[0] is None
    assert host_info.llc_bytes(str(tmp_path)) is None


def _env(layout, tmp_path):
    return dict(os.environ, **{simulated_hardware.ENV: LAYOUTS[layout]}, YEEBENCH_RFM_DIR=str(tmp_path),
                YEEBENCH_PREFIX=str(REPO / 'build/install'))


@pytest.mark.parametrize('layout', LAYOUTS)
def test_the_hardware_sensitive_tests_pass_on(layout, tmp_path):
    proc = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-rs', *SENSITIVE],
                          cwd=REPO, env=_env(layout, tmp_path), capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert ' passed' in proc.stdout and ' failed' not in proc.stdout, proc.stdout[-2000:]


@pytest.mark.parametrize('layout', LAYOUTS)
def test_the_smoke_set_sizes_itself_or_skips_with_a_reason_on(layout, tmp_path):
    report = tmp_path / 'report.json'
    proc = subprocess.run([str(Path(sys.executable).parent / 'reframe'), '-C', 'reframe/config/settings.py',
                           '-c', 'reframe/yeebench/checks', '-R', '--system', 'local', '--mode', 'smoke', '--dry-run',
                           '--report-file', str(report)],
                          cwd=REPO, env=_env(layout, tmp_path), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    cases = [c for run in json.loads(report.read_text())['runs'] for c in run['testcases']]
    skipped = [c for c in cases if c['result'] == 'skip']
    assert len(cases) > len(skipped), 'every smoke case skipped'
    for case in skipped:
        reason = (case.get('observations') or {}).get('skip_reason') or case.get('fail_reason')
        assert reason and reason.strip(), f"{case['display_name']} skipped without a reason"
