"""FDTD scaling (paper 000): the solver over ranks x threads.

  FdtdStrongScaling  one grid, 1..N cores as ranks x threads
  FdtdWeakScaling    a fixed number of cells per core
  FdtdJobBalance     paper 000 Fig. 5: one node, 1/4 .. 2x as many ranks as cores
  FdtdPacking        a node's worth of ranks (3-D automatic split) packed full / half / quarter
                     per node; paper 002's Fig. 3 is FdtdPackingSweep (fdtd_messages.py)
FOMs: Mcells/s, parallel efficiency against a 1-core run in the same job (%),
and the share of time in halo exchange (%).  Sanity: the solver's energy and
checksum are finite and its run is valid (for the baseline run too).

`kernel`: 'fused' (bandwidth-bound) or 'wavefront' (cache-blocked, several steps per pass);
their Mcells/s ratio per system is how much a node gains from its caches.

`backend`: a folder of solver/src/backends; its traits.json says what it is (yeebench.backends).
'cpu' runs `yee`; a GPU backend (e.g. 'cuda': `yee-cuda`, which the SolverBinary fixture finds or
builds on the partition's nodes) runs with one rank per GPU and the run options its traits name,
only on partitions with the `gpu` feature (GPUs per node from its `devices`, else extras.num_gpus,
requested from the scheduler with `num_gpus_per_node`); there `cores_used`
counts GPUs and the efficiency baseline is a 1-GPU run.
"""
import math

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

from yeebench import gpus, launch, scaling, shell
from yeebench.backends import backend_traits
from yeebench.base import YeebenchCheck
from yeebench.fixtures import solver_backends
from yeebench.solver import SMOKE_SOLVER, SolverMixin, keep_output_files

BASELINE_REPORT = 'yee-baseline.json'


class FdtdBase(SolverMixin, YeebenchCheck):
    '''Ranks x threads of the solver plus, when it uses more than one core, a 1-core baseline.'''

    tags = {'app', 'full'}

    #: Kernel backend: 'cpu' (yee) or a GPU backend such as 'cuda' (yee-cuda, one GPU per rank; partitions
    #: with the gpu feature); solver/src/backends/<backend>/traits.json.
    backend = parameter(solver_backends())

    #: Update kernel: 'fused' (one pass over the fields per step: the memory-bandwidth-bound figure) or
    #: 'wavefront' (several steps per pass over cache- or shared-memory-sized tiles: the temporally blocked figure).
    kernel = parameter(['fused', 'wavefront'])

    #: Grid edge of the 1-core baseline (defaults to the run's own grid).
    baseline_grid = variable(int, value=0)

    @property
    def traits(self):
        return backend_traits(self.backend)

    @run_after('init')
    def gpu_partitions_only(self):
        if not self.traits.provides(self.kernel):
            self.valid_systems = []  # a backend without this kernel (its traits.json)
        elif self.traits.is_gpu:
            self.valid_systems = ['+gpu']

    @property
    def gpus_per_node(self):
        '''GPUs per node: the partition's `devices`, else extras.num_gpus (a case skips, naming them, at 0).'''
        count, why = gpus.partition_gpus(self.current_partition)
        self.skip_if(count < 1, why)
        return count

    def solver_options(self, grid=None, report=None):
        # a GPU backend's run options (--gpu-per-rank: an error instead of two ranks silently sharing
        # one GPU) with its default kernel
        extra = list(self.traits.run_options) if self.traits.is_gpu else ['--kernel', self.kernel]
        return super().solver_options(grid, report) + extra

    def layout(self):
        '''(ranks, threads, ranks_per_node) of this case; subclasses define it.'''
        raise NotImplementedError

    @run_after('init')
    def keep_baseline_report(self):
        keep_output_files(self, BASELINE_REPORT)

    @run_after('setup')
    def place(self):
        topology = self.node_topology
        ranks, threads, per_node = self.layout()
        self.skip_if(ranks < 1 or threads < 1, 'empty layout')
        nodes = math.ceil(ranks / per_node)
        why = self.too_few_nodes(nodes)
        self.skip_if(why, f'{ranks} ranks at {per_node} per node: {why}')
        self.skip_if(threads > topology.num_cores,
                     f'{threads} threads per rank exceed the {topology.num_cores} cores of a node')
        if self.traits.is_gpu:
            self.skip_if(per_node > self.gpus_per_node,
                         f'{per_node} ranks per node but {self.gpus_per_node} GPU(s) per node')
            self.require_gpus(per_node)   # one GPU per rank, requested from the scheduler
        if self.backend != 'cpu':  # cpu: `yee`, SolverMixin's executable
            path, why = self.yee.backend_program(self.backend)
            self.skip_if(path is None, why)
            self.executable = path
        self.ranks, self.threads, self.cores = ranks, threads, ranks * threads
        self.apply_packed(ranks, threads, per_node)
        self.executable_opts = self.solver_options()

    def efficiency_cores(self):
        return self.cores

    @run_before('run')
    def baseline_run(self):
        if self.cores > 1:
            opts = self.solver_options(grid=self.baseline_grid or self.grid, report=BASELINE_REPORT)
            prefix = launch.single_core_prefix(self, self.node_topology.num_cores)
            self.prerun_cmds.append(f'OMP_NUM_THREADS=1 {prefix} {shell.words([self.executable, *opts])}')

    @sanity_function
    def assert_valid(self):
        checks = [self.solver_sanity()]
        report = self.read_report()
        checks.append(sn.assert_eq(report['ranks'], self.ranks, 'solver ran a different rank count'))
        checks.append(sn.assert_eq(report['threads'], self.threads, 'solver ran a different thread count'))
        # a report without `backend` comes from a build older than the CUDA backend: cpu
        checks.append(sn.assert_eq(report.get('backend', 'cpu'), self.backend, 'solver ran backend {0}, not {1}'))
        if self.cores > 1:
            checks.append(self.solver_sanity(BASELINE_REPORT))
        return sn.all(checks)

    def collect_foms(self):
        super().collect_foms()
        rate = self.read_report()['mcells_per_s']
        base = self.read_report(BASELINE_REPORT)['mcells_per_s'] if self.cores > 1 else rate
        self.add_fom('parallel_efficiency', 100.0 * scaling.efficiency(rate, self.efficiency_cores(), base), '%',
                     'higher')
        self.observations['layout'] = {'ranks': self.ranks, 'threads': self.threads, 'cores': self.cores,
                                       'baseline_mcells_per_s': base}


CORES = [1, 2, 4, 8, 16, 32, 64, 128]
THREADS = [1, 2, 4]


def _fits(cores, threads):
    return cores % threads == 0


class _ScalingBase(FdtdBase):
    cores_used = parameter(CORES)
    threads_per_rank = parameter(THREADS)

    smoke_overrides = SMOKE_SOLVER

    def is_smoke_case(self):
        return self.threads_per_rank == 1 and self.cores_used <= 2 and self.kernel == 'fused'

    def layout(self):
        if self.traits.is_gpu:
            self.skip_if(self.threads_per_rank != 1, f'{self.backend}: one rank per GPU, host threads add nothing')
            gpus = self.gpus_per_node
            self.skip_if(self.cores_used > gpus * self.partition_nodes,
                         f'needs {self.cores_used} GPUs, partition has {gpus * self.partition_nodes}')
            return self.cores_used, 1, min(self.cores_used, gpus)
        self.skip_if(not _fits(self.cores_used, self.threads_per_rank),
                     f'{self.cores_used} cores are not a multiple of {self.threads_per_rank} threads')
        cores_per_node = self.node_topology.num_cores
        self.skip_if(self.cores_used > cores_per_node * self.partition_nodes,
                     f'needs {self.cores_used} cores, partition has {cores_per_node * self.partition_nodes}')
        ranks = self.cores_used // self.threads_per_rank
        per_node = min(ranks, max(1, cores_per_node // self.threads_per_rank))
        return ranks, self.threads_per_rank, per_node


@rfm.simple_test
class FdtdStrongScaling(_ScalingBase):
    '''The same grid on more cores: efficiency = speed-up / cores.'''


@rfm.simple_test
class FdtdWeakScaling(_ScalingBase):
    '''`grid`^3 cells per core: the grid grows with the core count.'''

    @run_after('setup')
    def grow_grid(self):
        self.baseline_grid = self.grid
        self.grid = round(self.grid * self.cores ** (1.0 / 3.0))
        self.executable_opts = self.solver_options()


@rfm.simple_test
class FdtdJobBalance(FdtdBase):
    '''Paper 000 Fig. 5: one node, single-threaded ranks from a quarter to twice the cores.'''

    load = parameter([0.25, 0.5, 1.0, 1.5, 2.0])

    tags = {'app', 'full', 'node'}
    smoke_overrides = SMOKE_SOLVER

    def is_smoke_case(self):
        return self.load == 1.0 and self.kernel == 'fused' and self.backend == 'cpu'

    def layout(self):
        cores = self.node_topology.num_cores
        ranks = max(1, round(self.load * cores))
        lower = [load for load in (0.25, 0.5, 1.0, 1.5, 2.0) if load < self.load]
        self.skip_if(any(max(1, round(load * cores)) == ranks for load in lower),
                     f'{ranks} ranks on {cores} cores: same as a lower load')
        return ranks, 1, ranks

    def efficiency_cores(self):
        # efficiency against the cores in use, not the (oversubscribed) rank count
        return min(self.ranks, self.node_topology.num_cores)


@rfm.simple_test
class FdtdPacking(FdtdBase):
    '''A node's worth of ranks (3-D automatic split) on all, half or a quarter of each node's cores; not
    paper 002's Fig. 3, which is FdtdPackingSweep (its 1-D split over rank counts, full against half).'''

    packing = parameter(['full', 'half', 'quarter'])

    def layout(self):
        cores = self.node_topology.num_cores
        per_node = {'full': cores, 'half': cores // 2, 'quarter': cores // 4}[self.packing]
        self.skip_if(per_node < 1, f'{cores} cores per node cannot be packed by a {self.packing}')
        return cores, 1, per_node
