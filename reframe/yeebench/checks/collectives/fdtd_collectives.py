"""Paper 004 at application level: the solver under each Open MPI collective implementation.

  FdtdCollectiveProfile   one job on all cores of all nodes (a rank per core), the solver with an
                          MPI_Allreduce every step (`--energy-every 1`, LS-DYNA's dominant call),
                          once per coll implementation: tuned, han, basic, ucc and hcoll (the
                          last two only where this Open MPI has the component: checked with
                          ompi_info on the compute node, else left out with that reason; HCOLL
                          and UCC are what replaced the paper's FCA). FOMs per implementation:
                          <impl>_mcells_per_s, <impl>_over_tuned (speed over coll/tuned: the
                          paper's "with FCA over without", +15 % at 16 nodes), and the MPI time
                          profile from the solver's timers, means over ranks (paper 004 Fig. 4): <impl>_halo_share,
                          <impl>_allreduce_share, <impl>_compute_share (% of the loop) and
                          <impl>_allreduce_share_of_mpi (% of halo + Allreduce time).
                          Every implementation runs again on 1, 2, 4 ... nodes in the same job
                          (the paper's curve: no gain to 4 nodes, +5 % at 8, +15 % at 16; `-S
                          node_counts=...` to choose), a rank per core on each: the figures of a
                          count are recorded as <figure>_<n>_nodes (e.g. han_over_tuned_2_nodes),
                          the plain names being those on all nodes.
The solver has no MPI_Bcast in its loop: the profile's collectives are its Allreduce; OSU's
osu_bcast per implementation is OsuCollective.
"""
import reframe as rfm

from yeebench import comparisons, launch, mpi, sweeps
from yeebench.placement import Placement
from yeebench.solver import SMOKE_SOLVER
from yeebench.sweep_check import SolverSweep, skip_file

IMPLEMENTATIONS = ('tuned', 'han', 'basic', 'ucc', 'hcoll')
#: Implementations that are optional components of an Open MPI build.
OPTIONAL = ('ucc', 'hcoll')


@rfm.simple_test
class FdtdCollectiveProfile(SolverSweep):
    '''The solver with an Allreduce every step under each collective implementation, one job.'''

    smoke_overrides = dict(SMOKE_SOLVER, rounds=1)

    def is_smoke_case(self):
        return True

    def solver_options(self, grid=None, report=None):
        return super().solver_options(grid, report) + ['--energy-every', '1']

    node_curve = True

    def sweep_cases(self, nodes):
        layout = Placement('per-core', 1).resolve(self.node_topology, nodes)
        env = dict(layout.omp_env())
        options = launch.layout_options(self, layout, self.node_topology.num_cores, list(env))
        prefix = self.launch_for(layout.num_tasks, options)
        cases = [sweeps.Case(self.at_count(impl), prefix, dict(env, **mpi.collective_env('allreduce', impl)))
                 for impl in IMPLEMENTATIONS]
        self.layouts.update({c.name: layout for c in cases})
        return cases

    def guarded(self, case, line):
        impl = sweeps.uncounted(case.name)
        if impl not in OPTIONAL:
            return line
        return (f"if ompi_info --parsable 2>/dev/null | grep -q '^mca:coll:{impl}:'; then {line}; "
                f"else echo 'this Open MPI has no coll/{impl} component (ompi_info)' > {skip_file(case)}; fi")

    def case_problems(self, case, report):
        layout = self.layouts[case.name]
        if report['ranks'] != layout.num_tasks:
            return [f'ran {report["ranks"]} ranks, {layout.num_tasks} requested']
        hosts = {rec['host'] for rec in report.get('placement', [])}
        if hosts and len(hosts) != layout.num_nodes:
            return [f'ran on {len(hosts)} node(s), {layout.num_nodes} requested']
        if len(report.get('energy_series', [])) < report['steps']:
            return [f'{len(report.get("energy_series", []))} energy reductions for {report["steps"]} steps']
        return []

    def collect_count_foms(self, best, suffix):
        rates = {n: r['mcells_per_s'] for n, r in best.items()}
        if 'tuned' in rates:
            self.add_ratios(rates, 'tuned', 'rate', suffix)
        for name, rep in best.items():
            # means over ranks: an MPI profile's shares, which add up (the per-phase maxima need not)
            sec, key = rep['seconds_mean'], comparisons.safe_name(name)
            total = sec['total']
            mpi_time = sec['halo'] + sec['reduce']
            self.add_fom(f'{key}_halo_share{suffix}', 100.0 * sec['halo'] / total, '%', 'lower')
            self.add_fom(f'{key}_allreduce_share{suffix}', 100.0 * sec['reduce'] / total, '%', 'lower')
            self.add_fom(f'{key}_compute_share{suffix}', 100.0 * sec['update'] / total, '%', 'higher')
            if mpi_time > 0:
                self.add_fom(f'{key}_allreduce_share_of_mpi{suffix}', 100.0 * sec['reduce'] / mpi_time, '%', 'lower')
