"""One-job comparisons: commands interleaved over rounds, reports read back, best round, same work."""
import json

import pytest

from yeebench import sweeps

CASES = [sweeps.Case('per-node', 'mpirun -np 2 --map-by ppr:1:node', {'OMP_NUM_THREADS': '4'}),
         sweeps.Case('per-core', 'mpirun -np 8 --map-by ppr:4:node', {'OMP_NUM_THREADS': '1'},
                     wrapper=('numactl', '--localalloc'))]


def test_commands_interleave_rounds_and_name_their_reports():
    lines = sweeps.commands(CASES, '/opt/yee', ['--n', '96', '--steps', '100'], rounds=2)
    assert len(lines) == 4
    assert lines[0] == ('env OMP_NUM_THREADS=4 mpirun -np 2 --map-by ppr:1:node /opt/yee --n 96 --steps 100 '
                        '--report case-per_node-r0.json')
    assert lines[1].startswith('env OMP_NUM_THREADS=1 mpirun -np 8 --map-by ppr:4:node numactl --localalloc /opt/yee')
    assert [line.rsplit(' ', 1)[1] for line in lines] == ['case-per_node-r0.json', 'case-per_core-r0.json',
                                                    'case-per_node-r1.json', 'case-per_core-r1.json']
    with pytest.raises(sweeps.SweepError, match='rounds'):
        sweeps.commands(CASES, 'yee', [], rounds=0)
    with pytest.raises(sweeps.SweepError, match='distinct'):
        sweeps.commands([CASES[0], sweeps.Case('per_node', '')], 'yee', [], rounds=1)


def _report(rate, grid=96, steps=100, ranks=2, threads=4, valid=True):
    return {'valid': valid, 'mcells_per_s': rate, 'grid': {'nx': grid, 'ny': grid, 'nz': grid}, 'steps': steps,
            'ranks': ranks, 'threads': threads}


def test_best_round_per_case_and_missing_reports(tmp_path):
    for name, rates in (('per-node', (10, 30)), ('per-core', (20, 5))):
        for rnd, rate in enumerate(rates):
            (tmp_path / sweeps.report_file(name, rnd)).write_text(json.dumps(_report(rate, ranks=2 if name == 'per-node' else 8,
                                                                              threads=4 if name == 'per-node' else 1)))
    reports = sweeps.read_reports(tmp_path, CASES, 2)
    assert {k: r['mcells_per_s'] for k, r in sweeps.best(reports).items()} == {'per-node': 30, 'per-core': 20}
    assert sweeps.same_work(sweeps.best(reports)) == []
    # an output comparison keeps each case's fastest output round, not its fastest solver round
    slowest = sweeps.best(reports, lambda r: -r['mcells_per_s'])
    assert {k: r['mcells_per_s'] for k, r in slowest.items()} == {'per-node': 10, 'per-core': 5}
    with pytest.raises(sweeps.SweepError, match='case per-node, round 2: no readable report case-per_node-r2.json'):
        sweeps.read_reports(tmp_path, CASES, 3)
    (tmp_path / sweeps.report_file('per-core', 1)).write_text(json.dumps(_report(1, valid=False)))
    with pytest.raises(sweeps.SweepError, match='per-core, round 1: the solver says INVALID'):
        sweeps.read_reports(tmp_path, CASES, 2)


def test_same_work_names_the_cases_that_differ():
    problems = sweeps.same_work({'a': _report(1), 'b': _report(1, grid=48), 'c': _report(1, ranks=4, threads=2)})
    assert len(problems) == 1 and "b: (('nx', 48)" in problems[0]
    assert sweeps.same_work({'a': _report(1), 'c': _report(1, ranks=8, threads=1)}) == []


def _stage(tmp_path, keep=()):
    from types import SimpleNamespace
    return SimpleNamespace(stagedir=str(tmp_path), keep_files=list(keep), executable=None, executable_opts=[],
                           job=SimpleNamespace(launcher=None))


def test_run_sweep_stops_at_the_first_failure_only_when_asked(tmp_path):
    test = _stage(tmp_path, keep=['case-a-r0.json'])
    sweeps.run_sweep(test, ['run a', 'run b'], stop_at_first_failure=True, keep=['case-a-r0.json', 'case-b-r0.json'])
    assert (tmp_path / sweeps.SCRIPT).read_text() == 'set -e\nrun a\nrun b\n'
    assert test.keep_files == ['case-a-r0.json', 'sweep.sh', 'case-b-r0.json']   # each file once
    assert (test.executable, test.executable_opts) == ('bash', ['sweep.sh'])
    assert test.job.launcher.registered_name == 'local'
    sweeps.run_sweep(test, ['run a'])
    assert (tmp_path / sweeps.SCRIPT).read_text() == 'run a\n'


def test_node_counts_double_up_to_the_partition_and_include_it():
    assert sweeps.node_counts(1) == [1]
    assert sweeps.node_counts(3) == [1, 2, 3]
    assert sweeps.node_counts(16) == [1, 2, 4, 8, 16]
    assert sweeps.node_counts(18) == [1, 2, 4, 8, 16, 18]
    assert sweeps.node_counts(4, [4, 2, 9, 0]) == [2, 4]   # those asked for that the partition holds


def test_a_case_on_fewer_nodes_is_named_with_its_count_and_back():
    assert sweeps.counted('per-socket', 4, 4) == 'per-socket'
    name = sweeps.counted('per-socket-rankfile', 2, 4)
    assert name == 'per-socket-rankfile@2-nodes' and sweeps.uncounted(name) == 'per-socket-rankfile'
    assert sweeps.report_file(name, 0) == 'case-per_socket_rankfile_2_nodes-r0.json'
