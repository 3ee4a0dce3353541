"""Paper 002's comparisons: packing over rank counts, the solver's message statistics; and message size vs time.

  FdtdPackingSweep %ranks   Fig. 3: `ranks` single-threaded ranks packed on all cores of as few
                            nodes as hold them (`full`) and on half of each node's cores (`half`,
                            twice the nodes), and one rank alone (`one`, the speedup's base), one
                            job, the same flat grid split one way (ranks x 1 x 1, as the paper's
                            4000 x 2000 x 1). FOMs: <case>_mcells_per_s, full_over_half_seconds
                            (time with full packing / half; paper: 1.3 at 64 processes),
                            full_speedup and half_speedup (time of one rank / time of the case:
                            over the `ranks` jobs, the paper's speedup curve). Skipped where half
                            packing needs more nodes than the partition has.
  FdtdMessageStats %ranks   Table 1 and paper 001's communication share: the solver split along
                            one axis (ranks x 1 x 1, as the paper's 1-D decomposition) of a flat
                            grid (the paper's 4000 x 2000 x 1 scaled to 800 x 400 x 4), half of each
                            node's cores in use. FOMs from the solver's report: halo_bytes_per_step
                            (B) and halo_messages_per_step (sums over ranks),
                            halo_bytes_per_rank_per_step_max and _mean (B) and
                            halo_messages_per_rank_per_step_max (per process, as the paper's
                            Table 1 counts bytes), halo_ms_per_step (time in exchange per
                            step, the paper's "total latency"), halo_us_per_message, run_seconds,
                            halo_over_compute (x; paper 001: about 1/6).
  HaloMessageSizes          the `halo` probe over face sizes on 2 ranks (on 2 nodes where the
                            partition has them): halo_us_<bytes>B per exchange; no figure of paper
                            002 (its Fig. 4, bytes per step over time, is not reproducible).
"""

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import fixture, parameter, run_after, sanity_function, variable

from yeebench import comparisons, launch, scaling, stage_files, sweeps
from yeebench.base import YeebenchCheck
from yeebench.fixtures import ProbeBinaries
from yeebench.parsers import jsonreport
from yeebench.solver import SMOKE_SOLVER, SolverCheck, grid_shape, halo_traffic_per_step, keep_output_files
from yeebench.sweep_check import SolverSweep

#: Paper 002 ran 8 ... 64 processes; 2 and 4 let small clusters show the trend.
RANKS = [2, 4, 8, 16, 32, 64]


def nodes_for(ranks, per_node):
    return -(-ranks // per_node)


@rfm.simple_test
class FdtdPackingSweep(SolverSweep):
    '''Paper 002 Fig. 3: the same ranks on full nodes and on half-filled nodes, one job.'''

    ranks = parameter(RANKS)

    #: The flat grid split along x (paper 002: 4000 x 2000 x 1, scaled as FdtdMessageStats's).
    shape = variable(str, value='800x400x4')

    smoke_overrides = dict(SMOKE_SOLVER, rounds=1, shape='160x80x4')

    def is_smoke_case(self):
        return self.ranks == 2

    def sweep_options(self):
        opts = super().sweep_options()
        at = opts.index('--n')                      # the cube's size gives way to the flat shape
        nx, ny, nz = grid_shape(self.shape, type(self).__name__)
        return ['--nx', nx, '--ny', ny, '--nz', nz] + opts[:at] + opts[at + 2:]

    def sweep_cases(self, nodes):
        cores = self.node_topology.num_cores
        half = cores // 2
        self.skip_if(half < 1, f'{cores}-core nodes cannot be half packed')
        need = nodes_for(self.ranks, half)
        self.skip_if(need > nodes, f'{self.ranks} ranks half packed ({half} per node) need {need} nodes, '
                                   f'the comparison has {nodes}'
                                   + (f' ({self.too_few_nodes(need)})' if self.too_few_nodes(need) else ''))
        env = {'OMP_NUM_THREADS': '1', 'OMP_PROC_BIND': 'close', 'OMP_PLACES': 'cores'}
        cases = []
        for name, per_node in (('full', min(cores, self.ranks)), ('half', half)):
            options = launch.packed_options(self, per_node, cores, list(env))
            cases.append(sweeps.Case(name, self.launch_for(self.ranks, options), env,
                                     options=('--decomp', f'{self.ranks}x1x1')))
        alone = launch.packed_options(self, 1, cores, list(env))
        cases.append(sweeps.Case('one', self.launch_for(1, alone), env, options=('--decomp', '1x1x1')))
        return cases

    def work_problems(self, best):
        # `one` is the speedup's base: the same grid and steps on one rank, the others on `ranks`
        problems = sweeps.same_work({n: r for n, r in best.items() if n != 'one'})
        return problems + sweeps.same_work({n: dict(r, ranks=1, threads=1) for n, r in best.items()})

    def case_problems(self, case, report):
        per_node = {}
        for rec in report['placement']:
            per_node[rec['host']] = per_node.get(rec['host'], 0) + 1
        cores = self.node_topology.num_cores
        ranks = 1 if case.name == 'one' else self.ranks
        want = {'full': min(cores, self.ranks), 'half': cores // 2, 'one': 1}[case.name]
        if report['ranks'] != ranks or max(per_node.values()) > want:
            return [f'{report["ranks"]} ranks, up to {max(per_node.values())} per node; '
                    f'{ranks} requested, {want} per node']
        if case.name != 'one' and report.get('dims', [ranks, 1, 1])[1:] not in ([1, 1], (1, 1)):
            return [f'split {report.get("dims")}, not {ranks} x 1 x 1']
        return []

    def collect_sweep_foms(self):
        seconds = {n: r['seconds']['total'] for n, r in self.best.items()}
        self.add_fom('full_over_half_seconds', *comparisons.time_ratio(seconds['full'], seconds['half'])[:1],
                     'x', 'lower')
        if 'one' in seconds:
            for name in ('full', 'half'):
                self.add_fom(f'{name}_speedup', scaling.speedup(seconds[name], seconds['one'], kind='time'),
                             'x', 'higher')


@rfm.simple_test
class FdtdMessageStats(SolverCheck):
    '''Paper 002 Table 1: bytes, messages and time in halo exchange per step, 1-D split, 2 ranks a node's half.'''

    ranks = parameter(RANKS)

    #: The flat grid (paper 002: 4000 x 2000 x 1, here scaled) split along x.
    shape = variable(str, value='800x400x4')

    steps = 50
    tags = {'app', 'full', 'network'}
    smoke_overrides = {'shape': '160x80x4', 'steps': 20}

    def is_smoke_case(self):
        return self.ranks == 2

    @run_after('setup')
    def place(self):
        # half of each node's cores, as the paper's table (2 of 4 per node); packed tighter where the
        # partition has too few nodes, never beyond one rank a core
        cores = self.node_topology.num_cores
        per_node = max(1, cores // 2)
        if nodes_for(self.ranks, per_node) > self.partition_nodes:
            per_node = nodes_for(self.ranks, self.partition_nodes)
        self.skip_if(per_node > cores, f'{self.ranks} ranks need {per_node} per node on '
                                       f'{self.partition_nodes} node(s) of {cores} cores')
        self.observations['ranks_per_node'] = per_node
        self.apply_packed(self.ranks, 1, ranks_per_node=per_node)
        nx, ny, nz = grid_shape(self.shape, type(self).__name__)
        self.executable_opts = ['--nx', nx, '--ny', ny, '--nz', nz, '--decomp', f'{self.ranks}x1x1',
                                '--steps', str(self.steps), '--quiet', '--report', self.report_file]

    def collect_foms(self):
        super().collect_foms()
        self.add_report_foms(self.read_report())

    def add_report_foms(self, rep):
        '''The FOMs of the solver's report `rep` (a function of the report alone).'''
        sec = rep['seconds']
        for name, value, unit in halo_traffic_per_step(rep):   # totals over ranks and per rank (the paper's)
            self.add_fom(name, value, unit, 'lower')
        self.add_fom('halo_ms_per_step', 1e3 * rep['halo_seconds_per_step'], 'ms', 'lower')
        self.add_fom('halo_us_per_message', 1e6 * rep['halo_seconds_per_message'], 'us', 'lower')
        self.add_fom('run_seconds', sec['total'], 's', 'lower')
        if sec['update'] > 0:
            self.add_fom('halo_over_compute', sec['halo'] / sec['update'], 'x', 'lower')


@rfm.simple_test
class HaloMessageSizes(YeebenchCheck):
    '''Time per halo exchange against message size (the `halo` probe); not paper 002's Fig. 4 (bytes per
    step over simulated time, not reproducible without particles).'''

    probes = fixture(ProbeBinaries, scope='environment')

    #: Face sides (cells): messages of 2 components x side^2 x 4 B.
    sizes = variable(str, value='8,16,32,64,128,256')

    tags = {'network', 'full'}
    smoke_overrides = {'sizes': '8,32'}
    output = 'halo.json'

    def is_smoke_case(self):
        return True

    @run_after('init')
    def keep_report(self):
        keep_output_files(self, self.output)

    @run_after('setup')
    def place(self):
        inter = self.partition_nodes >= 2
        cores = self.node_topology.num_cores
        self.skip_if(not inter and cores < 2,   # the pair is bound one rank per core
                     f'an intra-node pair needs 2 cores, a node of {self.current_partition.fullname} has {cores}')
        self.num_tasks = 2
        self.num_tasks_per_node = 1 if inter else 2
        launch.apply_pair(self, inter)
        self.observations['locality'] = 'inter' if inter else 'intra'
        self.executable = self.probes.paths['halo']
        self.executable_opts = ['--sizes', self.sizes, '--dims', '2x1x1', '--output', self.output]

    def report(self):
        return jsonreport.parse_probe(stage_files.read_stage_file(self, self.output), 'halo')

    @sanity_function
    def assert_valid(self):
        return sn.assert_true(self.report()['valid'], 'halo says a ghost layer held the wrong data (INVALID)')

    def collect_foms(self):
        for row in self.report()['results']:
            self.add_fom(f'halo_us_{row["bytes_per_exchange"]}B', 1e6 * row['time_median_s'], 'us', 'lower')
