"""MPI collectives (paper 004): OSU osu_allreduce / osu_bcast / osu_alltoall.

Swept over message sizes x process counts x Open MPI collective implementation:
coll/tuned with its own decisions, tuned with forced algorithms, han, basic.
FOMs per size: latency (us) and efficiency against the alpha-beta lower bound (%),
with alpha and beta fitted to an osu_latency ping-pong run in the same job.
Skipped, with the reason, when OSU is not found (OSU_HOME or PATH).
`buffers=device`: CUDA device buffers (OSU's -d cuda), only on partitions with the
`gpu` feature and with an OSU built with CUDA.
"""
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

from yeebench import fits, mpi, osu, tools
from yeebench.base import YeebenchCheck
from yeebench.parsers import osu as osu_parser

CASES = [(c, impl) for c in ('allreduce', 'bcast', 'alltoall') for impl in mpi.implementations(c)]
PINGPONG = 'pingpong.txt'


@rfm.simple_test
class OsuCollective(YeebenchCheck):
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

    tags = {'network', 'full'}

    @run_after('init')
    def smoke_subset(self):
        if self.case == ('allreduce', 'tuned') and self.num_procs == 2:
            self.tags |= {'smoke'}

    @run_after('init')
    def gpu_partitions_only(self):
        if self.buffers == 'device':
            self.valid_systems = ['+mpi +gpu']

    @property
    def collective(self):
        return self.case[0]

    @run_after('setup')
    def configure(self):
        benchmark = f'osu_{self.collective}'
        path = tools.find_osu(benchmark)
        self.skip_if(path is None, tools.osu_missing_reason(benchmark))
        self.skip_if('openmpi' not in self.environ_features,
                     f'implementation {self.case[1]} is an Open MPI coll selection; environment '
                     f'{self.current_environ.name} does not have the openmpi feature')
        available = self.node_topology.num_cores * self.partition_nodes
        self.skip_if(self.num_procs > available,
                     f'{self.num_procs} processes need {self.num_procs} cores, partition has {available}')
        if 'smoke' in self.tags:
            self.max_size, self.iterations, self.warmup = 4096, 50, 5
        self.env_vars.update(mpi.collective_env(self.collective, self.case[1]))
        self.apply_packed(self.num_procs, 1, min(self.num_procs, self.node_topology.num_cores))
        self.executable = path
        self.executable_opts = osu.options(path, self.max_size, self.iterations, self.warmup)
        self.pingpong = tools.find_osu('osu_latency')
        if self.buffers == 'device':
            self.skip_if(not osu.has_cuda(path), f'{path} was built without CUDA support (no -d cuda)')
            self.executable_opts = osu.device_buffer_options(self.executable_opts, pt2pt=False)
            if self.pingpong and not osu.has_cuda(self.pingpong):
                self.pingpong = None     # a host-buffer alpha/beta would not describe device transfers

    @run_before('run')
    def pingpong_first(self):
        '''alpha and beta of the alpha-beta model, from a ping-pong over the same transport.'''
        if self.pingpong:
            inter = self.partition_nodes > 1 and self.num_procs > self.node_topology.num_cores
            launch = self.launch_prefix(2, mpi.pair_options(self.launcher_name, inter))
            opts = osu.options(self.pingpong, self.max_size, self.iterations, self.warmup)
            if self.buffers == 'device':
                opts = osu.device_buffer_options(opts, pt2pt=True)
            opts = ' '.join(opts)
            self.prerun_cmds.append(f'{launch} {self.pingpong} {opts} > {PINGPONG}')

    def table(self, name=None):
        with open(os.path.join(self.stagedir, name or str(self.stdout))) as fh:
            return osu_parser.parse(fh.read())

    @sanity_function
    def assert_table(self):
        sizes, lat = self.table().column('latency_us')
        return sn.all([sn.assert_ge(max(sizes), min(self.max_size, 1024), 'OSU output stops early'),
                       sn.assert_true(all(t > 0 for t in lat), 'non-positive latency in OSU output')])

    def collect_foms(self):
        sizes, lat = self.table().column('latency_us')
        model = None
        if self.pingpong and os.path.exists(os.path.join(self.stagedir, PINGPONG)):
            psizes, plat = self.table(PINGPONG).column('latency_us')
            pts = [(n, t) for n, t in zip(psizes, plat) if n > 0]
            model = fits.hockney_fit([n for n, _ in pts], [t for _, t in pts])
            self.observations['alpha_beta'] = {'alpha_us': model[0], 'beta_ns_per_B': model[1] * 1e3}
        for size, t in zip(sizes, lat):
            self.add_fom(f'latency_{size}B', t, 'us', 'lower')
            if model:
                bound = fits.collective_lower_bound_us(self.collective, self.num_procs, size, *model)
                self.add_fom(f'efficiency_{size}B', 100.0 * bound / t, '%', 'higher')
