"""Topology detection and the placement helper: options, rankfiles, and verification."""
from pathlib import Path

import pytest

from yeebench import simulated_hardware, topology
from yeebench.placement import Placement, PlacementError, packed_openmpi_options
from yeebench.parsers import jsonreport

DATA = Path(__file__).parent / 'data'

# two sockets, two NUMA nodes per socket, 2 cores per NUMA node, SMT 2 (CPU n and n+8 share a core)
LSCPU_2S = '# CPU,Core,Socket,Node\n' + ''.join(
    f'{cpu},{cpu % 8},{(cpu % 8) // 4},{(cpu % 8) // 2}\n' for cpu in range(16))


def two_socket():
    return topology.from_lscpu(LSCPU_2S)


def test_cpulist_roundtrip():
    assert topology.parse_cpulist('0-3,8,10-11') == [0, 1, 2, 3, 8, 10, 11]
    assert topology.format_cpulist([0, 1, 2, 3, 8, 10, 11]) == '0-3,8,10-11'
    assert topology.parse_cpulist('') == []
    with pytest.raises(ValueError):
        topology.parse_cpulist('3-1')


def test_hwloc_masks():
    assert topology.hwloc_mask_to_cpus('0x00000003') == [0, 1]
    assert topology.hwloc_mask_to_cpus('0x00000001,0x00000000') == [32]
    assert topology.cpus_to_mask([0, 1, 32]) == hex((1 << 32) | 3)


def test_lscpu_two_sockets_with_smt():
    topo = two_socket()
    assert topo.num_sockets == 2 and topo.num_numa_nodes == 4 and topo.num_cores == 8
    assert topo.cpus_per_core == 2 and topo.cores[0] == [0, 8]
    proc = topo.to_reframe_processor()
    assert proc['num_cpus'] == 16 and proc['num_cpus_per_core'] == 2 and proc['num_sockets'] == 2
    back = topology.Topology.from_reframe_processor(proc)
    assert back.sockets == topo.sockets and back.numa_nodes == topo.numa_nodes and back.cores == topo.cores


def test_recorded_hwloc_and_lscpu_agree():
    hw = topology.from_hwloc_xml((DATA / 'lstopo-2core.xml').read_text())
    ls = topology.from_lscpu((DATA / 'lscpu-2core.txt').read_text())
    assert (hw.sockets, hw.numa_nodes, hw.cores) == (ls.sockets, ls.numa_nodes, ls.cores) == ([[0, 1]], [[0, 1]], [[0], [1]])


def test_processor_without_topology_is_derived_from_counts():
    topo = topology.Topology.from_reframe_processor({'num_cpus': 8, 'num_cpus_per_core': 1, 'num_sockets': 2})
    assert topo.sockets == [[0, 1, 2, 3], [4, 5, 6, 7]] and topo.numa_nodes == topo.sockets


def test_detect_finds_this_machine():
    topo = topology.detect()
    assert topo.num_cores >= 1 and topo.num_sockets >= 1 and topo.num_numa_nodes >= 1
    # YEEBENCH_SIMULATE_HW (test_simulated_hardware.py) stands in for the machine
    real = ('hwloc', 'lscpu', 'guess')
    assert topo.source in (('simulated',) if simulated_hardware.topology_lists() else real)


@pytest.mark.parametrize('kind, threads, ranks, tpr, mpirun', [
    ('per-node', 'fill', 1, 8, ['--map-by', 'ppr:1:node:PE=8', '--bind-to', 'core']),
    ('per-socket', 'fill', 2, 4, ['--map-by', 'ppr:1:socket:PE=4', '--bind-to', 'core']),
    ('per-socket', 2, 2, 2, ['--map-by', 'ppr:1:socket:PE=2', '--bind-to', 'core']),
    ('per-numa', 'fill', 4, 2, ['--map-by', 'ppr:1:numa:PE=2', '--bind-to', 'core']),
    ('per-core', 1, 8, 1, ['--map-by', 'ppr:1:core', '--bind-to', 'core']),
])
def test_openmpi_options(kind, threads, ranks, tpr, mpirun):
    layout = Placement(kind, threads).resolve(two_socket())
    assert layout.ranks_per_node == ranks and layout.threads == tpr
    assert layout.cpus_per_task == 2 * tpr            # SMT siblings come with each core
    assert layout.openmpi_options() == mpirun


def test_object_binding_and_omp_env():
    layout = Placement('per-socket', 1, bind='object').resolve(two_socket())
    assert layout.openmpi_options() == ['--map-by', 'ppr:1:socket', '--bind-to', 'socket']
    assert layout.rank_cpusets() == [sorted(s) for s in two_socket().sockets]
    assert layout.verify(observed(layout.rank_cpusets())) == []
    assert any('not bound to a whole socket' in p for p in layout.verify(observed([[0], [4]])))
    assert layout.omp_env()['OMP_PROC_BIND'] == 'false'
    assert Placement('per-core').resolve(two_socket()).omp_env() == {
        'OMP_NUM_THREADS': '1', 'OMP_PLACES': 'cores', 'OMP_PROC_BIND': 'close'}


def test_srun_options():
    topo = two_socket()
    sock = Placement('per-socket', 'fill').resolve(topo, num_nodes=2)
    assert sock.srun_job_options() == {'num_tasks': 4, 'num_tasks_per_node': 2, 'num_cpus_per_task': 8,
                                       'num_tasks_per_socket': 1}
    assert sock.srun_options() == ['--cpus-per-task=8', '--ntasks-per-socket=1', '--cpu-bind=cores',
                                   '--distribution=block:block']
    numa = Placement('per-numa', 'fill').resolve(topo)
    assert numa.srun_options()[-1] == '--cpu-bind=mask_cpu:' + ','.join(
        topology.cpus_to_mask(c) for c in numa.rank_cpusets())
    ldom = Placement('per-numa', 1, bind='object').resolve(topo)
    assert ldom.srun_options()[-1] == '--cpu-bind=map_ldom:0,1,2,3'


def test_rankfile_physical_cpus():
    layout = Placement('per-socket', 'fill').resolve(two_socket(), num_nodes=2)
    lines = layout.rankfile().splitlines()
    assert lines[0] == 'rank 0=+n0 slot=0-3,8-11'
    assert lines[3] == 'rank 3=+n1 slot=4-7,12-15'
    assert Placement('per-core').resolve(two_socket()).rankfile().splitlines()[1] == 'rank 1=localhost slot=1,9'
    with pytest.raises(PlacementError, match='host names'):
        layout.rankfile(hosts=['a'])


@pytest.mark.parametrize('kwargs, message', [
    ({'kind': 'per-rack'}, 'unknown placement'),
    ({'threads': 0}, 'threads'),
    ({'bind': 'tight'}, 'binding'),
    ({'ranks_per_object': 0}, 'ranks_per_object'),
])
def test_bad_placements(kwargs, message):
    with pytest.raises(PlacementError, match=message):
        Placement(**kwargs)


def test_placement_too_big_for_the_object():
    with pytest.raises(PlacementError, match='needs 4 cores per numa, the numa has 2'):
        Placement('per-numa', 4).resolve(two_socket())


def observed(sets, host='n1'):
    return [{'rank': r, 'host': host, 'cpus': cpus} for r, cpus in enumerate(sets)]


def test_verify_accepts_the_requested_placement():
    layout = Placement('per-socket', 'fill').resolve(two_socket())
    assert layout.verify(observed(layout.rank_cpusets())) == []
    # per-thread records of the same rank are merged
    threads = [{'rank': 0, 'host': 'n1', 'cpus': [0, 8]}, {'rank': 0, 'host': 'n1', 'cpus': [1, 9]},
               {'rank': 0, 'host': 'n1', 'cpus': [2, 10, 3, 11]}, {'rank': 1, 'host': 'n1', 'cpus': [4, 5, 6, 7, 12, 13, 14, 15]}]
    assert layout.verify(threads) == []


def test_verify_reports_each_kind_of_difference():
    topo = two_socket()
    sock = Placement('per-socket', 'fill').resolve(topo)
    assert 'not inside one socket' in sock.verify(observed([[3, 4, 11, 12, 0, 8, 1, 9], [5, 6, 7, 13, 14, 15, 2, 10]]))[0]
    assert any('1 ranks observed, 2 requested' in p for p in sock.verify(observed([[0, 1, 2, 3, 8, 9, 10, 11]])))
    core = Placement('per-core').resolve(topo)
    sets = core.rank_cpusets()
    sets[1] = sets[0]
    assert any('shares CPUs' in p for p in core.verify(observed(sets)))
    assert any('ranks per core' in p for p in core.verify(observed(sets)))
    pe = Placement('per-numa', 'fill').resolve(topo)
    short = [s[:2] for s in pe.rank_cpusets()]
    assert any('2 CPUs, 4 requested' in p for p in pe.verify(observed(short)))
    two = Placement('per-core').resolve(topo, num_nodes=2)
    assert any('1 host(s), 2 requested' in p for p in two.verify(observed(two.rank_cpusets() * 2)))


def test_verify_recorded_affinity_output():
    report = jsonreport.parse_probe((DATA / 'json' / 'affinity-per-core.json').read_text(), 'affinity')
    topo = topology.from_lscpu((DATA / 'lscpu-2core.txt').read_text())
    host = report['placement'][0]['host']
    assert Placement('per-core').resolve(topo).verify(report['placement']) == []
    problems = Placement('per-node', 'fill').resolve(topo).verify(report['placement'])
    assert problems and f'{host}: 2 ranks, 1 requested per node' in problems


def test_packed_options():
    assert packed_openmpi_options(2, 1, 2) == ['--map-by', 'core', '--bind-to', 'core']
    assert packed_openmpi_options(1, 2, 2) == ['--map-by', 'slot:PE=2', '--bind-to', 'core']
    assert packed_openmpi_options(4, 1, 2) == ['--oversubscribe', '--bind-to', 'none']
