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

    def sweep_cases(self, nodes):
        layout = Placement('per-core', 1).resolve(self.node_topology, nodes)
        self.layout = layout
        env = dict(layout.omp_env())
        options = launch.layout_options(self, layout, self.node_topology.num_cores, list(env))
        prefix = self.launch_for(layout.num_tasks, options)
        return [sweeps.Case(impl, prefix, dict(env, **mpi.collective_env('allreduce', impl)))
                for impl in IMPLEMENTATIONS]

    def guarded(self, case, line):
        if case.name not in OPTIONAL:
            return line
        return (f"if ompi_info --parsable 2>/dev/null | grep -q '^mca:coll:{case.name}:'; then {line}; "
                f"else echo 'this Open MPI has no coll/{case.name} component (ompi_info)' > {skip_file(case)}; fi")

    def case_problems(self, case, report):
        if report['ranks'] != self.layout.num_tasks:
            return [f'ran {report["ranks"]} ranks, {self.layout.num_tasks} requested']
        if len(report.get('energy_series', [])) < report['steps']:
            return [f'{len(report.get("energy_series", []))} energy reductions for {report["steps"]} steps']
        return []

    def collect_sweep_foms(self):
        rates = {n: r['mcells_per_s'] for n, r in self.best.items()}
        if 'tuned' in rates:
            self.add_ratios(rates, 'tuned', 'rate')
        for name, rep in self.best.items():
            # means over ranks: an MPI profile's shares, which add up (the per-phase maxima need not)
            sec, key = rep['seconds_mean'], comparisons.safe_name(name)
            total = sec['total']
            mpi_time = sec['halo'] + sec['reduce']
            self.add_fom(f'{key}_halo_share', 100.0 * sec['halo'] / total, '%', 'lower')
            self.add_fom(f'{key}_allreduce_share', 100.0 * sec['reduce'] / total, '%', 'lower')
            self.add_fom(f'{key}_compute_share', 100.0 * sec['update'] / total, '%', 'higher')
            if mpi_time > 0:
                self.add_fom(f'{key}_allreduce_share_of_mpi', 100.0 * sec['reduce'] / mpi_time, '%', 'lower')
