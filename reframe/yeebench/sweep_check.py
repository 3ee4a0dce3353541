"""SolverSweep: the base of the checks that run one comparison of the solver as one job.

Every case of the comparison runs in the same allocation, on the same nodes, with the same grid,
steps and ranks x threads, interleaved over `rounds` (yeebench.sweeps); the job's script,
`sweep.sh`, holds one launch line per case and round and is kept with the results. A subclass
lists its cases (`sweep_cases`), may verify each case's placement (`case_problems`) and records
its figures from the best round of every case (`collect_sweep_foms`); the ratios between cases
come from yeebench.comparisons.

A case that this partition cannot run is left out before the job with its reason in
`observations['skipped_cases']`; a case whose component is missing on the compute node (an
MPI collective component, numactl's policy) writes `case-NAME.skip` with the reason instead of
a report, and is left out the same way.

A comparison with `node_curve` runs its cases again on fewer nodes in the same job: on every count
of `node_counts` (default 1, 2, 4 ... and all of `nodes`, the papers' curves), a case per (case,
count), named `<case>@<n>-nodes` below all nodes. Each count's ratios are formed between its own
cases; the figures of count n are recorded as `<figure>_<n>_nodes` (the largest count included,
so that the curve is complete) and the figures on all nodes keep their names as well.
"""
import os

import reframe.utility.typecheck as typ

import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, sanity_function, variable

from yeebench import comparisons, launch, stage_files, sweeps
from yeebench.base import YeebenchCheck
from yeebench.placement import Placement, PlacementError
from yeebench.solver import SMOKE_SOLVER, SolverMixin, keep_output_files

def skip_file(case):
    return f'case-{comparisons.safe_name(case.name)}.skip'


class SolverSweep(SolverMixin, YeebenchCheck):
    '''One comparison of the solver; subclasses define the cases.'''

    #: Rounds each case runs, interleaved with the other cases; each case keeps its best round.
    rounds = variable(int, value=2)

    #: Nodes the comparison uses; 0 = every node of the partition (the papers compare on all of them).
    nodes = variable(int, value=0)

    #: Node counts of the curve (node_curve checks only); empty: 1, 2, 4 ... and all of `nodes`.
    node_counts = variable(typ.List[int], value=[])

    #: True: every case also runs on each smaller count of `node_counts`, in the same job.
    node_curve = False

    tags = {'app', 'full'}

    #: Fewer cases than this and the check skips (a comparison that records one case sets 1).
    min_cases = 2

    def sweep_cases(self, nodes):
        '''Override: the list of sweeps.Case of this comparison on `nodes` nodes.'''
        raise NotImplementedError

    def sweep_options(self):
        '''The solver options every case shares (the report file is added per case).'''
        opts = self.solver_options()
        at = opts.index('--report')
        return opts[:at] + opts[at + 2:]

    def work_problems(self, best):
        '''Problems when the cases did not do the same work (override where cases differ on purpose):
        like for like within each node count, one grid and step count over all of them.'''
        groups = self.by_count(best)
        problems = [f'on {n} node(s): {p}' if len(groups) > 1 else p
                    for n, group in groups.items() for p in sweeps.same_work(group)]
        if len(groups) > 1:
            problems += sweeps.same_work({n: dict(r, ranks=1, threads=1) for n, r in best.items()})
        return problems

    def round_score(self, report):
        '''What makes a round a case's best (higher is better); override where the comparison times
        something other than the solver's speed.'''
        return report['mcells_per_s']

    def case_problems(self, case, report):
        '''Override: problems (strings) with how `case` ran (e.g. its placement); [] when as requested.'''
        return []

    @run_after('setup')
    def plan_sweep(self):
        nodes = self.nodes or self.partition_nodes
        why = self.too_few_nodes(nodes)
        self.skip_if(why, f'nodes={nodes}: {why}')
        self.sweep_nodes = nodes
        self.skipped_cases = {}
        self.layouts = {}
        self.case_count = {}   # case name -> (its name on all nodes, its node count)
        self.curve = sweeps.node_counts(nodes, self.node_counts) if self.node_curve else [nodes]
        self.skip_if(not self.curve, f'node_counts={self.node_counts}: none between 1 and {nodes}')
        self.cases = []
        for count in sorted(self.curve, reverse=True):   # all nodes first: its cases decide the skip
            self.planning_nodes = count
            planned = self.sweep_cases(count)
            self.case_count.update({c.name: (sweeps.uncounted(c.name), count) for c in planned})
            self.cases += planned
        on_all = [c for c in self.cases if self.case_count[c.name][1] == nodes]   # a curve adds no case to compare
        self.skip_if(len(on_all) < self.min_cases, 'fewer than two cases can run here, nothing to compare: '
                     + '; '.join(f'{k}: {v}' for k, v in self.skipped_cases.items()))
        cores = self.node_topology.num_cores
        # the allocation: every core of every node; each case line launches its own geometry
        self.num_tasks, self.num_tasks_per_node, self.num_cpus_per_task = nodes * cores, cores, 1
        lines = sweeps.commands(self.cases, self.yee.paths['yee'], self.sweep_options(), self.rounds)
        order = [case for _ in range(self.rounds) for case in self.cases]   # the order of `lines`
        sweeps.run_sweep(self, [self.guarded(case, line) for case, line in zip(order, lines)],
                         stop_at_first_failure=True,
                         keep=[sweeps.report_file(c, r) for c in self.cases for r in range(self.rounds)])

    def at_count(self, name):
        '''The name of case `name` on the node count being planned (`name` itself on all nodes).'''
        return sweeps.counted(name, self.planning_nodes, self.sweep_nodes)

    def count_suffixes(self, count):
        '''The suffixes the figures of `count` nodes are recorded under (sweeps.count_suffixes).'''
        return sweeps.count_suffixes(count, self.sweep_nodes, self.curve)

    def by_count(self, reports):
        '''{node count: {case name on all nodes: report}} of {case name: report}.'''
        out = {}
        for name, rep in reports.items():
            base, count = self.case_count.get(name, (name, self.sweep_nodes))
            out.setdefault(count, {})[base] = rep
        return dict(sorted(out.items()))

    def guarded(self, case, line):
        '''Override to wrap a case's line in a test, run on the compute node, of what the case needs.'''
        return line

    @property
    def launcher_binds(self):
        '''False where the partition declares that its launcher cannot bind ranks (extras.cpu_binding).'''
        return self.current_partition.extras.get('cpu_binding') is not False

    def require_binding(self, what):
        self.skip_if(not self.launcher_binds,
                     f'partition {self.current_partition.fullname} declares no CPU binding (extras.cpu_binding: '
                     f'false), so {what} cannot be realised')

    def launch_for(self, num_tasks, options):
        return launch.prefix(self, num_tasks, options, self.node_topology.num_cores)

    def skip_case(self, name, reason):
        self.skipped_cases[name] = reason

    def _runnable(self):
        runnable = []
        for case in self.cases:
            reason = stage_files.read_stage_file(self, skip_file(case), None)
            if reason is not None:
                self.skipped_cases[case.name] = reason.strip()
            else:
                runnable.append(case)
        return runnable

    @sanity_function
    def assert_sweep(self):
        cases = self._runnable()
        self.observations['skipped_cases'] = dict(self.skipped_cases)
        try:
            self.best = sweeps.best(sweeps.read_reports(self.stagedir, cases, self.rounds), self.round_score)
        except sweeps.SweepError as err:
            return sn.assert_true(False, f'{err}; the job stopped at: {self.last_error_line()}')
        problems = self.work_problems(self.best)
        for case in cases:
            problems += [f'{case.name}: {p}' for p in self.case_problems(case, self.best[case.name])]
        self.observations['cases'] = {name: {'ranks': r['ranks'], 'threads': r['threads'],
                                             'mcells_per_s': r['mcells_per_s']} for name, r in self.best.items()}
        return sn.assert_false(problems, '; '.join(problems))

    def last_error_line(self):
        '''The solver's error line in the job's stderr, else its last line.'''
        return stage_files.last_error_line(self, self.stderr, 'yee: error:', 'no stderr', 'nothing on stderr')

    def collect_foms(self):
        for count, best in self.by_count(self.best).items():
            for name, rep in best.items():
                for suffix in self.count_suffixes(count):
                    self.add_fom(f'{comparisons.safe_name(name)}_mcells_per_s{suffix}', rep['mcells_per_s'],
                                 'Mcells/s', 'higher')
        for count, best in self.by_count(self.best).items():
            for suffix in self.count_suffixes(count):
                self.collect_count_foms(best, suffix)
        self.collect_sweep_foms()

    def collect_count_foms(self, best, suffix):
        '''Override: the comparison's ratios between the cases of one node count, {name on all nodes:
        report}, each recorded with `suffix` (see count_suffixes).'''

    def collect_sweep_foms(self):
        '''Override: figures over all cases (self.best).'''

    def not_measured(self, figures, reason):
        '''Record `figures` NOT MEASURED with `reason` under the suffixes of the count being planned.'''
        comparisons.not_measured(self.observations, [f + s for f in figures
                                                     for s in self.count_suffixes(self.planning_nodes)], reason)

    def add_ratios(self, values, baseline, kind, suffix=''):
        for name, value, unit, direction in comparisons.ratio_foms(values, baseline, kind):
            self.add_fom(name + suffix, value, unit, direction)


#: Paper 000's three bindings: (case name, placement kind, threads per rank).
BINDINGS = (('per-node', 'per-node', 'fill'), ('per-socket', 'per-socket', 'fill'), ('per-core', 'per-core', 1))
#: A smoke run: the suite's smoke solver size, one round.
SMOKE_SWEEP = dict(SMOKE_SOLVER, rounds=1)


class PlacedSweep(SolverSweep):
    '''Cases launched from placement Layouts; each checked against its layout.'''

    def layout_case(self, name, layout, env=None, wrapper=(), bound=True, rankfile=False):
        '''A sweeps.Case launching `layout` (bound as it says, or unbound with the same ranks x threads;
        always unbound where the partition's launcher cannot bind); `rankfile`: bound from an Open MPI
        rankfile written into the stage directory (the caller checks rankfile_unsupported first).'''
        bound = bound and self.launcher_binds
        omp = dict(layout.omp_env()) if bound else {'OMP_NUM_THREADS': str(layout.threads), 'OMP_PROC_BIND': 'false'}
        omp.update(env or {})
        cores = self.node_topology.num_cores
        if rankfile and bound:
            path = f'rankfile-{comparisons.safe_name(name)}.txt'
            with open(os.path.join(self.stagedir, path), 'w') as fh:
                fh.write(layout.rankfile())
            keep_output_files(self, path)
            options = launch.rankfile_options(self, path, layout, cores, list(omp))
        elif bound:
            options = launch.layout_options(self, layout, cores, list(omp))
        else:
            options = launch.spread_unbound_options(self, layout.ranks_per_node, layout.cpus_per_task, list(omp))
        self.layouts[name] = (layout, bound)
        return sweeps.Case(name, self.launch_for(layout.num_tasks, options), omp, tuple(wrapper))

    def case_problems(self, case, report):
        layout, bound = self.layouts[case.name]
        if report['ranks'] != layout.num_tasks or report['threads'] != layout.threads:
            return [f'ran {report["ranks"]} x {report["threads"]}, requested {layout.num_tasks} x {layout.threads}']
        hosts = {rec['host'] for rec in report['placement']}
        if len(hosts) != layout.num_nodes:
            return [f'ran on {len(hosts)} node(s), {layout.num_nodes} requested']
        # the solver's own account: each rank's threads' CPUs (thread_cpus), as the affinity probe would see
        observed = [dict(rec, cpus=rec.get('thread_cpus', rec['cpus'])) for rec in report['placement']]
        return layout.verify(observed) if bound else []

    def resolved(self, kind, threads, nodes):
        try:
            return Placement(kind, threads).resolve(self.node_topology, nodes)
        except PlacementError as err:
            self.skip_case(self.at_count(kind), str(err))
            return None
