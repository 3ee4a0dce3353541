"""ReFrame pieces shared by the acceptance checks (reframe/yeebench/checks/acceptance/acceptance.py).

Every acceptance check ends in one verdict: PASS, FAIL or NOT MEASURED, with a
reason.  NOT MEASURED is a ReFrame skip (decided before the run: no GPU, one
NUMA node) or a run whose sanity passes with `acceptance_verdict` set (decided
from the output: the pairs were all on one node, the page cache served the
reads); either way the sign-off page does not accept it unless waived.  The
reason is stored in the loggable variable `acceptance_reason` (so it is in
ReFrame's JSON report, where `yeebench acceptance report` reads it, also for
passes and skips, whose reason ReFrame itself does not record) and printed on
ReFrame's output as `[acceptance] PASS <check>: <reason>`.
"""
import os
import shlex
import sys

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.logging import getlogger

from yeebench import launch, stage_files
from yeebench.base import SmokeRun
from yeebench.package_data import topology_dir

#: Where a probe's failed build leaves its compiler's messages (build_on_node_or_explain).
BUILD_ERRORS = "probe-build.err"

TOPOLOGY_DIR = str(topology_dir())  # the package's copy of reframe/config/topology


class AcceptanceMixin(rfm.RegressionTestPlugin):
    """Verdict bookkeeping of an acceptance check; mix in before YeebenchCheck (the suite's one
    mixin order: plugins first, then the base class), e.g. `class C(AcceptanceMixin, YeebenchCheck)`."""

    #: The one-line reason of the verdict (PASS, FAIL or NOT MEASURED).
    acceptance_reason = variable(str, value="", loggable=True)

    #: 'NOT MEASURED' when the check ran but measured nothing it could vouch for ('' otherwise).
    acceptance_verdict = variable(str, value="", loggable=True)

    #: Supporting lines (per node figures, warnings, notes) for the sign-off report.
    acceptance_details = variable(typ.List[str], value=[], loggable=True)

    @run_after("init")
    def _acceptance_defaults(self):
        self.tags |= {"acceptance"}
        self.acceptance_details = []  # a fresh list per test, never the shared default

    @run_after("setup")
    def _fail_fast(self):
        # one rank dying must end the job (Slurm keeps the others waiting in MPI otherwise)
        launch.add_options(self, launch.fail_fast_options(self))

    def skip(self, msg=None):
        """A skip is the verdict NOT MEASURED, with its reason in the report (the suite's one skip
        path: YeebenchCheck.skip records it in `observations` too)."""
        self.acceptance_reason = msg or ""
        self.acceptance_verdict = "NOT MEASURED"
        getlogger().info(f"[acceptance] NOT MEASURED {self.display_name}: {msg}")
        super().skip(msg)

    def not_measured(self, reason, details=()):
        """The run worked but measured nothing to vouch for: verdict NOT MEASURED (ReFrame: pass)."""
        self.acceptance_reason = reason
        self.acceptance_verdict = "NOT MEASURED"
        self.acceptance_details = list(self.acceptance_details) + list(details)
        getlogger().info(f"[acceptance] NOT MEASURED {self.display_name}: {reason}")
        return sn.assert_true(True)

    @property
    def measured(self):
        return self.acceptance_verdict != "NOT MEASURED"

    def verdict(self, ok, reason, details=()):
        """Record and announce the verdict; returns a sanity assertion on it."""
        self.acceptance_reason = reason
        self.acceptance_details = list(self.acceptance_details) + list(details)
        word = "PASS" if ok else "FAIL"
        getlogger().info(f"[acceptance] {word} {self.display_name}: {reason}")
        return sn.assert_true(ok, msg=f"FAIL: {reason}")


#: Written by a probe's build job when the node could not build it (the reason).
PROBE_NOT_BUILT = "probe-not-built.txt"


def _missing_tool_line(tool, marker, what, hint=""):
    missing = f"{tool} not found on the node PATH{hint}: no compiler to build {what}"
    return f"command -v {shlex.quote(tool)} > /dev/null || {{ echo {shlex.quote(missing)} > {marker}; exit 0; }}"


def _could_not_build(tool, what, errors):
    """The echo saying that `tool` built nothing, with the first line of its `errors` file naming an error,
    else its last line that is not a rule: Open MPI's wrappers frame their message in lines of dashes."""
    errors = shlex.quote(str(errors))
    reason = (f"$(grep -m1 -i -E 'error|unable|not found' {errors} || "
              f"grep -v -E '^[-[:space:]]*$' {errors} | tail -n 1)")
    return f"echo {shlex.quote(f'{tool} could not build {what}: ')}\"{reason}\""


def probe_build_lines(tool, program, build_stderr):
    """(pre-build, post-build) lines around ReFrame's compile line of a probe: no `tool` on the node
    or a compile that left no `program` writes the reason to PROBE_NOT_BUILT, and the build job ends
    normally.  ReFrame's build script ends at the first failing command (an ERR trap); a probe the
    node cannot build is an answer here, so the trap is lifted."""
    what = f"the {program} probe"
    prebuild = ["trap - ERR", _missing_tool_line(tool, PROBE_NOT_BUILT, what)]
    # the compiler's messages are on the build job's stderr
    postbuild = [f"[ -x {shlex.quote(program)} ] || {_could_not_build(tool, what, build_stderr)} > {PROBE_NOT_BUILT}"]
    return prebuild, postbuild


class ProbeBuild(SmokeRun, rfm.CompileOnlyRegressionTest):
    """One probe built on a node of the partition (`build_locally` off) with
    ReFrame's SingleSource build system.  A node that cannot build it (no compiler on its PATH, or
    Debian's mpicc wrapper without gcc behind it) still ends the build job normally, with the reason
    in PROBE_NOT_BUILT: the check using the fixture then says NOT MEASURED with that reason instead
    of failing.  Subclasses, defined beside their check, set `sourcesdir` (resolved against their
    file's folder, wherever the checks are installed), `source` and `program`, and give the compiler
    (`compiler()`)."""

    source = variable(str)
    program = variable(str)
    cflags = variable(typ.List[str], value=["-O2"])

    build_system = "SingleSource"
    build_locally = False

    def compiler(self):
        raise NotImplementedError

    @run_before("compile")
    def build_or_explain(self):
        tool = self.compiler()
        # ReFrame writes these into the build script as they are: each one a quoted word
        self.build_system.srcfile = shlex.quote(self.source)
        self.build_system.executable = shlex.quote(self.program)
        self.build_system.cc = shlex.quote(tool)
        self.build_system.cflags = [shlex.quote(flag) for flag in self.cflags]
        self.prebuild_cmds, self.postbuild_cmds = probe_build_lines(tool, self.program, self.build_job.stderr)

    @property
    def path(self):
        return os.path.join(self.stagedir, self.program)

    def not_built(self):
        """Why the node could not build the probe, or None (built; the sanity function vouches)."""
        return last_line(self, PROBE_NOT_BUILT) or None

    @sanity_function
    def built_or_explained(self):
        # either outcome is an answer for the check; only a build job that said nothing is wrong
        return sn.assert_true(os.access(self.path, os.X_OK) or
                              os.path.exists(stage_files.stage_path(self, PROBE_NOT_BUILT)),
                              f"{self.program}: neither built nor a reason why not")


def build_on_node_or_explain(tool, build_command, marker, what, missing_hint="", failed_build_measures=False):
    """Pre-run lines building a probe on the node with `tool`.  Where the node has no `tool` on its
    PATH (a runtime-only node or image) the reason goes to `marker` and the job ends (status 0)
    before launching a probe it never built, so the check reads the marker and says NOT MEASURED.
    A `tool` that fails says the same (Debian's mpicc wrapper without gcc behind it) unless
    `failed_build_measures`: then the build's own error is the check's failure."""
    lines = [_missing_tool_line(tool, marker, what, missing_hint)]
    if failed_build_measures:
        return lines + [build_command]
    return lines + [f"{build_command} 2> {BUILD_ERRORS} || "
                    f"{{ {_could_not_build(tool, what, BUILD_ERRORS)} > {marker}; exit 0; }}"]


def python_command(module):
    """Shell command running a yeebench module with the Python that runs ReFrame (same venv)."""
    return f"{shlex.quote(sys.executable)} -m {shlex.quote(module)}"


def gpu_present(partition):
    """(present, why) from the partition's `gpu` feature: the system file says what its nodes have
    (the `local` system detects its GPUs when the configuration loads, there the host is the node)."""
    if "gpu" in getattr(partition, "features", []):
        return True, "partition has the 'gpu' feature"
    if hasattr(partition, "select_devices") and partition.select_devices("gpu"):
        return True, "partition declares gpu devices"
    name = getattr(partition, "fullname", "this partition")
    return False, (f"no GPU: partition {name} declares none: add 'gpu' to its features and "
                   f"devices [{{'type': 'gpu', 'num_devices': N}}]")


def span_all_nodes(test, per_node):
    """Ask for every node of the partition with `per_node` ranks on each.

    Flexible allocation (num_tasks = 0) takes all idle nodes on real
    schedulers; on the local scheduler the launcher command is written before
    the task count is resolved (`mpirun -np 0`), so give the count explicitly.
    """
    test.num_tasks_per_node = per_node
    if test.current_partition.scheduler.registered_name == "local":
        test.num_tasks = per_node
    else:
        test.num_tasks = 0


def nodes_used(test):
    """Nodes the job ran on: tasks / tasks per node (the scheduler's node list may be compressed)."""
    per_node = test.job.num_tasks_per_node or 1
    return max(1, (test.job.num_tasks or per_node) // per_node)


#: Last non-empty line of a stage-directory file ('' if none): the acceptance checks' name for it.
last_line = stage_files.last_stage_line
