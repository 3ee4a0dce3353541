"""Paper 000 Fig. 6 like for like: where the ranks sit (one job, yeebench.sweep_check.PlacedSweep).

  FdtdBindingSweep   a rank per node / per socket / per core, threads filling the rest of the node's
                     cores, each placed with the launcher's --map-by and again from an Open MPI
                     rankfile (case <p>-rankfile, as the paper placed them; left out, with the reason,
                     where the launcher takes no rankfile). Every case again on 1, 2, 4 ... nodes in
                     the same job (the paper's curve; `-S node_counts=1,4` to choose), ratios formed
                     within each count (<figure>_<n>_nodes). FOMs: <case>_mcells_per_s,
                     <p>_over_per_core and <p>_rankfile_over_per_core_rankfile (x, speed over
                     rank-per-core; paper: socket 5300 / node 4900 / core 2700 Mcells/s on 18 nodes),
                     per_socket_over_per_node (NOT MEASURED with one socket per node, with the
                     reason), <p>_rankfile_over_<p> (the two methods).
"""

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import variable

from yeebench import comparisons, launch, sweeps
from yeebench.sweep_check import BINDINGS, SMOKE_SWEEP, PlacedSweep

@rfm.simple_test
class FdtdBindingSweep(PlacedSweep):
    '''Paper 000 Fig. 6: rank per node / socket / core, all in one job on the same nodes.'''

    #: How each placement is realised: the launcher's own options, an Open MPI rankfile, or both.
    methods = variable(typ.List[str], value=['map-by', 'rankfile'])

    smoke_overrides = SMOKE_SWEEP

    def is_smoke_case(self):
        return True

    node_curve = True

    def sweep_cases(self, nodes):
        self.require_binding('rank placements')
        unknown = set(self.methods) - {'map-by', 'rankfile'}
        self.skip_if(unknown or not self.methods, f'methods must name map-by and/or rankfile, got {self.methods}')
        no_rankfile = launch.rankfile_unsupported(self, for_prefix=True)
        if nodes == self.sweep_nodes:
            self.observations['hardware'] = comparisons.hardware(self.node_topology, nodes)
        # per node: a count of nodes changes neither the sockets nor the NUMA nodes of each
        self.cannot_differ = comparisons.cannot_differ('binding', comparisons.hardware(self.node_topology, nodes))
        cases = []
        for method in ('map-by', 'rankfile'):
            if method not in self.methods:
                continue
            for name, kind, threads in BINDINGS:
                case = name + ('-rankfile' if method == 'rankfile' else '')
                if method == 'rankfile' and no_rankfile:
                    self.skip_case(self.at_count(case), no_rankfile)
                    continue
                layout = self.resolved(kind, threads, nodes)
                if layout is not None:
                    cases.append(self.layout_case(self.at_count(case), layout, rankfile=method == 'rankfile'))
        if self.cannot_differ:   # decided before the run: the ratio is not emitted, the reason is recorded
            names = {sweeps.uncounted(c.name) for c in cases}
            self.not_measured([f'per_socket{s.replace("-", "_")}_over_per_node{s.replace("-", "_")}'
                               for s in ('', '-rankfile') if {'per-socket' + s, 'per-node' + s} <= names],
                              self.cannot_differ)
        return cases

    def collect_count_foms(self, best, suffix):
        rates = {n: r['mcells_per_s'] for n, r in best.items()}
        # each method's placements over its own rank-per-core case (the paper's ratio), ...
        for method in ('', '-rankfile'):
            same = {n: v for n, v in rates.items() if n.endswith('-rankfile') == bool(method)}
            if 'per-core' + method in same:
                self.add_ratios(same, 'per-core' + method, 'rate', suffix)
        # ... and each rankfile case over the same placement by --map-by: ~1 when both place alike
        for name in (n for n in rates if n.endswith('-rankfile')):
            twin = name[:-len('-rankfile')]
            if twin in rates:
                self.add_ratios({twin: rates[twin], name: rates[name]}, twin, 'rate', suffix)
        # rank per socket over rank per node (the paper's 5300 / 4900): one socket per node makes them one run
        for method in ('', '-rankfile'):
            pair = {n: rates[n] for n in ('per-node' + method, 'per-socket' + method) if n in rates}
            if len(pair) < 2:
                continue
            if not self.cannot_differ:   # else recorded NOT MEASURED when the cases were planned
                self.add_ratios(pair, 'per-node' + method, 'rate', suffix)
