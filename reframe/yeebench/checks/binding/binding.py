"""Rank and thread placement (paper 000): per-node / per-socket / per-numa / per-core x threads.

Each placement is realised with launcher options (mpirun --map-by ppr:N:<obj>:PE=M,
or an Open MPI rankfile as in paper 000; srun --cpus-per-task/--cpu-bind) and
then checked: the `affinity` probe reports every rank's and thread's CPU set,
and the check fails when they are not what was requested.  The solver variant
records Mcells/s per placement (the affinity probe runs first in the same job).
"""
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, sanity_function

from yeebench import launch
from yeebench.base import YeebenchCheck
from yeebench.placement import Placement, PlacementError
from yeebench.solver import SMOKE_SOLVER, AffinityProbeMixin, SolverMixin
from yeebench.topology import format_cpulist

# (placement, threads per rank, binding): 'core' pins a rank to exactly its threads'
# cores, 'object' to its whole socket / NUMA node (paper 000's rank-per-socket runs).
LAYOUTS = [
    ('per-node', 'fill', 'core'), ('per-node', 1, 'core'),
    ('per-socket', 'fill', 'core'), ('per-socket', 1, 'core'), ('per-socket', 1, 'object'),
    ('per-numa', 'fill', 'core'), ('per-numa', 1, 'object'),
    ('per-core', 1, 'core'),
]
SMOKE = {('affinity', ('per-core', 1, 'core'), 'map-by'),
         ('affinity', ('per-socket', 'fill', 'core'), 'rankfile'),
         ('yee', ('per-node', 'fill', 'core'), 'map-by')}


class BindingBase(AffinityProbeMixin, YeebenchCheck):
    '''One placement; `resolved` is its Layout on the current partition.'''

    layout = parameter(LAYOUTS, fmt=lambda x: f'{x[0]}:{x[1]}:{x[2]}')

    #: 'map-by': mpirun --map-by/--bind-to (or srun options); 'rankfile': an Open MPI rankfile.
    method = parameter(['map-by', 'rankfile'])

    tags = {'node', 'full'}

    app = 'affinity'

    def is_smoke_case(self):
        return (self.app, self.layout, self.method) in SMOKE

    @run_after('setup')
    def place(self):
        self.skip_if(self.current_partition.extras.get('cpu_binding') is False,
                     f'partition {self.current_partition.fullname} declares no CPU binding '
                     f'(extras.cpu_binding: false), so placements cannot be realised')
        if self.method == 'rankfile':
            unsupported = launch.rankfile_unsupported(self)
            self.skip_if(unsupported, unsupported)
        kind, threads, bind = self.layout
        try:
            self.resolved = Placement(kind, threads, bind=bind).resolve(self.node_topology, self.num_nodes)
        except PlacementError as err:
            self.skip(str(err))
        self.apply_layout(self.resolved, rankfile='ranks.txt' if self.method == 'rankfile' else None)

    def placement_problems(self, report):
        problems = self.resolved.verify(report['placement'])
        if report.get('threads_per_rank', self.resolved.threads) != self.resolved.threads:
            problems.append(f'{report["threads_per_rank"]} threads per rank, {self.resolved.threads} requested')
        observed = {}
        for rec in report['placement']:
            observed.setdefault(f'{rec.get("host", "?")}/{rec["rank"]}', set()).update(rec.get('cpus') or [])
        self.observations['placement'] = {
            'requested': f'{self.layout[0]} x {self.resolved.threads} threads, bind {self.layout[2]}',
            'ranks': self.resolved.num_tasks, 'problems': problems,
            'observed_cpus': {k: format_cpulist(v) for k, v in sorted(observed.items())}}
        return problems


@rfm.simple_test
class AffinityPlacement(BindingBase):
    '''The affinity probe alone: fails unless every rank/thread sits where requested.'''

    @run_after('setup')
    def set_probe(self):
        self.executable = self.probes.paths['affinity']
        self.executable_opts = ['--output', self.affinity_file]

    @sanity_function
    def assert_placement(self):
        problems = self.placement_problems(self.observed_affinity())
        return sn.assert_false(problems, 'placement differs: ' + '; '.join(problems))


@rfm.simple_test
class SolverPlacement(SolverMixin, BindingBase):
    '''The solver under each placement: Mcells/s, with the placement verified in the same job.'''

    app = 'yee'
    smoke_overrides = SMOKE_SOLVER

    @run_before('run')
    def probe_first(self):
        self.record_affinity_before_run()

    @sanity_function
    def assert_valid_and_placed(self):
        problems = self.placement_problems(self.observed_affinity())
        report = self.read_report()
        if report.get('threads') != self.resolved.threads:
            problems.append(f'solver ran {report.get("threads")} threads per rank, '
                            f'{self.resolved.threads} requested')
        if report.get('ranks') != self.resolved.num_tasks:
            problems.append(f'solver ran {report.get("ranks")} ranks, {self.resolved.num_tasks} requested')
        return sn.all([self.solver_sanity(),
                       sn.assert_false(problems, 'placement differs: ' + '; '.join(problems))])
