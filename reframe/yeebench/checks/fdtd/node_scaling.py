"""Paper 000 Fig. 12: one grid on 1, 2, 4 ... all nodes, a rank per socket, in one job.

  FdtdNodeScaling   efficiency_<n>_nodes and efficiency_vs_<b>_nodes (%, at the most nodes) against
                    the paper's baseline of 4 nodes, or the smallest count the grid fits (named in
                    the figure); the grid is the paper's cells per node where memory allows
                    (observations['grid']; a node's memory from the partition's
                    extras.mem_per_node_mib, observations['node_memory']). On one node its single
                    case runs and the efficiency is NOT MEASURED, with the reason.
"""

import reframe as rfm

from yeebench import comparisons, scaling, sweeps
from yeebench.topology import partition_memory_bytes
from yeebench.sweep_check import SMOKE_SWEEP, PlacedSweep

#: Paper 000 Fig. 12: the antenna's 569 x 569 x 1144 cells, 4 nodes its baseline (18 against 4).
PAPER_CELLS, PAPER_BASELINE_NODES = 569 * 569 * 1144, 4
#: Bytes of memory per cell assumed when sizing (6 field words of 8 B, twice for coefficients and halos).
BYTES_PER_CELL = 96
#: The share of a node's memory the grid may take.
MEMORY_SHARE = 0.25


@rfm.simple_test
class FdtdNodeScaling(PlacedSweep):
    '''Paper 000 Fig. 12: one grid on 1, 2, 4 ... all nodes; efficiency against the paper's baseline.'''

    #: Cells per axis; 0 sizes it like the paper per node: the antenna's cells per node at its baseline
    #: (569 x 569 x 1144 / 4) on the baseline's nodes, fewer where a node's memory cannot hold that.
    grid = 0

    smoke_overrides = SMOKE_SWEEP
    min_cases = 1   # one node still records its case; the efficiency is NOT MEASURED there

    def is_smoke_case(self):
        return True   # on one node its single case, efficiency NOT MEASURED; the virtual cluster measures it

    def node_memory_cells(self):
        '''Cells one node holds at MEMORY_SHARE of its memory (the partition's extras.mem_per_node_mib
        first: see topology.partition_memory_bytes), or None when its memory is unknown.'''
        try:
            mem, source = partition_memory_bytes(self.current_partition)
        except ValueError as err:
            self.skip(str(err))
        self.observations['node_memory'] = source
        return int(MEMORY_SHARE * mem / BYTES_PER_CELL) if mem else None

    def sweep_cases(self, nodes):
        facts = comparisons.hardware(self.node_topology, nodes)
        self.observations['hardware'] = facts
        self.cannot_differ = comparisons.cannot_differ('nodes', facts)
        if self.cannot_differ and self.too_few_nodes(2):   # say how a site describes more nodes
            self.cannot_differ += f' ({self.too_few_nodes(2)})'
        if self.cannot_differ:
            comparisons.not_measured(self.observations, ['efficiency_vs_*_nodes'], self.cannot_differ)
        self.layouts = {}
        counts = sweeps.node_counts(nodes)
        target = PAPER_BASELINE_NODES if nodes > PAPER_BASELINE_NODES else min(counts)
        cap = self.node_memory_cells()
        if not self.grid:
            per_node = min(PAPER_CELLS // PAPER_BASELINE_NODES, cap or PAPER_CELLS)
            self.grid = max(16, int((per_node * target) ** (1 / 3)))   # rounded down: it must fit
        cells = self.grid ** 3
        fits = [n for n in counts if cap is None or cells / n <= cap]
        for n in set(counts) - set(fits):
            self.skip_case(f'nodes-{n}', f'{self.grid}^3 cells over {n} node(s) exceed {MEMORY_SHARE:.0%} of a '
                                         f'node\'s memory at {BYTES_PER_CELL} B per cell')
        self.skip_if(not fits, f'{self.grid}^3 cells fit on no node count of {counts}')
        self.baseline_nodes = target if target in fits else min(fits)
        self.observations['grid'] = (f'{self.grid}^3 = {cells} cells ({cells / self.baseline_nodes:.3g} per node at '
                                     f'the baseline; the paper: {PAPER_CELLS} cells, '
                                     f'{PAPER_CELLS / PAPER_BASELINE_NODES:.3g} per node on 4 nodes)')
        self.observations['efficiency_baseline'] = (
            f'{self.baseline_nodes} node(s): ' + ('the paper\'s baseline' if self.baseline_nodes == PAPER_BASELINE_NODES
                                                  else f'the smallest count the grid fits (the paper\'s {PAPER_BASELINE_NODES} '
                                                       f'needs a partition of {PAPER_BASELINE_NODES + 1} nodes or more)'))
        if not self.cannot_differ and self.baseline_nodes != PAPER_BASELINE_NODES:
            comparisons.not_measured(self.observations, [f'efficiency_vs_{PAPER_BASELINE_NODES}_nodes'],
                                     f'NOT MEASURED: the paper\'s baseline of {PAPER_BASELINE_NODES} nodes needs a '
                                     f'partition of {PAPER_BASELINE_NODES + 1} nodes or more that the grid fits; '
                                     f'this one has {nodes}')
        cases = []
        for n in fits:
            layout = self.resolved('per-socket', 'fill', n)
            if layout is not None:
                cases.append(self.layout_case(f'nodes-{n}', layout))
        return cases

    def work_problems(self, best):
        # one grid and step count on every node count; the workers grow with the nodes by design
        return sweeps.same_work({n: dict(r, ranks=1, threads=1) for n, r in best.items()})

    def collect_sweep_foms(self):
        rates = {int(n.split('-')[1]): r['mcells_per_s'] for n, r in self.best.items()}
        base = self.baseline_nodes
        if self.cannot_differ or base not in rates or max(rates) <= base:
            return   # recorded NOT MEASURED when the cases were planned (or the baseline did not run)
        eff = scaling.efficiency_against_smallest({n: r for n, r in rates.items() if n >= base})
        for n, value in eff.items():
            if n != base:
                self.add_fom(f'efficiency_{n}_nodes', value, '%', 'higher')
        self.add_fom(f'efficiency_vs_{base}_nodes', eff[max(eff)], '%', 'higher')
