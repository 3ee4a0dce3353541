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

import reframe as rfm

from yeebench import comparisons, sweeps
from yeebench.sweep_check import SMOKE_SWEEP, PlacedSweep

@rfm.simple_test
class FdtdNodeScaling(PlacedSweep):
    '''Paper 000 Fig. 12: one grid on 1, 2, 4 ... all nodes; efficiency against the fewest nodes.'''

    #: Cells per axis (larger than the other sweeps: it is split over every node).
    grid = 128

    smoke_overrides = SMOKE_SWEEP

    def is_smoke_case(self):
        return True   # skips at once on one node; the virtual cluster's smoke run measures it

    def sweep_cases(self, nodes):
        self.skip_if(nodes < 2, 'node scaling needs 2 nodes or more: '
                                + (self.too_few_nodes(2) or f'nodes={nodes}') + ' (the virtual cluster in CI has 3)')
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
