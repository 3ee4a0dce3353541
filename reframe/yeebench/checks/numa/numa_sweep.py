"""Paper 000 Fig. 7 like for like, Fig. 11 instead: memory policy under one placement (one job).

Fig. 11 is the antenna model on 4 nodes, which the suite does not have: its row compares the same
policies on the hollow PEC box (reframe/papers/000.md).

  FdtdNumaSweep %placement   `unpinned` (no binding, no policy: threads float and fields land where
                             their first touch ran, the paper's "without NUMA policy"), `localalloc`
                             (the placement's binding + numactl --localalloc, the paper's numactl
                             plugin) and `interleave` (binding + --interleave=all), again on 1, 2, 4
                             ... nodes in the same job. FOMs: <policy>_mcells_per_s,
                             <policy>_over_unpinned (paper: 1.5x; NOT MEASURED with one NUMA node
                             per node, with the reason).
"""

import reframe as rfm
from reframe.core.builtins import parameter

from yeebench import comparisons
from yeebench.sweep_check import BINDINGS, SMOKE_SWEEP, PlacedSweep, skip_file

@rfm.simple_test
class FdtdNumaSweep(PlacedSweep):
    '''Paper 000 Fig. 7: memory policy under one binding, against an unpinned, policy-free run (Fig. 11's row
    compares the same on the PEC box instead of the antenna).'''

    placement = parameter([b[0] for b in BINDINGS])

    smoke_overrides = SMOKE_SWEEP

    def is_smoke_case(self):
        return self.placement == 'per-socket'

    @property
    def policies(self):
        return {'unpinned': None, 'localalloc': ['--localalloc'], 'interleave': ['--interleave=all']}

    node_curve = True

    def sweep_cases(self, nodes):
        self.require_binding('the bound cases of a NUMA comparison')
        self.require_feature('numactl')
        if nodes == self.sweep_nodes:
            self.observations['hardware'] = comparisons.hardware(self.node_topology, nodes)
        self.cannot_differ = comparisons.cannot_differ('numa', comparisons.hardware(self.node_topology, nodes))
        kind, threads = {b[0]: b[1:] for b in BINDINGS}[self.placement]
        layout = self.resolved(kind, threads, nodes)
        self.skip_if(layout is None, self.skipped_cases.get(self.at_count(kind)))
        cases = []
        for policy, args in self.policies.items():
            wrapper = ('numactl', *args) if args else ()
            cases.append(self.layout_case(self.at_count(policy), layout, wrapper=wrapper, bound=args is not None))
        if self.cannot_differ:   # one NUMA node: a policy moves no memory, the ratio would measure binding only
            self.not_measured([f'{p}_over_unpinned' for p in self.policies if p != 'unpinned'], self.cannot_differ)
        return cases

    def guarded(self, case, line):
        # a policy the kernel refuses on the compute node (containers without CAP_SYS_NICE) is left out
        if not case.wrapper:
            return line
        probe = ' '.join(case.wrapper) + ' true'
        return (f'if why=$({probe} 2>&1); then {line}; else echo "numactl refused {case.name}: $why" '
                f'> {skip_file(case)}; fi')

    def collect_count_foms(self, best, suffix):
        rates = {n: r['mcells_per_s'] for n, r in best.items()}
        if 'unpinned' in rates and not self.cannot_differ:   # else NOT MEASURED, recorded at planning
            self.add_ratios(rates, 'unpinned', 'rate', suffix)
