"""Point-to-point latency and bandwidth (papers 000 and 002): NetPIPE and OSU.

Two ranks, on one node (intra) or on two nodes (inter, when the partition has
>= 2 nodes), over Open MPI's ob1+vader, ob1+tcp and UCX.  FOMs: latency at 1 B
and 4 KB (us), peak bandwidth (MB/s, 10^6 B/s), large-message bandwidth (the best
among sizes >= max_size/4: a rate-limited link's token bucket inflates the peak at
mid sizes), n_1/2 (B) and the fitted Hockney alpha (us) and beta (ns/B).
OSU runs with host buffers, and with CUDA device buffers (`buffers=device`) on
partitions with the `gpu` feature when the OSU build supports them.
"""
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, sanity_function, variable

from yeebench import mpi, osu, pt2pt_foms, tools
from yeebench.base import YeebenchCheck
from yeebench.parsers import netpipe, osu as osu_parser


class Pt2PtBase(YeebenchCheck):
    '''Two ranks, one transport, one locality; subclasses say what runs and how to read it.'''

    #: Open MPI transport (keys of yeebench.mpi.TRANSPORTS).
    transport = parameter(list(mpi.TRANSPORTS))

    #: 'intra': both ranks on one node; 'inter': one rank on each of two nodes.
    locality = parameter(['intra', 'inter'])

    #: Largest message size (bytes).
    max_size = variable(int, value=4 * 1024 * 1024)

    tags = {'network', 'full'}
    time_limit = '30m'

    @run_after('init')
    def set_nodes(self):
        self.num_nodes = 2 if self.locality == 'inter' else 1

    @run_after('setup')
    def place_pair(self):
        self.skip_if('openmpi' not in self.environ_features,
                     f'transport {self.transport} is an Open MPI selection; environment '
                     f'{self.current_environ.name} does not have the openmpi feature')
        self.skip_if(self.locality == 'inter' and self.transport in mpi.SHARED_MEMORY_ONLY,
                     f'{self.transport} is shared memory: intra-node only')
        self.num_tasks = 2
        self.num_tasks_per_node = 1 if self.locality == 'inter' else 2
        self.env_vars.update(mpi.TRANSPORTS[self.transport])
        self.job.launcher.options = mpi.pair_options(self.launcher_name, self.locality == 'inter')

    def add_curve_foms(self, sizes, latency_us=None, bandwidth=None, peak_name='peak_bw'):
        '''FOMs from a latency curve (us per message) and/or a bandwidth curve (MB/s).'''
        for name, value, unit, direction in pt2pt_foms.curve_foms(sizes, latency_us, bandwidth, peak_name,
                                                                  self.max_size):
            self.add_fom(name, value, unit, direction)


@rfm.simple_test
class NetPIPEPt2Pt(Pt2PtBase):
    '''NetPIPE ping-pong (Debian netpipe-openmpi: NPopenmpi); all FOMs from one run.'''

    #: Fixed repeats per size (NetPIPE -n); 0 lets NetPIPE pick them per size, which keeps
    #: slow transports (TCP) from taking minutes per large message.
    repeats = variable(int, value=0)

    @run_after('init')
    def smoke_subset(self):
        if self.transport == 'ob1-vader' and self.locality == 'intra':
            self.tags |= {'smoke'}

    @run_after('setup')
    def configure(self):
        path = tools.find_netpipe()
        self.skip_if(path is None, 'NetPIPE not found: no NPopenmpi/NPmpi on PATH '
                                   '(apt-get install netpipe-openmpi) and NETPIPE_HOME not set')
        self.executable = path
        self.executable_opts = ['-o', 'np.out', '-u', str(self.max_size)]
        if self.repeats:
            self.executable_opts += ['-n', str(self.repeats)]
        if 'smoke' in self.tags:
            self.max_size = 64 * 1024
            self.executable_opts = ['-o', 'np.out', '-u', str(self.max_size), '-n', '200']

    @sanity_function
    def assert_complete(self):
        rows = netpipe.parse_np_out(open(os.path.join(self.stagedir, 'np.out')).read())
        progress = netpipe.parse_stderr(open(os.path.join(self.stagedir, str(self.stderr))).read())
        return sn.all([
            sn.assert_ge(rows[-1]['bytes'], self.max_size, 'NetPIPE stopped before the largest size'),
            sn.assert_eq(len(rows), len(progress), 'np.out and the progress lines disagree'),
        ])

    def collect_foms(self):
        rows = netpipe.parse_np_out(open(os.path.join(self.stagedir, 'np.out')).read())
        sizes = [r['bytes'] for r in rows]
        self.add_curve_foms(sizes, [r['latency_us'] for r in rows], [r['bandwidth_MBs'] for r in rows])


@rfm.simple_test
class OsuPt2Pt(Pt2PtBase):
    '''OSU osu_latency / osu_bw / osu_bibw (when OSU is found via OSU_HOME or PATH).'''

    benchmark = parameter(['osu_latency', 'osu_bw', 'osu_bibw'])

    #: 'host' buffers, or 'device': CUDA device buffers on both ranks (OSU's -d cuda ... D D);
    #: device only on partitions with the gpu feature and with an OSU built with CUDA.
    buffers = parameter(['host', 'device'])

    #: Timed iterations / warm-up iterations per size (0: OSU's defaults, fewer for large messages).
    iterations = variable(int, value=0)
    warmup = variable(int, value=0)

    @run_after('init')
    def smoke_subset(self):
        if self.benchmark == 'osu_latency' and self.transport == 'ob1-vader' and self.locality == 'intra':
            self.tags |= {'smoke'}

    @run_after('init')
    def gpu_partitions_only(self):
        if self.buffers == 'device':
            self.valid_systems = ['+mpi +gpu']

    @run_after('setup')
    def configure(self):
        path = tools.find_osu(self.benchmark)
        self.skip_if(path is None, tools.osu_missing_reason(self.benchmark))
        if 'smoke' in self.tags:
            self.max_size, self.iterations, self.warmup = 64 * 1024, 200, 20
        self.executable = path
        self.executable_opts = osu.options(path, self.max_size, self.iterations, self.warmup)
        if self.buffers == 'device':
            self.skip_if(not osu.has_cuda(path), f'{path} was built without CUDA support (no -d cuda)')
            self.executable_opts = osu.device_buffer_options(self.executable_opts, pt2pt=True)

    def table(self):
        return osu_parser.parse(open(os.path.join(self.stagedir, str(self.stdout))).read())

    @sanity_function
    def assert_table(self):
        table = self.table()
        column = 'latency_us' if self.benchmark == 'osu_latency' else 'bandwidth_MBs'
        sizes, _ = table.column(column)
        return sn.all([sn.assert_ge(max(sizes), min(self.max_size, 4096), 'OSU output stops early'),
                       sn.assert_false(table.validation_failed, 'OSU validation failed')])

    def collect_foms(self):
        table = self.table()
        if self.benchmark == 'osu_latency':
            sizes, lat = table.column('latency_us')
            self.add_curve_foms(sizes, latency_us=lat)
        else:
            sizes, bw = table.column('bandwidth_MBs')
            name = 'peak_bibw' if self.benchmark == 'osu_bibw' else 'peak_bw'
            self.add_curve_foms(sizes, bandwidth=bw, peak_name=name)
