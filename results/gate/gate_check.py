"""ReFrame check the regression gate records: one short solver run per repeat.

It runs `yee` (or the fallback stencil kernel) on a small grid, single-threaded,
under cputime.py, which gives it the real-time FIFO scheduler when permitted (root
or CAP_SYS_NICE) so that other jobs on a shared machine cannot preempt it. Figures:
the time-stepping loop's wall-clock time and Mcells/s as the program reports them,
and the process's CPU seconds (start-up included). results/README.md has the
measured detection and false-alarm rates. `extra_work` is the benchmark's
injected slowdown: it adds that fraction of time steps without changing any
row parameter, so the candidate's rows match the baseline's and only the work
differs - exactly what a performance regression looks like to the gate.

    reframe -c results/gate/gate_check.py -r --repeat 5 -S GateSolverRun.binary=$PREFIX/bin/yee
"""
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import performance_function, run_before, sanity_function, variable

from yeebench.base import FigureDirections


@rfm.simple_test
class GateSolverRun(FigureDirections, rfm.RunOnlyRegressionTest):
    descr = "short single-thread solver run for the performance-regression gate"
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    tags = {"gate"}

    #: Solver binary: yee, or the fallback results/gate/stencil built from stencil.c
    binary = variable(str, value="yee")
    #: Grid edge (cells); the run is nx^3 cells
    nx = variable(int, value=32, loggable=True)
    #: Time steps of an unmodified run
    base_steps = variable(int, value=5000, loggable=True)
    #: Injected extra work as a fraction of base_steps (0.1 = 10 % more steps); not a row parameter
    extra_work = variable(float, value=0.0)
    threads = variable(int, value=1, loggable=True)
    perf_directions = {"cpu_time_s": "lower", "loop_time_s": "lower", "mcells_per_s": "higher"}

    @run_before("run")
    def set_command(self):
        steps = int(round(self.base_steps * (1.0 + self.extra_work)))
        self.executable = "python3"
        self.executable_opts = [os.path.join(os.path.dirname(__file__), "cputime.py"), self.binary,
                                "--n", str(self.nx), "--steps", str(steps)]
        if not os.path.basename(self.binary).startswith("stencil"):  # yee's own options
            self.executable_opts += ["--quiet", "--threads", str(self.threads)]
        self.env_vars = {"OMP_NUM_THREADS": str(self.threads)}
        self.num_tasks = 1

    @sanity_function
    def validate(self):
        return sn.all([sn.assert_found(r'"valid":\s*true', self.stdout),
                       sn.assert_found(r'"cpu_seconds":', self.stdout)])

    def _report_value(self, key):
        return sn.extractsingle(rf'"{key}":\s*([0-9.eE+-]+)', self.stdout, 1, float)

    @performance_function("s")
    def cpu_time_s(self):
        return self._report_value("cpu_seconds")

    @performance_function("s")
    def loop_time_s(self):
        # cells * steps / (Mcells/s): the time-stepping loop's duration in both programs
        return self._report_value("cells") * self._report_value("steps") / (self._report_value("mcells_per_s") * 1e6)

    @performance_function("Mcells/s")
    def mcells_per_s(self):
        return self._report_value("mcells_per_s")
