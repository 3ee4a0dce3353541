"""Acceptance checks, part 3: stressful performance (scaling, network pairs, storage).

Paper 003 found its cluster's problems (scaling collapse past 12 threads per
node, RDMA failing beyond two nodes) only after acceptance; these checks put
such metrics into acceptance.  See acceptance.py for the whole set.
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

#: Written by the yee-io job when the solver offers no binary per-rank output (the reason).
UNSUPPORTED = "yee-io-unsupported.txt"


@rfm.simple_test
class AcceptanceScaling(AcceptanceMixin, YeebenchCheck):
    """1, 2, 4 ... all cores of one node: threads vs processes; speedup, efficiency, knee (paper 003 figs 3-4).

    Every point is one MPI job: the solver's ranks share one grid, and triad_mpi's ranks
    start each repetition together and are timed over one wall interval, so a process
    figure is never the sum of runs that did not overlap in time.
    """

    program = parameter(["yee", "triad"])
    yee = fixture(SolverBinary, scope="environment")
    descr = "Scaling on one node: threads vs processes, speedup/efficiency and the knee"
    sourcesdir = "src"  # beside this file (ReFrame resolves it against the check's folder)
    #: Solver problem (strong scaling: the same grid at every count).
    yee_opts = variable(str, value="--nx 64 --ny 64 --nz 64 --steps 40 --precision f32 --quiet")
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
    num_tasks = 1

    @run_after("init")
    def _tag_built_probe(self):
        if self.program == "triad":  # compiled in the job; the solver comes from its fixture
            self.tags |= {BUILT_IN_JOB}

    @run_after("setup")
    def plan_runs(self):
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
        sweeps.run_sweep(self, cmds)

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

    def _prefix(self, ranks, threads, cores):
        return launch.packed_node_prefix(self, ranks, threads, cores)

    def _fom(self, mode, n):
        """Best FOM of the repeats at one point."""
        return max(self._fom_of(mode, n, r) for r in range(self.repeats))

    def _fom_of(self, mode, n, r):
        text = stage_files.read_stage_file(self, f"{mode}_{n}_{r}.out")
        if self.program == "triad":
            ranks, threads = (1, n) if mode == "threads" else (n, 1)
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
