"""MPI collectives (paper 004): OSU osu_allreduce / osu_bcast / osu_alltoall.

Swept over message sizes x process counts x Open MPI collective implementation (each process
count packed a rank per core onto as few nodes as hold it, observations['nodes']; the curve over
1, 2, 4 ... nodes in one job, paper 004's axis, is OsuCollectiveNodeCurve's in osu_node_curve.py
beside this file, and the solver's is FdtdCollectiveProfile's):
coll/tuned with its own decisions, tuned with forced algorithms, han, basic, ucc and hcoll (the
UCC and HCOLL components, successors of paper 004's FCA: where `ompi_info` on the compute node
lists no such component the case is skipped with that reason, as FdtdCollectiveProfile does).
Every implementation but `tuned` also runs the same benchmark under coll/tuned in the same job
(TUNED_FILE) and records latency_<size>B_over_tuned (x, time over tuned's: < 1 is faster).
FOMs per size (yeebench.curve_foms.SIZE_FAMILIES: the gate judges them as a curve): latency (us) and,
for allreduce and alltoall, efficiency (%) against a lower
bound of what OSU measures (mean over ranks of each rank's own call time), built from an
osu_latency ping-pong repeated `pingpong_repeats` times in the same job; the model, its source
and why bcast has none are in bounds.py beside this file.  An efficiency over 100% beyond
the ping-pong's noise fails the case.  The ping-pong curves are kept with the case's output.
Skipped, with the places searched, where the partition has no OSU (yeebench.capabilities).
`buffers=device`: CUDA device buffers (OSU's -d cuda), only on partitions with the
`gpu` feature and with an OSU built with CUDA.
Ranks sharing a node first probe single-copy (CMA) inside the job and run with it on or off (the
`single_copy` parameter of the figures, yeebench.single_copy); an MPI error line on stderr fails the case.
"""

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

from yeebench import capabilities, curve_foms
from yeebench.checks.collectives import bounds as collective_bounds
from yeebench import launch, mpi, osu, shell, single_copy
from yeebench.base import YeebenchCheck
from yeebench.parsers import osu as osu_parser
from yeebench.single_copy_check import SingleCopyDecided
from yeebench.stage_files import read_stage_file

CASES = [(c, impl) for c in osu.collectives() for impl in mpi.implementations(c)]

#: The same benchmark under coll/tuned, in the same job, for the ratio to tuned.
TUNED_FILE = 'tuned.txt'
#: Written on the compute node when its Open MPI lacks the case's coll component (the reason).
MISSING_FILE = 'coll-missing.txt'


def pingpong_file(i):
    return f'pingpong-{i}.txt'


@rfm.simple_test
class OsuCollective(SingleCopyDecided, YeebenchCheck):
    '''One OSU collective benchmark, one implementation, one process count.'''

    case = parameter(CASES, fmt=lambda c: f'{c[0]}:{c[1]}')

    #: MPI processes.
    num_procs = parameter([2, 4, 8, 16, 32, 64])

    #: 'host' buffers, or 'device': CUDA device buffers (OSU's -d cuda), also for the ping-pong
    #: behind alpha/beta; device only on partitions with the gpu feature and an OSU built with CUDA.
    buffers = parameter(['host', 'device'])

    #: Largest message size (bytes).
    max_size = variable(int, value=1024 * 1024)

    #: Timed / warm-up iterations per size (0: OSU's defaults).
    iterations = variable(int, value=0)
    warmup = variable(int, value=0)

    #: osu_latency runs before the collective (the bound uses the minimum over them), and the
    #: timed / warm-up iterations of each (OSU's default, 10000 below 8 KB, adds nothing to a minimum).
    pingpong_repeats = variable(int, value=3)
    pingpong_iterations = variable(int, value=200)
    pingpong_warmup = variable(int, value=20)

    tags = {'network', 'full'}
    smoke_overrides = {'max_size': 4096, 'iterations': 50, 'warmup': 5}

    def is_smoke_case(self):
        return self.case == ('allreduce', 'tuned') and self.num_procs == 2

    @run_after('init')
    def gpu_partitions_only(self):
        if self.buffers == 'device':
            self.valid_systems = ['+gpu']

    @property
    def collective(self):
        return self.case[0]

    @run_after('setup')
    def configure(self):
        path, why = capabilities.osu_benchmark(self.current_partition, osu.collective_benchmark(self.collective))
        self.skip_if(path is None, why)
        self.require_openmpi(f'implementation {self.case[1]}')
        available = self.node_topology.num_cores * self.partition_nodes
        self.skip_if(self.num_procs > available,
                     f'{self.num_procs} processes need {self.num_procs} cores, partition has {available}')
        self.env_vars.update(mpi.collective_env(self.collective, self.case[1]))
        self.apply_packed(self.num_procs, 1, min(self.num_procs, self.node_topology.num_cores))
        self.observations['osu'] = {'path': path, 'origin': capabilities.osu_origin(self.current_partition)}
        # packed a rank per core: the process count sets the nodes (paper 004's axis)
        self.observations['nodes'] = -(-self.num_procs // self.num_tasks_per_node)
        self.executable = path
        self.executable_opts = osu.options(self.max_size, self.iterations, self.warmup)
        self.pingpong, _ = capabilities.osu_benchmark(self.current_partition, osu.PINGPONG)
        if self.buffers == 'device':
            benchmark = osu.collective_benchmark(self.collective)
            self.skip_if(not osu.benchmark(benchmark).device_buffers,
                         f'{benchmark} takes no CUDA device buffers (yeebench.osu.BENCHMARKS)')
            self.require_gpus(self.num_tasks_per_node or 1)
            self.skip_if(not capabilities.osu_has_cuda(self.current_partition), capabilities.NO_OSU_CUDA)
            self.executable_opts = osu.device_buffer_options(self.executable_opts, pt2pt=False)
        if self.pingpong:
            self.keep_files = [pingpong_file(i) for i in range(1, self.pingpong_repeats + 1)]
        self.single_copy_probed = self.partition_nodes == 1 or self.num_tasks_per_node >= 2

    @run_before('run', always_last=True)
    def tuned_twin_and_component_guard(self):
        impl = self.case[1]
        if impl != 'tuned':
            tuned = mpi.collective_env(self.collective, 'tuned')
            unset = [k for k in mpi.collective_env(self.collective, impl) if k not in tuned]
            prefix = self.launch_prefix(self.num_tasks, list(self.job.launcher.options))
            self.prerun_cmds.append(' '.join(['env', *(f'-u {k}' for k in unset),
                                              *(f'{k}={shell.quote(v)}' for k, v in tuned.items()),
                                              prefix, shell.words([self.executable, *self.executable_opts]),
                                              '>', TUNED_FILE]))
            self.keep_files = list(self.keep_files or []) + [TUNED_FILE]
        if impl in mpi.OPTIONAL_COMPONENTS:   # first, before anything runs: no component, nothing to measure
            self.prerun_cmds.insert(0, f"if ! {mpi.has_component_test(impl)}; then echo 'this Open MPI has no "
                                       f"coll/{impl} component (ompi_info)' > {MISSING_FILE}; exit 0; fi")

    def single_copy_probe_argv(self):
        size = single_copy.PROBE_BYTES   # osu_latency, else the collective itself on 2 ranks (host buffers)
        return [self.pingpong or self.executable] + osu.options(size, 2, 1, min_size=size)

    @run_before('run')
    def pingpong_first(self):
        """T1(n) of the bound: osu_latency on the fastest path the collective uses, repeated."""
        if not self.pingpong:
            return
        # two ranks on one node whenever a node holds two of the collective's ranks
        inter = self.num_tasks_per_node == 1 and self.partition_nodes > 1
        prefix = self.launch_prefix(2, launch.pair_options(launch.partition_launcher(self), inter))
        opts = osu.options(self.max_size, self.pingpong_iterations, self.pingpong_warmup)
        if self.buffers == 'device':
            opts = osu.device_buffer_options(opts, pt2pt=True)
        for i in range(1, self.pingpong_repeats + 1):
            self.prerun_cmds.append(f'{prefix} {shell.words([self.pingpong, *opts])} > {shell.quote(pingpong_file(i))}')

    def table(self, name=None):
        return osu_parser.parse(read_stage_file(self, name or self.stdout))

    def measured_pingpong(self):
        if not self.pingpong:
            return None
        return collective_bounds.PingPong([self.table(pingpong_file(i)).column('latency_us')
                                           for i in range(1, self.pingpong_repeats + 1)])

    def efficiencies(self):
        pingpong = self.measured_pingpong()
        if pingpong is None:
            return []
        sizes, lat = self.table().column('latency_us')
        return collective_bounds.efficiencies(self.collective, self.num_procs, sizes, lat, pingpong)

    @sanity_function
    def assert_table(self):
        missing = read_stage_file(self, MISSING_FILE, default=None)
        if missing is not None:   # the node's MPI lacks the implementation (written by the job)
            self.skip(missing.strip())
        sizes, lat = self.table().column('latency_us')
        over = [e for e in self.efficiencies() if e.beyond_noise]
        return sn.all([self.assert_no_mpi_errors(),
                       sn.assert_gt(2 * max(sizes), self.max_size,
                                    f'OSU output stops before the largest size {self.max_size} B'),
                       sn.assert_true(all(t > 0 for t in lat), 'non-positive latency in OSU output'),
                       sn.assert_false(over, over[0].reason(self.collective) if over else '')])

    def collect_foms(self):
        sizes, lat = self.table().column('latency_us')
        for size, t in zip(sizes, lat):
            self.add_fom(curve_foms.size_metric('latency', size), t, 'us', 'lower')
        if self.case[1] != 'tuned':   # the same sizes under coll/tuned, same job and ranks
            tuned = dict(zip(*self.table(TUNED_FILE).column('latency_us')))
            for size, t in zip(sizes, lat):
                if tuned.get(size, 0) > 0:
                    self.add_fom(f'latency_{size}B_over_tuned', t / tuned[size], 'x', 'lower')
        pingpong = self.measured_pingpong()
        if pingpong is None:
            return
        alpha, beta = pingpong.alpha_beta()
        self.observations['alpha_beta'] = {'alpha_us': alpha, 'beta_ns_per_B': beta * 1e3,
                                           'pingpong_repeats': self.pingpong_repeats}
        if self.collective in collective_bounds.UNBOUNDED_REASON:
            self.observations['efficiency'] = collective_bounds.UNBOUNDED_REASON[self.collective]
        for e in self.efficiencies():
            self.add_fom(curve_foms.size_metric('efficiency', e.size), e.percent, '%', 'higher')
