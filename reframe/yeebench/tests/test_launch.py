"""yeebench.launch owns every launcher difference: option rendering per launcher, and no other file
of the check library naming a launcher."""
import ast
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from yeebench import launch

REFRAME = Path(__file__).resolve().parents[2]
# The check library and the checks; the virtual cluster's daemon tooling, the results tooling and
# `config from-slurm` (siteconfig) run Slurm, record host facts or write a site's configuration: they
# choose no launcher options for a check.
SCANNED = [REFRAME / 'yeebench']  # the checks are in yeebench/checks/
EXEMPT = {REFRAME / 'yeebench' / 'launch.py'}
EXEMPT_DIRS = [REFRAME / 'yeebench' / d for d in ('vcluster', 'results', 'siteconfig')]
LAUNCHER_WORD = re.compile(r'(?<![\w-])(mpirun|mpiexec|srun)(?![\w-])')


def _docstring_nodes(tree):
    nodes = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, 'body', [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                nodes.add(id(body[0].value))
    return nodes


def launcher_names_in(path):
    '''(line, text) of every launcher name in code (strings that are not docstrings, names).'''
    tree = ast.parse(path.read_text(), str(path))
    docs = _docstring_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if LAUNCHER_WORD.search(node.value):
                found.append((node.lineno, node.value))
        elif isinstance(node, ast.Name) and node.id == 'MPIRUN_LAUNCHERS':
            found.append((node.lineno, node.id))
    return found


def scanned_files():
    for root in SCANNED:
        for path in sorted(root.rglob('*.py')):
            if path in EXEMPT or 'tests' in path.parts or any(d in path.parents for d in EXEMPT_DIRS):
                continue
            yield path


def test_no_launcher_name_outside_the_launch_module():
    offenders = [f'{p.relative_to(REFRAME)}:{line}: {text!r}'
                 for p in scanned_files() for line, text in launcher_names_in(p)]
    assert not offenders, 'launcher names outside yeebench/launch.py:\n' + '\n'.join(offenders)


def test_the_scan_finds_a_launcher_test(tmp_path):
    # the scan itself can fail: a comparison with a launcher name is found, a docstring is not
    sample = tmp_path / 'sample.py'
    sample.write_text('"""Runs under mpirun."""\n'
                      'def f(test):\n    """srun too."""\n    return test.name == "mpiexec"\n')
    assert launcher_names_in(sample) == [(4, 'mpiexec')]


def fake_test(launcher_name, num_tasks=2):
    launcher = SimpleNamespace(registered_name=launcher_name, options=[])
    partition = SimpleNamespace(launcher_type=SimpleNamespace(registered_name=launcher_name))
    return SimpleNamespace(current_partition=partition, job=SimpleNamespace(launcher=launcher),
                           prerun_cmds=[], num_tasks=num_tasks)


@pytest.mark.parametrize('name, fam', [('mpirun', 'mpirun'), ('mpiexec', 'mpirun'), ('srun', 'srun'),
                                       ('local', ''), ('ssh', '')])
def test_launcher_families(name, fam):
    assert launch.family(name) == fam


def test_mpiexec_is_treated_as_mpirun():
    # defect: the 1-core baseline tested == 'mpirun' and left mpiexec's baseline unpinned
    for name in ('mpirun', 'mpiexec'):
        assert launch.single_core_prefix(fake_test(name), 2) == f'{name} -np 1 --bind-to core'
    assert launch.single_core_prefix(fake_test('srun'), 2) == 'srun -n 1 --kill-on-bad-exit=1'
    assert launch.single_core_prefix(fake_test('local'), 2) == ''


def test_prefix_oversubscribes_only_past_the_cores():
    assert launch.prefix(fake_test('mpirun'), 2, ['--map-by', 'core'], 2) == 'mpirun -np 2 --map-by core'
    assert launch.prefix(fake_test('mpirun'), 4, [], 2) == 'mpirun -np 4 --oversubscribe'
    assert launch.prefix(fake_test('srun'), 4, ['--cpu-bind=cores'], 2) == 'srun -n 4 --kill-on-bad-exit=1 --cpu-bind=cores'


def test_packed_and_unbound_options():
    t = fake_test('mpirun')
    launch.apply_packed(t, 2, 1, 2, ['OMP_NUM_THREADS', 'OMPI_MCA_pml'])
    assert t.job.launcher.options == ['--map-by', 'ppr:2:node', '--bind-to', 'core', '-x', 'OMP_NUM_THREADS']
    launch.apply_packed(t, 4, 1, 2, [])
    assert t.job.launcher.options == ['--bind-to', 'none', '--oversubscribe']
    s = fake_test('srun')
    launch.apply_packed(s, 4, 1, 2, [])
    assert s.job.launcher.options == ['--overcommit', '--cpu-bind=none']
    launch.apply_unbound(s)
    assert s.job.launcher.options == ['--cpu-bind=none']
    loc = fake_test('local')
    launch.apply_unbound(loc, ['OMP_NUM_THREADS'])
    assert loc.job.launcher.options == []


def test_options_of_extra_runs_set_nothing_on_the_job():
    from yeebench.placement import Placement
    from yeebench.topology import Topology
    topo = Topology.from_reframe_processor({   # 2 sockets x 2 cores
        'num_cpus': 4, 'num_cpus_per_core': 1, 'num_sockets': 2, 'num_cpus_per_socket': 2,
        'topology': {'numa_nodes': ['0x3', '0xc'], 'sockets': ['0x3', '0xc'], 'cores': ['0x1', '0x2', '0x4', '0x8']}})
    layout = Placement('per-socket', 'fill').resolve(topo, 2)
    t = fake_test('mpirun')
    before = list(t.job.launcher.options)
    assert launch.layout_options(t, layout, 4, ['OMP_NUM_THREADS']) == [
        '--map-by', 'ppr:1:socket:PE=2', '--bind-to', 'core', '-x', 'OMP_NUM_THREADS']
    assert launch.spread_unbound_options(t, 2, 2, ['OMP_NUM_THREADS']) == [
        '--map-by', 'ppr:2:node', '--bind-to', 'none', '-x', 'OMP_NUM_THREADS']
    assert launch.packed_options(t, 2, 4) == ['--map-by', 'ppr:2:node', '--bind-to', 'core']
    assert launch.packed_options(t, 8, 4) == ['--map-by', 'ppr:8:node', '--bind-to', 'none', '--oversubscribe']
    assert t.job.launcher.options == before
    s = fake_test('srun')
    # an extra srun step is told its own nodes: inside the job it would spread over all of them
    assert launch.layout_options(s, layout, 4) == ['--nodes=2', '--ntasks-per-node=2'] + layout.srun_options()
    assert launch.layout_options(s, Placement('per-socket', 'fill').resolve(topo, 1), 4)[:2] == \
        ['--nodes=1', '--ntasks-per-node=2']
    assert launch.spread_unbound_options(s, 2, 2) == ['--ntasks-per-node=2', '--cpus-per-task=2', '--cpu-bind=none']
    assert launch.packed_options(s, 2, 4) == ['--ntasks-per-node=2', '--cpu-bind=cores']
    assert launch.packed_options(fake_test('local'), 2, 4) == []


def test_rankfiles_and_fail_fast():
    assert launch.rankfile_unsupported(fake_test('mpiexec')) is None
    assert 'launches with srun' in launch.rankfile_unsupported(fake_test('srun'))
    assert launch.fail_fast_options(fake_test('srun')) == ['--kill-on-bad-exit=1']
    assert launch.fail_fast_options(fake_test('mpirun')) == []


def test_rankfile_options_for_an_extra_run_follow_the_partitions_launcher():
    from yeebench.placement import Placement
    from yeebench.topology import Topology
    layout = Placement('per-core').resolve(Topology(sockets=[[0, 1]], numa_nodes=[[0, 1]], cores=[[0], [1]]))
    test = fake_test('mpirun')
    test.job.launcher.registered_name = 'local'            # a sweep's job runs its script locally
    assert launch.rankfile_options(test, 'rf.txt', layout, 2, ['OMP_NUM_THREADS']) == \
        ['--rankfile', 'rf.txt', '--mca', 'rmaps_rank_file_physical', '1', '-x', 'OMP_NUM_THREADS']
    assert launch.rankfile_unsupported(test, for_prefix=True) is None
    assert launch.rankfile_options(fake_test('srun'), 'rf.txt', layout, 2) is None
    assert 'launches with srun' in launch.rankfile_unsupported(fake_test('srun'), for_prefix=True)


def test_packed_node_prefix_per_launcher():
    assert launch.packed_node_prefix(fake_test('mpiexec'), 2, 1, 2) == 'mpiexec -np 2 --map-by core --bind-to core'
    assert (launch.packed_node_prefix(fake_test('srun'), 1, 2, 2)
            == 'srun -n 1 --kill-on-bad-exit=1 -N 1 --cpus-per-task=2 --cpu-bind=cores')


def test_the_container_launch_line_binds_only_what_the_cores_hold():
    assert launch.container_mpirun(2, 2) == 'mpirun -np 2 --oversubscribe --bind-to core'
    assert launch.container_mpirun(2, 1) == 'mpirun -np 2 --oversubscribe --bind-to none'
    assert launch.container_mpirun(2) == 'mpirun -np 2 --oversubscribe --bind-to core'   # cores unknown


def test_an_srun_step_ends_when_one_rank_dies():
    # a rank that crashed once left the others of a 32-rank srun step polling until the job's time limit
    assert '--kill-on-bad-exit=1' in launch.prefix(fake_test('srun'), 32, ['--nodes=16'], 2).split()
    assert '--kill-on-bad-exit=1' not in launch.prefix(fake_test('mpirun'), 32, [], 2)
