"""SolverMixin / SolverCheck: the base of every check that runs the FDTD solver `yee`.

Runs `yee` on a small hollow PEC box, requires its report to be valid (finite
energy, 16-hex-digit checksum, `valid: true`) and publishes Mcells/s and the
share of time spent in halo exchange.

The JSON files the programs write (the solver's --report, the affinity probe's
--output) are listed in `keep_files`: ReFrame deletes the stage directory of a
passing test and copies only those files to its output directory, where
`yeebench results ingest` reads build info and observed bindings from them.
"""
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import fixture, run_after, sanity_function, variable
from reframe.core.exceptions import ReframeError, SanityError

from yeebench import shell, stage_files
from yeebench.base import YeebenchCheck
from yeebench.fixtures import ProbeBinaries, SolverBinary
from yeebench.parsers import jsonreport


#: The solver's settings in a smoke run (`--mode smoke`), for every smoke case that runs it (a full run keeps the
#: class defaults, 96^3 x 100 steps).  Long enough to be measured, not guessed from noise: ~2.6e8 cell
#: updates, 0.3-0.8 s on one core of the development machine, against 3e6 (about 5 ms) before.
SMOKE_SOLVER = {'grid': 80, 'steps': 500}


def grid_shape(text, check):
    '''(nx, ny, nz) as text from a `shape` variable such as '800x400x4' (`-S shape=...`); ReframeError naming
    the check and the value otherwise, one line instead of an unpacking error.'''
    parts = str(text).split('x')
    if len(parts) != 3 or not all(p.isascii() and p.isdigit() and int(p) >= 1 for p in parts):
        raise ReframeError(f'{check}: shape={text!r} is not NXxNYxNZ (three whole numbers >= 1, e.g. 800x400x4)')
    return tuple(str(int(p)) for p in parts)


#: Halo traffic per time step in the solver's report: (report key = figure name, unit). The totals are
#: summed over all ranks; paper 002 (Table 1) counts per process, which the per-rank figures give (the most
#: any rank sent and the mean over ranks), flat as a 1-D split grows while the totals grow with the ranks.
HALO_PER_STEP = (
    ('halo_bytes_per_step', 'B'),
    ('halo_messages_per_step', 'messages'),
    ('halo_bytes_per_rank_per_step_max', 'B'),
    ('halo_bytes_per_rank_per_step_mean', 'B'),
    ('halo_messages_per_rank_per_step_max', 'messages'),
)


def halo_traffic_per_step(report):
    '''[(name, value, unit)] of HALO_PER_STEP from a solver report; SanityError naming the first key that is
    missing or not a number >= 0 (a yee built before the per-rank figures lacks them).'''
    figures = []
    for key, unit in HALO_PER_STEP:
        value = report.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise SanityError(f'the solver report has no {key} (a number >= 0): got {value!r}; '
                              f'a yee older than the per-rank halo figures? rebuild it')
        figures.append((key, float(value), unit))
    return figures


def keep_output_files(check, *names):
    '''Add `names` (stage-directory files) to the check's keep_files, once each.'''
    check.keep_files = list(check.keep_files) + [n for n in names if n not in check.keep_files]


class SolverMixin(rfm.RegressionTestPlugin):
    '''Runs yee (mix into a YeebenchCheck, before it in the bases); subclasses choose ranks/threads.'''

    #: Cells along each axis of the cubic grid.
    grid = variable(int, value=96)

    #: Time steps.
    steps = variable(int, value=100)

    #: Field precision: f32 or f64.
    precision = variable(str, value='f32')

    #: Report file name in the stage directory.
    report_file = 'yee-report.json'

    yee = fixture(SolverBinary, scope='environment')

    @run_after('init')
    def tag_app(self):
        self.tags |= {'app'}

    @run_after('init')
    def keep_solver_report(self):
        keep_output_files(self, self.report_file)

    @run_after('setup')
    def set_solver_command(self):
        self.executable = self.yee.paths['yee']
        self.executable_opts = self.solver_options()

    def solver_options(self, grid=None, report=None):
        return ['--n', str(grid or self.grid), '--steps', str(self.steps), '--precision', self.precision,
                '--quiet', '--report', report or self.report_file]

    def read_report(self, name=None):
        name = name or self.report_file
        text = stage_files.read_stage_file(self, name, None)
        if text is None:
            raise SanityError(f'the solver wrote no {os.path.basename(name)}: {self.solver_error()}')
        return jsonreport.parse_yee(text)

    def solver_error(self):
        '''The solver's one-line error from the job's stderr ("yee: error: ..."), else a pointer to it.'''
        lines = stage_files.error_lines(stage_files.read_stage_file(self, self.stderr, ''), 'yee: error:')
        return lines[0] if lines else f'see {self.stderr} in the stage directory'

    def solver_sanity(self, name=None):
        '''Deferred assertion that the solver's run is valid (list of problems is empty).'''
        problems = jsonreport.yee_problems(self.read_report(name))
        return sn.assert_false(problems, '; '.join(problems))

    def collect_foms(self):
        report = self.read_report()
        self.add_fom('mcells_per_s', report['mcells_per_s'], 'Mcells/s', 'higher')
        self.add_fom('halo_share', jsonreport.yee_halo_share(report), '%', 'lower')


class SolverCheck(SolverMixin, YeebenchCheck):
    '''A YeebenchCheck running yee, sane when the solver's report is.'''

    @sanity_function
    def assert_solver_valid(self):
        return self.solver_sanity()


class AffinityProbeMixin(rfm.RegressionTestPlugin):
    '''Adds the `affinity` probe and a prerun that records the placement of the main command.'''

    probes = fixture(ProbeBinaries, scope='environment')

    #: File the prerun affinity probe writes.
    affinity_file = 'affinity.json'

    @run_after('init')
    def keep_affinity_report(self):
        keep_output_files(self, self.affinity_file)

    def record_affinity_before_run(self):
        '''Launch `affinity` with the same tasks, options and environment as the main command.'''
        launch = self.launch_prefix(self.num_tasks, self.job.launcher.options)
        self.prerun_cmds.append(f'{launch} {shell.words([self.probes.paths["affinity"], "--output", self.affinity_file])}')

    def observed_affinity(self, name=None):
        return jsonreport.parse_probe(stage_files.read_stage_file(self, name or self.affinity_file), 'affinity')
