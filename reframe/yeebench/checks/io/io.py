"""Field output (paper 001): how long the solver takes to write its fields, by format,
strategy, rank count and grid size per rank.

  IoOutput  format (none | ascii | binary | hdf5) x strategy (root | per-rank | shared)
            x ranks x n_per_rank: every rank owns an n^3 block (paper 001), the
            blocks stacked along x (decomposition Px1x1; -S stack_axis=z stacks them
            along z), 10 steps, output after every step.  format=none is the no-output baseline.

FOMs (from the solver's JSON report): io_seconds_per_step (s), io_gbs (GB/s),
bytes_written (B, whole run), bytes_per_step (B), io_share (% of the time-stepping
loop), compute_seconds_per_step (s, loop minus I/O), plus Mcells/s.
Sanity: a valid solver run that wrote every step with the requested format/strategy.

On a cluster, point the output at the parallel file system:
    reframe -c reframe/yeebench/checks/io/io.py -n IoOutput -S output_root=/scratch/$USER/yee-io ...
Outputs are deleted after each test unless -S keep_output=true.
"""
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

from yeebench import shell
from yeebench.base import YeebenchCheck
from yeebench.solver import SolverMixin

# (format, strategy, ranks, n_per_rank) of the quick member.
SMOKE = ('binary', 'per-rank', 2, 30)
OUTPUT_DIR = 'yee-io-out'


@rfm.simple_test
class IoOutput(SolverMixin, YeebenchCheck):
    '''The solver writing its six field components after every step.'''

    format = parameter(['none', 'ascii', 'binary', 'hdf5'])
    strategy = parameter(['root', 'per-rank', 'shared'])
    ranks = parameter([1, 2, 4, 8])
    n_per_rank = parameter([30, 60, 90, 130, 190])

    #: Directory under which each test writes its output (default: its stage directory).
    #: Set it to a parallel file system path to measure that file system.
    output_root = variable(str, value='')

    #: Keep the written fields after the test (they can be large: see bytes_written).
    keep_output = variable(bool, value=False)

    #: HDF5 compression passed to --hdf5-compress (none | deflate[:L]).
    hdf5_compress = variable(str, value='none')

    #: Axis along which the ranks' n^3 blocks are stacked: 'x' (the slowest axis of the
    #: files, so each rank's block is one contiguous range of a shared file) or 'z' (the
    #: fastest: n^2 strided pieces per rank, the hard case for a shared file).
    stack_axis = variable(str, value='x')

    #: Initial field (nonzero everywhere, so ASCII and compressed sizes are realistic).
    init_mode = variable(str, value='TM110+TE101')

    steps = 10
    tags = {'full'}

    @run_after('init')
    def select_cases(self):
        self.skip_if(self.format == 'none' and self.strategy != 'root',
                     'the no-output baseline has no strategy (kept once, as strategy=root)')
        self.skip_if(self.strategy == 'shared' and self.format != 'hdf5',
                     'one shared file is written with parallel HDF5 only')
        if (self.format, self.strategy, self.ranks, self.n_per_rank) == SMOKE:
            self.tags = self.tags | {'smoke'}

    @run_after('setup')
    def place(self):
        # One rank per core, spread over the partition's nodes; where the nodes are too few,
        # up to 2 ranks per core (paper 001 ran 2^n PEs; small machines still see the trend).
        cores = self.node_topology.num_cores
        per_node = min(self.ranks, cores)
        if -(-self.ranks // per_node) > self.partition_nodes:
            per_node = -(-self.ranks // self.partition_nodes)
        self.skip_if(per_node > 2 * cores,
                     f'{self.ranks} ranks would put {per_node} ranks on each {cores}-core node (limit 2 per core)')
        self.apply_packed(self.ranks, 1, per_node)
        self.executable_opts = self.solver_options()

    @property
    def output_dir(self):
        if self.output_root:
            return os.path.join(self.output_root, self.unique_name)
        return os.path.join(self.stagedir, OUTPUT_DIR)

    def solver_options(self, grid=None, report=None):
        n, p = self.n_per_rank, self.ranks
        grid, decomp = ([n * p, n, n], f'{p}x1x1') if self.stack_axis == 'x' else ([n, n, n * p], f'1x1x{p}')
        opts = ['--nx', str(grid[0]), '--ny', str(grid[1]), '--nz', str(grid[2]), '--decomp', decomp,
                '--init-mode', self.init_mode, '--source', 'none',
                '--steps', str(self.steps), '--precision', self.precision, '--quiet',
                '--report', report or self.report_file, '--output', self.format]
        if self.format != 'none':
            opts += ['--output-every', '1', '--output-strategy', self.strategy, '--output-dir', self.output_dir,
                     '--overwrite']
            if self.format == 'hdf5' and self.hdf5_compress != 'none':
                opts += ['--hdf5-compress', self.hdf5_compress]
        return opts

    @run_before('run')
    def clean_output(self):
        if self.format != 'none':
            self.prerun_cmds.append(shell.words(['rm', '-rf', self.output_dir]))
            if not self.keep_output:
                # file sizes are in the report; the files themselves can be many GB
                self.postrun_cmds.append(shell.words(['rm', '-rf', self.output_dir]))

    @sanity_function
    def assert_written(self):
        checks = [self.solver_sanity()]
        report = self.read_report()
        io = report.get('io', {})
        checks.append(sn.assert_eq(report['ranks'], self.ranks, 'solver ran a different rank count'))
        checks.append(sn.assert_eq(io.get('format'), self.format, 'report names a different output format'))
        if self.format != 'none':
            checks.append(sn.assert_eq(io.get('strategy'), self.strategy, 'report names another strategy'))
            checks.append(sn.assert_eq(io.get('steps_written'), self.steps, 'not every step was written'))
            checks.append(sn.assert_gt(io.get('bytes_written', 0), 0, 'no bytes written'))
        return sn.all(checks)

    def collect_foms(self):
        super().collect_foms()
        report = self.read_report()
        io = report['io']
        total = report['seconds']['total']
        io_s = io['seconds']
        steps = report['steps']
        self.add_fom('compute_seconds_per_step', (total - io_s) / steps, 's', 'lower')
        self.add_fom('io_share', 100.0 * io['share'], '%', 'lower')
        if self.format != 'none':
            self.add_fom('io_seconds_per_step', io['seconds_per_step'], 's', 'lower')
            self.add_fom('io_gbs', io['gbs'], 'GB/s', 'higher')
            self.add_fom('bytes_written', io['bytes_written'], 'B', 'lower')
            self.add_fom('bytes_per_step', io['bytes_written'] / max(1, io['steps_written']), 'B', 'lower')
        self.observations['io'] = {k: io[k] for k in ('files_written', 'mpiio_setting', 'dir') if k in io}
        self.observations['hdf5_build'] = report.get('build', {}).get('hdf5')
