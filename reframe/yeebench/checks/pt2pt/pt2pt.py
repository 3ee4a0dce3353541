"""Point-to-point latency and bandwidth (papers 000 and 002): NetPIPE and OSU.

Two ranks, on one node (intra) or on two nodes (inter, when the partition has
>= 2 nodes), over Open MPI's ob1+vader, ob1+tcp and UCX.  FOMs: latency at 1 B
and 4 KB (us), peak bandwidth (MB/s, 10^6 B/s), large-message bandwidth (the best
among sizes >= max_size/4: a rate-limited link's token bucket inflates the peak at
mid sizes), n_1/2 (B) and the fitted Hockney alpha (us) and beta (ns/B); a figure at a size
the curve did not reach is not reported.  The measured curve is recorded too, a figure per size
(curve_latency_<n>B us, curve_bw_<n>B MB/s: what the benchmark measured, yeebench.curve_foms.size_foms),
so the gate judges every size.  osu_mbw_mr adds the peak message rate.
The smoke set (declared with `is_smoke_case`/`smoke_overrides`) runs smaller sweeps only under
`--mode smoke`.  OSU runs with host buffers, and with CUDA device buffers (`buffers=device`) on
partitions with the `gpu` feature when the OSU build supports them.
An intra-node pair over vader or UCX first probes single-copy (CMA) inside its job and runs with it
on or off (the `single_copy` parameter of its figures, yeebench.single_copy); an MPI error line on
stderr fails the case. The probe's output stays in its own files, and the outputs are read from the
job's measured-run marker on (yeebench.parsers.measured_run): NetPIPE's sanity compares np.out with
the sizes the measured run started on stderr, however other output cut its progress lines.
"""

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, run_after, sanity_function, variable

from yeebench import capabilities, launch, mpi, osu, single_copy
from yeebench import curve_foms
from yeebench.base import YeebenchCheck
from yeebench.parsers import netpipe, osu as osu_parser
from yeebench.single_copy_check import SingleCopyDecided
from yeebench.stage_files import read_stage_file


class Pt2PtBase(SingleCopyDecided, YeebenchCheck):
    '''Two ranks, one transport, one locality; subclasses say what runs and how to read it.'''

    #: Open MPI transport (keys of yeebench.mpi.TRANSPORTS).
    transport = parameter(list(mpi.TRANSPORTS))

    #: 'intra': both ranks on one node; 'inter': one rank on each of two nodes.
    locality = parameter(['intra', 'inter'])

    #: Largest message size (bytes).
    max_size = variable(int, value=4 * 1024 * 1024)

    #: Nominal rate of the link an inter-node pair crosses (bits/s; the partition's extras.link_rate_bps),
    #: recorded so ingest can flag a bandwidth above it; None when intra-node or undeclared.
    link_rate_bps = variable(float, int, type(None), value=None)

    tags = {'network', 'full'}
    time_limit = '30m'

    @run_after('init')
    def set_nodes(self):
        self.num_nodes = 2 if self.locality == 'inter' else 1

    @run_after('setup')
    def place_pair(self):
        self.require_openmpi(f'transport {self.transport}')
        self.skip_if(self.locality == 'inter' and self.transport in mpi.SHARED_MEMORY_ONLY,
                     f'{self.transport} is shared memory: intra-node only')
        cores = self.node_topology.num_cores
        # two ranks time-sharing one core measure the scheduler, and --bind-to core refuses them
        self.skip_if(self.locality == 'intra' and cores < 2,
                     f'an intra-node pair needs 2 cores, a node of {self.current_partition.fullname} has {cores}')
        self.num_tasks = 2
        self.num_tasks_per_node = 1 if self.locality == 'inter' else 2
        self.env_vars.update(mpi.TRANSPORTS[self.transport])
        launch.apply_pair(self, self.locality == 'inter')
        if self.locality == 'inter':
            self.link_rate_bps = self.current_partition.extras.get('link_rate_bps')
        self.single_copy_probed = self.locality == 'intra'

    def single_copy_transport(self):
        return self.transport

    def add_curve_foms(self, sizes, latency_us=None, bandwidth=None, peak_name='peak_bw'):
        '''FOMs from a latency curve (us per message) and/or a bandwidth curve (MB/s): the summary,
        then the measured curve itself, a figure per size (curve_latency_<n>B, curve_bw_<n>B).'''
        for name, value, unit, direction in curve_foms.curve_foms(sizes, latency_us, bandwidth, peak_name,
                                                                  self.max_size):
            self.add_fom(name, value, unit, direction)
        for name, value, unit, direction in curve_foms.size_foms(sizes, latency_us, bandwidth):
            self.add_fom(name, value, unit, direction)


@rfm.simple_test
class NetPIPEPt2Pt(Pt2PtBase):
    '''NetPIPE ping-pong (Debian netpipe-openmpi: NPopenmpi); all FOMs from one run.'''

    #: Fixed repeats per size (NetPIPE -n); 0 lets NetPIPE pick them per size, which keeps
    #: slow transports (TCP) from taking minutes per large message.
    repeats = variable(int, value=0)

    smoke_overrides = {'max_size': 64 * 1024, 'repeats': 200}

    def is_smoke_case(self):
        return self.transport == 'ob1-vader' and self.locality == 'intra'

    @run_after('setup')
    def configure(self):
        path, why = capabilities.netpipe(self.current_partition)
        self.skip_if(path is None, why)
        self.executable = path
        self.executable_opts = ['-o', 'np.out', '-u', str(self.max_size)]
        if self.repeats:
            self.executable_opts += ['-n', str(self.repeats)]

    def single_copy_probe_argv(self):
        size = str(single_copy.PROBE_BYTES)
        return [self.executable, '-o', 'single-copy-probe.np', '-l', size, '-u', size, '-n', '2', '-p', '0']

    def netpipe_curve(self):
        '''The run's curve, from np.out.'''
        return netpipe.curve(read_stage_file(self, 'np.out'))

    @sanity_function
    def assert_complete(self):
        # only the measured run's progress is compared: the probe's output stays in its own files and
        # before the job's marker, and other output cutting a progress line drops no size from the count
        np_out = read_stage_file(self, 'np.out')
        problem = netpipe.measured_run_problem(np_out, read_stage_file(self, str(self.stderr)))
        return sn.all([
            self.assert_no_mpi_errors(),
            sn.assert_ge(netpipe.curve(np_out).max_size, self.max_size, 'NetPIPE stopped before the largest size'),
            sn.assert_false(problem, f'np.out and the progress lines disagree: {problem}'),
        ])

    def collect_foms(self):
        curve = self.netpipe_curve()
        self.add_curve_foms(curve.sizes, curve.latency_us, curve.bandwidth)


@rfm.simple_test
class OsuPt2Pt(Pt2PtBase):
    '''The point-to-point OSU benchmarks of yeebench.osu.BENCHMARKS (from the partition's extras.osu).'''

    benchmark = parameter(osu.names('pt2pt'))

    #: 'host' buffers, or 'device': CUDA device buffers on both ranks (OSU's -d cuda ... D D);
    #: device only on partitions with the gpu feature and with an OSU built with CUDA.
    buffers = parameter(['host', 'device'])

    #: Timed iterations / warm-up iterations per size (0: OSU's defaults, fewer for large messages).
    iterations = variable(int, value=0)
    warmup = variable(int, value=0)

    #: Timed iterations per benchmark, overriding `iterations` (OSU's -i applies to every size, so
    #: a latency sweep and a 64-message bandwidth window want different counts), e.g.
    #: -S OsuPt2Pt.iterations_for=osu_latency:1000,osu_bw:20
    iterations_for = variable(typ.Dict[str, int], value={})

    smoke_overrides = {'max_size': 64 * 1024, 'iterations': 200, 'warmup': 20}

    def is_smoke_case(self):
        return self.benchmark == osu.PINGPONG and self.transport == 'ob1-vader' and self.locality == 'intra'

    @run_after('init')
    def gpu_partitions_only(self):
        if self.buffers == 'device':
            self.valid_systems = ['+gpu']

    @run_after('setup')
    def configure(self):
        path, why = capabilities.osu_benchmark(self.current_partition, self.benchmark)
        self.skip_if(path is None, why)
        self.observations['osu'] = {'path': path, 'origin': capabilities.osu_origin(self.current_partition)}
        self.executable = path
        iterations = self.iterations_for.get(self.benchmark, self.iterations)
        self.executable_opts = osu.options(self.max_size, iterations, self.warmup)
        if self.buffers == 'device':
            self.skip_if(not osu.benchmark(self.benchmark).device_buffers,
                         f'{self.benchmark} takes no CUDA device buffers (yeebench.osu.BENCHMARKS)')
            self.require_gpus(self.num_tasks_per_node or 1)
            self.skip_if(not capabilities.osu_has_cuda(self.current_partition), capabilities.NO_OSU_CUDA)
            self.executable_opts = osu.device_buffer_options(self.executable_opts, pt2pt=True)

    def table(self):
        return osu_parser.parse(read_stage_file(self, self.stdout))

    def single_copy_probe_argv(self):
        # a latency run of the same OSU build: one size, a few iterations (buffers on the host)
        latency, _ = capabilities.osu_benchmark(self.current_partition, osu.PINGPONG)
        size = single_copy.PROBE_BYTES
        return [latency or self.executable] + osu.options(size, 2, 1, min_size=size)

    @sanity_function
    def assert_table(self):
        table = self.table()
        sizes, _ = table.column(osu.benchmark(self.benchmark).column)
        return sn.all([self.assert_no_mpi_errors(),
                       sn.assert_gt(2 * max(sizes), self.max_size,
                                    f'OSU output stops before the largest size {self.max_size} B'),
                       sn.assert_false(table.validation_failed, 'OSU validation failed')])

    def collect_foms(self):
        table, entry = self.table(), osu.benchmark(self.benchmark)
        sizes, values = table.column(entry.column)
        if entry.column == 'latency_us':
            self.add_curve_foms(sizes, latency_us=values)
            return
        self.add_curve_foms(sizes, bandwidth=values, peak_name=entry.peak)
        if 'messages_per_s' in table.columns:
            self.add_fom('peak_msg_rate', max(table.column('messages_per_s')[1]), 'msg/s', 'higher')
