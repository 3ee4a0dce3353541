"""Paper 000's comparisons that cannot differ on the hardware they run on (one socket, one NUMA node,
one node) plan their cases but record their ratios NOT MEASURED with the reason; a node of 2 sockets
and 2 NUMA nodes (YEEBENCH_SIMULATE_HW) plans the ratios instead. Dry runs: nothing is launched."""
import json

import pytest

from checkfiles import check_file
from test_suite_checks import run_reframe

ONE = 'llc=32Mi,cores=2,sockets=1,numa=1'
TWO = 'llc=32Mi,cores=2,sockets=2,numa=2'
NAMES = ('FdtdBindingSweep', 'FdtdNumaSweep%placement=per-socket', 'FdtdNodeScaling')


def _planned(tmp_path, layout):
    files = [a for f in ('binding_sweep', 'numa_sweep', 'node_scaling') for a in ('-c', str(check_file(f)))]
    report = tmp_path / 'report.json'
    run_reframe(*files, *(a for n in NAMES for a in ('-n', n)), '--dry-run', '--report-file', str(report),
                tmp_path=tmp_path, env_extra={'YEEBENCH_SIMULATE_HW': layout})
    cases = [c for run in json.loads(report.read_text())['runs'] for c in run['testcases']]
    return {c['name'].split('%')[0].split('_')[0].strip(): c.get('observations') or {} for c in cases
            if c['name'].startswith('Fdtd')}


@pytest.mark.parametrize('layout', [ONE, TWO])
def test_ratios_are_planned_only_where_the_cases_can_differ(tmp_path, layout):
    seen = _planned(tmp_path, layout)
    assert set(seen) == {'FdtdBindingSweep', 'FdtdNumaSweep', 'FdtdNodeScaling'}, seen
    two = layout == TWO
    assert seen['FdtdBindingSweep']['hardware']['sockets_per_node'] == (2 if two else 1)
    binding = seen['FdtdBindingSweep'].get('not_measured', {})
    numa = seen['FdtdNumaSweep'].get('not_measured', {})
    if two:
        assert not binding and not numa
    else:
        assert set(binding) >= {'per_socket_over_per_node'}
        assert 'needs 2 sockets per node' in binding['per_socket_over_per_node']
        assert set(numa) == {'localalloc_over_unpinned', 'interleave_over_unpinned'}
        assert all('needs 2 NUMA nodes per node' in why for why in numa.values())
    # one node either way: node scaling records its one case, its efficiency NOT MEASURED
    scaling = seen['FdtdNodeScaling']
    assert 'not_measured' in scaling, scaling
    assert 'needs 2 nodes' in scaling['not_measured']['efficiency_vs_*_nodes']
    assert '1 node(s)' in scaling.get('efficiency_baseline', ''), scaling
