"""Paper 000's comparisons like for like: binding, NUMA policy (x binding), node scaling.

Each check is one job running every case of its comparison on the same nodes with the same grid,
steps and ranks x threads (yeebench.sweep_check); all nodes of the partition unless `-S nodes=N`.

  FdtdBindingSweep            Fig. 6: a rank per node / per socket / per core, threads filling
                              the rest of the node's cores, each placed with the launcher's
                              --map-by and again from an Open MPI rankfile (case <p>-rankfile,
                              as the paper placed them; left out, with the reason, where the
                              launcher takes no rankfile). FOMs: <case>_mcells_per_s,
                              <p>_over_per_core and <p>_rankfile_over_per_core_rankfile (x, speed
                              over rank-per-core; paper: socket 5300 / node 4900 / core 2700
                              Mcells/s on 18 nodes), <p>_rankfile_over_<p> (the two methods).
  FdtdNumaSweep %placement    Figs. 7 and 11: under one placement, `unpinned` (no binding, no
                              policy: threads float and fields land wherever their first touch
                              ran, the paper's "without NUMA policy"), `localalloc` (the
                              placement's binding + numactl --localalloc, the paper's numactl
                              plugin) and `interleave` (binding + --interleave=all). FOMs:
                              <policy>_mcells_per_s, <policy>_over_unpinned (paper: 1.5x).
  FdtdNodeScaling             Fig. 12: rank per socket on 1, 2, 4 ... all nodes, one grid;
                              efficiency_<n>_nodes (%) against the smallest node count, as the
                              paper takes 18 nodes against 4; efficiency_vs_fewest_nodes at the most.
Each bound case's placement is checked from the solver's own report (every rank's CPU set).
"""
import os

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, variable

from yeebench import comparisons, launch, sweeps
from yeebench.placement import Placement, PlacementError
from yeebench.solver import SMOKE_SOLVER, keep_output_files
from yeebench.sweep_check import SolverSweep, skip_file

#: Paper 000's three bindings: (case name, placement kind, threads per rank).
BINDINGS = (('per-node', 'per-node', 'fill'), ('per-socket', 'per-socket', 'fill'), ('per-core', 'per-core', 1))
#: A smoke run: the suite's smoke solver size, one round.
SMOKE_SWEEP = dict(SMOKE_SOLVER, rounds=1)


class _PlacedSweep(SolverSweep):
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
            self.skip_case(kind, str(err))
            return None


@rfm.simple_test
class FdtdBindingSweep(_PlacedSweep):
    '''Paper 000 Fig. 6: rank per node / socket / core, all in one job on the same nodes.'''

    #: How each placement is realised: the launcher's own options, an Open MPI rankfile, or both.
    methods = variable(typ.List[str], value=['map-by', 'rankfile'])

    smoke_overrides = SMOKE_SWEEP

    def is_smoke_case(self):
        return True

    def sweep_cases(self, nodes):
        self.require_binding('rank placements')
        unknown = set(self.methods) - {'map-by', 'rankfile'}
        self.skip_if(unknown or not self.methods, f'methods must name map-by and/or rankfile, got {self.methods}')
        no_rankfile = launch.rankfile_unsupported(self, for_prefix=True)
        self.layouts = {}
        cases = []
        for method in ('map-by', 'rankfile'):
            if method not in self.methods:
                continue
            for name, kind, threads in BINDINGS:
                case = name + ('-rankfile' if method == 'rankfile' else '')
                if method == 'rankfile' and no_rankfile:
                    self.skip_case(case, no_rankfile)
                    continue
                layout = self.resolved(kind, threads, nodes)
                if layout is not None:
                    cases.append(self.layout_case(case, layout, rankfile=method == 'rankfile'))
        return cases

    def collect_sweep_foms(self):
        rates = {n: r['mcells_per_s'] for n, r in self.best.items()}
        # each method's placements over its own rank-per-core case (the paper's ratio), ...
        for suffix in ('', '-rankfile'):
            same = {n: v for n, v in rates.items() if n.endswith('-rankfile') == bool(suffix)}
            if 'per-core' + suffix in same:
                self.add_ratios(same, 'per-core' + suffix, 'rate')
        # ... and each rankfile case over the same placement by --map-by: ~1 when both place alike
        for name in (n for n in rates if n.endswith('-rankfile')):
            twin = name[:-len('-rankfile')]
            if twin in rates:
                self.add_ratios({twin: rates[twin], name: rates[name]}, twin, 'rate')


@rfm.simple_test
class FdtdNumaSweep(_PlacedSweep):
    '''Paper 000 Figs. 7 and 11: memory policy under one binding, against an unpinned, policy-free run.'''

    placement = parameter([b[0] for b in BINDINGS])

    smoke_overrides = SMOKE_SWEEP

    def is_smoke_case(self):
        return self.placement == 'per-socket'

    @property
    def policies(self):
        return {'unpinned': None, 'localalloc': ['--localalloc'], 'interleave': ['--interleave=all']}

    def sweep_cases(self, nodes):
        self.require_binding('the bound cases of a NUMA comparison')
        self.require_feature('numactl')
        self.layouts = {}
        kind, threads = {b[0]: b[1:] for b in BINDINGS}[self.placement]
        layout = self.resolved(kind, threads, nodes)
        self.skip_if(layout is None, self.skipped_cases.get(kind))
        cases = []
        for policy, args in self.policies.items():
            wrapper = ('numactl', *args) if args else ()
            cases.append(self.layout_case(policy, layout, wrapper=wrapper, bound=args is not None))
        return cases

    def guarded(self, case, line):
        # a policy the kernel refuses on the compute node (containers without CAP_SYS_NICE) is left out
        if not case.wrapper:
            return line
        probe = ' '.join(case.wrapper) + ' true'
        return (f'if why=$({probe} 2>&1); then {line}; else echo "numactl refused {case.name}: $why" '
                f'> {skip_file(case)}; fi')

    def collect_sweep_foms(self):
        rates = {n: r['mcells_per_s'] for n, r in self.best.items()}
        if 'unpinned' in rates:
            self.add_ratios(rates, 'unpinned', 'rate')


@rfm.simple_test
class FdtdNodeScaling(_PlacedSweep):
    '''Paper 000 Fig. 12: one grid on 1, 2, 4 ... all nodes; efficiency against the fewest nodes.'''

    #: Cells per axis (larger than the other sweeps: it is split over every node).
    grid = 128

    smoke_overrides = SMOKE_SWEEP

    def is_smoke_case(self):
        return True   # skips at once on one node; the virtual cluster's smoke run measures it

    def sweep_cases(self, nodes):
        self.skip_if(nodes < 2, f'node scaling needs 2 nodes or more; {self.current_partition.fullname} '
                                f'has {self.partition_nodes} (the virtual cluster in CI has 3)')
        self.layouts = {}
        counts = sorted({n for n in (1, 2, 4, 8, 16, 32, 64, 128) if n < nodes} | {nodes})
        cases = []
        for n in counts:
            layout = self.resolved('per-socket', 'fill', n)
            if layout is not None:
                cases.append(self.layout_case(f'nodes-{n}', layout))
        return cases

    def work_problems(self, best):
        # one grid and step count on every node count; the workers grow with the nodes by design
        return sweeps.same_work({n: dict(r, ranks=1, threads=1) for n, r in best.items()})

    def collect_sweep_foms(self):
        rates = {int(n.split('-')[1]): r['mcells_per_s'] for n, r in self.best.items()}
        eff = comparisons.efficiency_against_smallest(rates)
        for n, value in eff.items():
            self.add_fom(f'efficiency_{n}_nodes', value, '%', 'higher')
        self.add_fom('efficiency_vs_fewest_nodes', eff[max(eff)], '%', 'higher')
