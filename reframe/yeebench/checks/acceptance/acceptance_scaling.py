"""Acceptance (paper 003, Figs. 3-4): thread and process scaling on one node.

Paper 003 found its cluster's scaling collapse past 12 threads per node only after acceptance;
this check puts that into acceptance. See acceptance.py for the whole set.
"""
import shlex

import reframe as rfm
from reframe.core.builtins import fixture, parameter, run_after, sanity_function, variable

from yeebench import capabilities, launch, shell, stage_files, sweeps
from yeebench import scaling
from yeebench.acceptance_check import AcceptanceMixin, last_line
from yeebench.base import BUILT_IN_JOB, YeebenchCheck
from yeebench.fixtures import SolverBinary
from yeebench.parsers import ParseError
from yeebench.parsers.jsonreport import parse_yee, yee_problems
from yeebench.stats import mann_whitney_greater
from yeebench.topology import partition_memory_bytes

#: Written by the yee-io job when the solver offers no binary per-rank output (the reason).
UNSUPPORTED = "yee-io-unsupported.txt"

#: Written by the scaling job when the node cannot run a point with ASLR off (the reason).
ASLR_NOT_COMPARED = "aslr-not-compared.txt"

#: The node's kernel.randomize_va_space as the job read it.
ASLR_SETTING = "aslr-setting.txt"

#: triad_mpi's arrays (a = b + s c), and the most of a node's memory they may take together.
TRIAD_ARRAYS, MEMORY_SHARE = 3, 0.5


def aslr_order(pairs):
    """ASLR on/off for each of `pairs` pairs of runs, the order turning round every pair (on off, off on, ...):
    a node that slows or speeds up over the comparison then weighs on both sides alike."""
    order = []
    for r in range(pairs):
        order += [("aslr-on", r), ("aslr-off", r)] if r % 2 == 0 else [("aslr-off", r), ("aslr-on", r)]
    return order


def aslr_p_value(on_runs, off_runs):
    """One-sided Mann-Whitney p-value for 'the ASLR-off runs (rates) are faster': the chance that the node's
    noise alone ranks them so.  5 pairs give at least 1/252; 3 pairs never better than 1/20."""
    return mann_whitney_greater(off_runs, on_runs)


def aslr_probe_line(marker=ASLR_NOT_COMPARED, setting=ASLR_SETTING, sysctl="/proc/sys/kernel/randomize_va_space"):
    """Shell line deciding whether this node can compare ASLR on and off per process: ASLR must be on
    for the job (kernel.randomize_va_space 1 or 2) and `setarch -R` must turn it off for one process
    (a personality flag, inherited by the programs it starts; a seccomp profile may refuse it).  The
    node's setting is never changed.  Where it cannot, the reason goes to `marker`."""
    return (f"aslr=$(cat {sysctl} 2>/dev/null || echo unreadable); "
            f"echo \"kernel.randomize_va_space $aslr\" > {setting}; "
            f"if [ \"$aslr\" = 0 ]; then echo 'ASLR is already off on the node (kernel.randomize_va_space=0): "
            f"no ASLR-on run to compare' > {marker}; "
            f"elif ! command -v setarch > /dev/null; then echo 'no setarch on the node: cannot run a point with "
            f"ASLR off without changing kernel.randomize_va_space' > {marker}; "
            "elif ! p=$(setarch \"$(uname -m)\" -R cat /proc/self/personality 2> aslr-probe.err) || "
            "(( (0x${p:-0} & 0x0040000) == 0 )); then "
            f"echo \"setarch -R could not turn ASLR off for a process: $(head -n 1 aslr-probe.err)\" > {marker}; fi")


@rfm.simple_test
class AcceptanceScaling(AcceptanceMixin, YeebenchCheck):
    """1, 2, 4 ... all cores of one node: threads vs processes; speedup, efficiency, knee (paper 003 figs 3-4);
    the full node of processes again with ASLR off for those processes (`setarch -R`, paper 003 figs 2 and 4).

    Every point is one MPI job: the solver's ranks share one grid, and triad_mpi's ranks
    start each repetition together and are timed over one wall interval, so a process
    figure is never the sum of runs that did not overlap in time.
    """

    program = parameter(["yee", "triad"])
    yee = fixture(SolverBinary, scope="environment")
    descr = "Scaling on one node: threads vs processes, speedup/efficiency and the knee"
    sourcesdir = "src"  # beside this file (ReFrame resolves it against the check's folder)
    #: Solver problem (strong scaling: the same grid at every count).  400 steps: a full node of a few
    #: cores then runs for tens of ms; at 40 it ran for 5 ms, mostly warm-up, and the same point
    #: varied by 30 % from run to run.
    yee_opts = variable(str, value="--nx 64 --ny 64 --nz 64 --steps 400 --precision f32 --quiet")
    #: Bytes per triad array (all ranks together); 0: LLC_FACTOR x the node's last-level cache.
    triad_bytes = variable(int, value=0)
    triad_repeats = variable(int, value=10)
    mpicc = variable(str, value="mpicc")
    #: Runs per point; the best counts (short runs on a busy node are noisy).
    repeats = variable(int, value=3)
    #: Marginal efficiency under which the knee is placed.
    knee_threshold = variable(float, value=0.5)
    #: Parallel efficiency (%) a full node must reach in every mode; 0 = report only.
    #: A site makes scaling a gate with e.g. -S AcceptanceScaling.min_efficiency=60
    min_efficiency = variable(float, value=0.0)
    #: Most a full node of processes may lose (%) with ASLR on against the same point with ASLR off
    #: (`setarch -R`): paper 003's cache misses past 12 processes per node were ASLR's.  20 %: below the
    #: paper's loss; a larger cost fails only when the node's noise cannot explain it (aslr_alpha),
    #: else it is NOT MEASURED as within the node's noise.
    aslr_max_cost = variable(float, value=20.0)
    #: Runs with ASLR on and as many with it off, in turn (aslr_order).
    aslr_pairs = variable(int, value=5)
    #: A cost over aslr_max_cost fails only when the chance that noise alone ranked the runs so
    #: (aslr_p_value) is at most this: with 5 pairs, every ASLR-off run but one beat every ASLR-on run.
    aslr_alpha = variable(float, value=0.01)
    num_tasks = 1

    @run_after("init")
    def _tag_built_probe(self):
        if self.program == "triad":  # compiled in the job; the solver comes from its fixture
            self.tags |= {BUILT_IN_JOB}

    @run_after("setup")
    def plan_runs(self):
        self.skip_if(self.repeats < 1 or self.aslr_pairs < 1,
                     f"repeats and aslr_pairs must be >= 1, got {self.repeats} and {self.aslr_pairs}")
        self.skip_if(not 0 < self.aslr_alpha < 1, f"aslr_alpha must lie between 0 and 1, got {self.aslr_alpha}")
        if self.program == "yee":
            binary = self.yee.paths["yee"]
        else:
            binary = "./triad_mpi"
            self._size_triad()
        cores = self.node_topology.num_cores
        self.counts = scaling.powers_of_two_upto(cores)
        self.modes = ["threads", "processes"]
        self.num_tasks = cores  # the allocation holds the largest process run
        self.num_tasks_per_node = cores
        cmds = ([shell.words([self.mpicc, "-O2", "-fopenmp", "-o", "triad_mpi", "triad_mpi.c"])]
                if self.program == "triad" else [])
        for mode in self.modes:
            for n in self.counts:
                ranks, threads = (1, n) if mode == "threads" else (n, 1)
                env = f"OMP_NUM_THREADS={threads} OMP_PLACES=cores OMP_PROC_BIND=close"
                prefix = self._prefix(ranks, threads, cores)
                for r in range(self.repeats):
                    out = f"{mode}_{n}_{r}.out"
                    if self.program == "yee":
                        run = shell.words([binary, *shlex.split(self.yee_opts), "--threads", threads,
                                           "--report", out])
                    else:
                        run = (f"{shell.words([binary, '--bytes', self._bytes, '--repeats', self.triad_repeats])}"
                               f" > {out}")
                    cmds.append(" ".join(part for part in ("env", env, prefix, run) if part))
        cmds += self._aslr_runs(binary, cores)
        sweeps.run_sweep(self, cmds)

    def _aslr_runs(self, binary, cores):
        """The full node of processes again, with ASLR on and off in turn (off: `setarch -R` between the
        launcher and the program, a personality flag of each process; the node's setting stays as it is).
        Runs close in time see the same load on the node, so a busy spell does not pass for ASLR's cost."""
        top = self.counts[-1]
        env = "OMP_NUM_THREADS=1 OMP_PLACES=cores OMP_PROC_BIND=close"
        prefix = self._prefix(top, 1, cores)
        lines = [aslr_probe_line()]
        for mode, r in aslr_order(self.aslr_pairs):
            wrapper = 'setarch "$(uname -m)" -R' if mode == "aslr-off" else ""
            out = f"{mode}_{top}_{r}.out"
            if self.program == "yee":
                run = shell.words([binary, *shlex.split(self.yee_opts), "--threads", 1, "--report", out])
            else:
                run = f"{shell.words([binary, '--bytes', self._bytes, '--repeats', self.triad_repeats])} > {out}"
            line = " ".join(part for part in ("env", env, prefix, wrapper, run) if part)
            lines.append(f"[ -e {ASLR_NOT_COMPARED} ] || {line}")
        return lines

    def _size_triad(self):
        """Arrays of LLC_FACTOR x the last-level cache (from the partition, or this node's sysfs)."""
        self._bytes, self._sizing = self.triad_bytes, "set by triad_bytes"
        if self._bytes:
            return
        llc, how = capabilities.llc_bytes(self.current_partition)
        self.skip_if(llc is None, f"cannot size the arrays: last-level cache unknown ({how}); "
                                             "set -S AcceptanceScaling.triad_bytes=BYTES (>= 4x the LLC)")
        self._bytes = scaling.triad_array_bytes(llc)
        self._sizing = f"{scaling.LLC_FACTOR} x last-level cache ({how}, {llc / 2**20:.0f} MiB)"
        # a node whose memory is small against its cache (a VM handed a big host's L3) cannot hold them
        try:
            memory, source = partition_memory_bytes(self.current_partition)
        except ValueError as err:
            self.skip(f"cannot size the arrays: {err}")
        need = TRIAD_ARRAYS * self._bytes
        if memory is not None and need > MEMORY_SHARE * memory:
            self.skip(f"{TRIAD_ARRAYS} arrays of {self._sizing} need {need / 2**30:.1f} GiB, more than "
                      f"{MEMORY_SHARE:.0%} of the node's {memory / 2**30:.1f} GiB ({source}): set "
                      "-S AcceptanceScaling.triad_bytes=BYTES")

    def _prefix(self, ranks, threads, cores):
        return launch.packed_node_prefix(self, ranks, threads, cores)

    def _fom(self, mode, n):
        """Best FOM of the runs at one point."""
        return max(self._run_foms(mode, n))

    def _run_foms(self, mode, n):
        """Every run's FOM at one point (the ASLR points have aslr_pairs runs, the others repeats)."""
        runs = self.aslr_pairs if mode.startswith("aslr-") else self.repeats
        return [self._fom_of(mode, n, r) for r in range(runs)]

    def _fom_of(self, mode, n, r):
        text = stage_files.read_stage_file(self, f"{mode}_{n}_{r}.out")
        if self.program == "triad":
            ranks, threads = (1, n) if mode == "threads" else (n, 1)  # aslr-on, aslr-off: processes
            return scaling.parse_triad(text, ranks, threads)
        report = parse_yee(text)
        problems = yee_problems(report)
        if problems:
            raise ParseError("; ".join(problems))
        return float(report["mcells_per_s"])

    @sanity_function
    def validate(self):
        unit = "Mcells/s" if self.program == "yee" else "GB/s"
        self._points, lines, details = {}, [], []
        for mode in self.modes:
            points = {}
            for n in self.counts:
                try:
                    points[n] = self._fom(mode, n)
                except (OSError, ParseError, ValueError) as err:
                    why = last_line(self, self.stderr)
                    return self.verdict(False, f"{mode} run with {n}: {err}" + (f" ({why})" if why else ""))
            rows, knee = scaling.analyse(points, self.knee_threshold)
            self._points[mode] = (rows, knee)
            lines.append(scaling.summary(mode, rows, knee, unit))
            details += [f"{mode} {r['workers']}: {r['fom']:.4g} {unit}, speedup {r['speedup']:.2f}, "
                        f"efficiency {100 * r['efficiency']:.0f}%" for r in rows]
        if len(self.modes) == 2:
            top = self.counts[-1]
            ratio = self._points["threads"][0][-1]["fom"] / self._points["processes"][0][-1]["fom"]
            lines.append(f"at {top}: threads/processes = {ratio:.2f}")
        if self.program == "triad":
            lines.append(f"arrays {self._bytes / 2**20:.0f} MiB each, {self._sizing}")
        low = [f"{mode} efficiency {100 * rows[-1]['efficiency']:.0f}% < {self.min_efficiency:g}%"
               for mode, (rows, _) in self._points.items()
               if 100 * rows[-1]["efficiency"] < self.min_efficiency]
        if low:
            return self.verdict(False, "; ".join(low) + " on a full node; " + "; ".join(lines), details)
        superlinear = scaling.superlinear({m: rows for m, (rows, _) in self._points.items()})
        if superlinear:
            return self.not_measured(f"{superlinear}: the figures contradict their model (the node was busy "
                                     "during the smaller runs, or the data fit in cache); run again on an idle "
                                     "node; " + "; ".join(lines), details)
        return self.judge_aslr(lines, details, unit)

    def judge_aslr(self, lines, details, unit):
        """The verdict with the ASLR comparison: the full node of processes with ASLR on against the same point
        with ASLR off, run alternately; NOT MEASURED where the node cannot run the second."""
        self._aslr = None
        setting = last_line(self, ASLR_SETTING) or "kernel.randomize_va_space not read"
        not_compared = last_line(self, ASLR_NOT_COMPARED)
        if not_compared:
            return self.not_measured(f"ASLR on/off not compared: {not_compared}; " + "; ".join(lines),
                                     details + [setting])
        top = self.counts[-1]
        try:
            on_runs, off_runs = self._run_foms("aslr-on", top), self._run_foms("aslr-off", top)
        except (OSError, ParseError, ValueError) as err:
            why = last_line(self, self.stderr)
            return self.verdict(False, f"ASLR comparison with {top} processes: {err}" + (f" ({why})" if why else ""))
        on, off = max(on_runs), max(off_runs)
        cost = scaling.aslr_cost(on, off)
        self._aslr = (on, off, cost)
        lines.append(f"{top} processes with ASLR on {on:.4g} {unit}, off (setarch -R) {off:.4g} {unit}: "
                     f"ASLR costs {cost:.1f}% ({setting})")
        details = details + [f"processes {top} ASLR on: {on:.4g} {unit}, off: {off:.4g} {unit} (best of "
                             f"{self.aslr_pairs} each, in turn)"]
        if cost > self.aslr_max_cost:
            chance = aslr_p_value(on_runs, off_runs)
            spread = (f"on {min(on_runs):.4g}-{max(on_runs):.4g}, off {min(off_runs):.4g}-{max(off_runs):.4g} "
                      f"{unit}; the chance that noise alone ranks them so: p = {chance:.3g}")
            if chance > self.aslr_alpha:
                return self.not_measured(
                    f"ASLR on and off differ by {cost:.1f}% but within this node's noise ({spread} > "
                    f"{self.aslr_alpha:g}); rerun on an idle node or with more pairs "
                    f"(-S AcceptanceScaling.aslr_pairs=N); " + "; ".join(lines), details)
            return self.verdict(False, f"ASLR costs {cost:.1f}% > {self.aslr_max_cost:g}% on a full node of "
                                       f"processes ({spread}; paper 003: cache misses from ASLR; update the "
                                       "kernel); " + "; ".join(lines), details)
        return self.verdict(True, "; ".join(lines), details)

    def collect_foms(self):
        if not self.measured:
            return  # figures that contradict their model are not results
        unit = "Mcells/s" if self.program == "yee" else "GB/s"
        for mode, (rows, knee) in self._points.items():
            for r in rows:
                self.add_fom(f"{mode}_{r['workers']}", r["fom"], unit, "higher")
            self.add_fom(f"{mode}_speedup", rows[-1]["speedup"], "x", "higher")
            self.add_fom(f"{mode}_efficiency", 100 * rows[-1]["efficiency"], "%", "higher")
            # knee: workers where scaling stops paying; the largest count when there is none
            self.add_fom(f"{mode}_knee", knee or rows[-1]["workers"], "workers", "higher")
        if len(self._points) == 2:  # paper 003 fig. 3: threads against processes on a full node
            ratio = self._points["threads"][0][-1]["fom"] / self._points["processes"][0][-1]["fom"]
            self.add_fom("threads_over_processes", ratio, "x", "higher")
        if getattr(self, "_aslr", None):  # paper 003 figs 2 and 4: the same point with ASLR off
            on, off, cost = self._aslr
            self.add_fom(f"processes_{self.counts[-1]}_aslr_on", on, unit, "higher")
            self.add_fom(f"processes_{self.counts[-1]}_aslr_off", off, unit, "higher")
            self.add_fom("aslr_cost", cost, "%", "lower")
