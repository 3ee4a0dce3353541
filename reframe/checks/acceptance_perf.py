"""Acceptance checks, part 3: stressful performance (scaling, network pairs, storage).

Paper 003 found its cluster's problems (scaling collapse past 12 threads per
node, RDMA failing beyond two nodes) only after acceptance; these checks put
such metrics into acceptance.  See acceptance.py for the whole set.
"""
import os
import shlex
import statistics

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import fixture, parameter, run_after, run_before, sanity_function, variable
from reframe.core.backends import getlauncher

from yeebench import capabilities, launch, shell
from yeebench.acceptance import numa_costs, outliers, scaling, storage
from yeebench.acceptance.rfm import AcceptanceMixin, last_line, python_command, run_sweep, span_all_nodes
from yeebench.base import BUILT_IN_JOB, YeebenchCheck
from yeebench.fixtures import ProbeBinaries, SolverBinary
from yeebench.parsers import ParseError
from yeebench.parsers.numactl import parse_hardware
from yeebench.parsers.jsonreport import numa_bw_triad, parse_probe, parse_yee, yee_problems

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
    sourcesdir = "src/acceptance"  # beside this file (ReFrame resolves it against the check's folder)
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
        self.job.launcher = getlauncher("local")()  # the runs below launch themselves
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
        run_sweep(self, cmds)

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
        with open(os.path.join(self.stagedir, f"{mode}_{n}_{r}.out")) as f:
            text = f.read()
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


@rfm.simple_test
class AcceptanceNUMACosts(AcceptanceMixin, YeebenchCheck):
    """Bandwidth from every NUMA node's cores to every node's memory, against `numactl --hardware` distances."""

    descr = "NUMA: measured remote-memory cost agrees with the distance table (paper 003: 16 ~ +60%, 20 ~ +100%)"
    numa_bw_opts = variable(str, value="--size 33554432 --repeats 5")
    probes = fixture(ProbeBinaries, scope="environment")
    #: Slack before a farther node being faster counts as a contradiction.
    tolerance = variable(float, value=0.10)
    num_tasks = 1

    @run_after("setup")
    def plan_runs(self):
        topo = self.node_topology
        self.skip_if(topo.num_numa_nodes < 2, f"{topo.num_numa_nodes} NUMA node on this system: "
                                                         "no remote memory to measure")
        self.require_feature("numactl")
        numa_bw, numactl = self.probes.paths["numa-bw"], "numactl"  # numactl: on the nodes' PATH
        self.job.launcher = getlauncher("local")()  # one process, placed by numactl
        self.nodes = topo.num_numa_nodes
        threads = max(1, topo.num_cores // self.nodes)
        cmds = [f"{numactl} --hardware > numactl.txt"]
        for i in range(self.nodes):
            for j in range(self.nodes):
                cmds.append(f"OMP_NUM_THREADS={threads} {numactl} --cpunodebind={i} --membind={j} "
                            + shell.words([numa_bw, *shlex.split(self.numa_bw_opts), "--threads", threads,
                                           "--expect-nodes", j, "--output", f"numa_{i}_{j}.json"]))
        run_sweep(self, cmds)

    @sanity_function
    def validate(self):
        try:
            with open(os.path.join(self.stagedir, "numactl.txt")) as f:
                distances = parse_hardware(f.read())["distances"]
            bw = []
            for i in range(self.nodes):
                bw.append([])
                for j in range(self.nodes):
                    with open(os.path.join(self.stagedir, f"numa_{i}_{j}.json")) as f:
                        report = parse_probe(f.read(), "numa-bw")
                    if report.get("valid") is not True:
                        raise ParseError(f"numa-bw run cpu {i} / memory {j} is not valid")
                    bw[-1].append(numa_bw_triad(report))
            problems, rows = numa_costs.analyse(bw, distances, self.tolerance)
        except (OSError, ParseError, ValueError) as err:
            why = last_line(self, self.stderr)
            return self.verdict(False, f"{err}" + (f" ({why})" if why else ""))
        self._bw, self._rows = bw, rows
        details = [f"cpu node {r['cpu']} -> memory node {r['mem']}: {r['gbs']:.3g} GB/s, cost "
                   f"{r['cost_percent']:.0f}% (distance implies {r['implied_percent']:.0f}%)" for r in rows]
        if problems:
            return self.verdict(False, "; ".join(problems), details)
        worst = max(rows, key=lambda r: r["cost_percent"])
        return self.verdict(True, f"{self.nodes} NUMA nodes; remote memory costs up to "
                                  f"{worst['cost_percent']:.0f}% (node {worst['cpu']} -> {worst['mem']}; "
                                  f"distance implies {worst['implied_percent']:.0f}%), consistent with the table",
                            details)

    def collect_foms(self):
        local = [self._bw[i][i] for i in range(self.nodes)]
        self.add_fom("local_triad_min", min(local), "GB/s", "higher")
        self.add_fom("remote_triad_min", min(r["gbs"] for r in self._rows), "GB/s", "higher")
        self.add_fom("remote_cost_max", max(r["cost_percent"] for r in self._rows), "%", "lower")


@rfm.simple_test
class AcceptanceNetwork(AcceptanceMixin, YeebenchCheck):
    """Latency and bandwidth of every node pair, collectives over all nodes; outlier nodes named (tests 11-12)."""

    time_limit = "3m"  # seconds of work: a hang becomes a failure, not a 10-minute wait

    descr = ("Network: pair matrix with simultaneous pairs over 2 or more nodes, Allreduce/Bcast checked; "
             "outlier nodes fail")
    sourcesdir = "src/acceptance"  # beside this file (ReFrame resolves it against the check's folder)
    executable = "./pairmatrix"
    tags = {BUILT_IN_JOB}  # compiled in the job
    #: A node is an outlier when worse than the median node by more than this fraction.
    tolerance = variable(float, value=0.5)
    mpicc = variable(str, value="mpicc")
    #: pairmatrix options (the matrix takes N-1 rounds; sizes kept small).
    pairmatrix_opts = variable(str, value="--lat-iters 200 --bw-iters 5 --large 1048576 --coll-iters 20")

    @run_after("setup")
    def place(self):
        one_node = self.current_partition.scheduler.registered_name == "local"
        span_all_nodes(self, 2 if one_node else 1)  # one node: measure the intra-node pair instead
        self.executable_opts = shlex.split(self.pairmatrix_opts)
        # a one-core node still runs its pair
        launch.allow_oversubscription(self, self.num_tasks_per_node, self.node_topology.num_cores)

    @run_before("run")
    def compile_in_job(self):
        self.prerun_cmds = [shell.words([self.mpicc, "-O2", "-o", "pairmatrix", "pairmatrix.c"])]

    def _pairs(self):
        rows = sn.evaluate(sn.extractall(
            r"^pair (\d+) (\S+) (\d+) (\S+) latency_us (\S+) bandwidth_MBs (\S+)$",
            self.stdout, (1, 2, 3, 4, 5, 6)))
        ranks = {r[0] for r in rows} | {r[2] for r in rows}
        hosts = {r[1] for r in rows} | {r[3] for r in rows}
        name = (lambda rank, host: host) if len(hosts) == len(ranks) else (lambda rank, host: f"{host}/{rank}")
        lat = {(name(a, ha), name(b, hb)): float(la) for a, ha, b, hb, la, _ in rows}
        bw = {(name(a, ha), name(b, hb)): float(bb) for a, ha, b, hb, _, bb in rows}
        return lat, bw

    @sanity_function
    def validate(self):
        summary = sn.evaluate(sn.extractall(r"^pairmatrix: .*$", self.stdout))
        if not summary or not summary[-1].endswith(" VALID"):
            why = summary[-1] if summary else (last_line(self, self.stderr) or "no output")
            return self.verdict(False, f"pairmatrix: {why}")
        lat, bw = self._lat, self._bw = self._pairs()
        self._allreduce = sn.evaluate(sn.extractall(r"^collective allreduce bytes (\d+) time_us (\S+)",
                                                    self.stdout, (1, 2)))
        if not lat:
            return self.verdict(False, "pairmatrix ran on a single rank: no pair to measure")
        details = [f"pair {a} - {b}: {lat[(a, b)]:.2f} us, {bw[(a, b)]:.0f} MB/s" for a, b in sorted(lat)]
        bad, notes = [], []
        for figures, direction, metric, unit in ((lat, "lower", "latency", "us"),
                                                  (bw, "higher", "bandwidth", "MB/s")):
            found, note = outliers.find_outliers(figures, direction, self.tolerance)
            bad += outliers.describe(found, metric, unit)
            if note and note not in notes:
                notes.append(note)
        colls = sn.evaluate(sn.extractall(r"^collective (.*)$", self.stdout, 1))
        details += [f"collective {c}" for c in colls]
        if any(c.endswith("INVALID") for c in colls):
            return self.verdict(False, "a collective returned a wrong result", details)
        hosts = {name.split("/")[0] for pair in lat for name in pair}
        if len(hosts) < 2:  # every pair inside one node: shared memory, not the network
            return self.not_measured(
                f"all {len(lat)} pair(s) ran on one node ({', '.join(sorted(hosts))}), so they measured shared "
                "memory, not the network; run on a partition of 2 or more nodes (e.g. make "
                "test-acceptance-vcluster, or --system <cluster> with --flex-alloc-nodes=all)", details)
        if bad:
            return self.verdict(False, "outlier node(s): " + "; ".join(bad), details)
        text = f"{len(lat)} pair(s) of {len(hosts)} nodes measured, collectives correct; "
        text += notes[0] if notes else f"no node worse than the median by more than {self.tolerance:.0%}"
        return self.verdict(True, text, details)

    def collect_foms(self):
        if not self.measured:
            return  # figures of a one-node run are no network figures
        lat, bw = self._lat, self._bw
        self.add_fom("latency_median", statistics.median(lat.values()), "us", "lower")
        self.add_fom("latency_max", max(lat.values()), "us", "lower")
        self.add_fom("bandwidth_median", statistics.median(bw.values()), "MB/s", "higher")
        self.add_fom("bandwidth_min", min(bw.values()), "MB/s", "higher")
        for size, t in self._allreduce:
            self.add_fom(f"allreduce_{size}B", float(t), "us", "lower")


@rfm.simple_test
class AcceptanceStorage(AcceptanceMixin, YeebenchCheck):
    """Write/read bandwidth of the output directory: fio, dd, and the solver's own I/O (test 15)."""

    tool = parameter(["fio", "dd", "yee-io"])
    yee = fixture(SolverBinary, scope="environment")
    descr = "Storage: write and read bandwidth of the output directory (GB/s)"
    #: Directory to measure (default: the test's stage directory, where runs write output).
    storage_dir = variable(str, value="")
    #: Bytes written per file.  Reads bypass (O_DIRECT) or drop the page cache, so a small file is honest.
    size_mib = variable(int, value=128)
    yee_opts = variable(str, value="--nx 64 --ny 64 --nz 64 --steps 20 --quiet")
    #: Solver ranks writing one file each (capped at the cores of a node).
    io_ranks = variable(int, value=2)
    num_tasks = 1

    @run_after("setup")
    def plan(self):
        target = self.storage_dir or self.stagedir
        self._target = target
        if self.tool in ("fio", "dd"):
            self.job.launcher = getlauncher("local")()  # one process on the node, no MPI
        # Reads must come from the storage, not the page cache: O_DIRECT first; where the file
        # system refuses it, drop the file's pages and read only if none are left (pagecache.py).
        drop = f"{python_command('yeebench.acceptance.pagecache')} drop"
        if self.tool == "fio":
            self.require_feature("fio")
            fio = "fio"  # on the nodes' PATH (feature fio)
            common = (f"{fio} --directory={shlex.quote(target)} --bs=1M --size={self.size_mib}M "
                      "--ioengine=psync --end_fsync=1 --output-format=json --name=yeebench-io")
            data = shlex.quote(os.path.join(target, "yeebench-io.0.0"))
            run_sweep(self, [
                f"{common} --rw=write --output=fio_write.json",
                f"if {common} --rw=read --direct=1 --output=fio_read.json 2> fio_read.err; then "
                f"echo O_DIRECT > read_method.txt; else {drop} {data} > read_method.txt && "
                f"{common} --rw=read --invalidate=0 --output=fio_read.json; fi",
                f"rm -f {shlex.quote(target)}/yeebench-io.*"])
        elif self.tool == "dd":
            path = shlex.quote(os.path.join(target, "yeebench-dd.bin"))
            run_sweep(self, [
                f"LC_ALL=C dd if=/dev/zero of={path} bs=1M count={self.size_mib} conv=fsync 2> dd_write.txt",
                f"if LC_ALL=C dd if={path} of=/dev/null bs=1M iflag=direct 2> dd_read.txt; then "
                f"echo O_DIRECT > read_method.txt; else {drop} {path} > read_method.txt && "
                f"LC_ALL=C dd if={path} of=/dev/null bs=1M 2> dd_read.txt; fi",
                f"rm -f {path}"])
        else:
            self._plan_solver_io(target)

    def _plan_solver_io(self, target):
        yee = self.yee.paths["yee"]
        ranks = max(1, min(self.io_ranks, self.node_topology.num_cores))
        self.num_tasks = ranks
        out = os.path.join(target, "yee-io")
        # The solver's output options are read from its --help on the node, when the job runs: a
        # solver without binary per-rank output ends the job with the reason (NOT MEASURED).
        probe = f"{python_command('yeebench.acceptance.storage')} yee-help.txt"
        self.prerun_cmds = [f"{shlex.quote(yee)} --help > yee-help.txt 2>&1",
                            f"if ! YEE_IO_OPTS=$({probe} 2> {UNSUPPORTED}); then exit 0; fi",
                            f"rm -f {UNSUPPORTED}",
                            f"rm -rf {shlex.quote(out)} && mkdir -p {shlex.quote(out)}",
                            f"cd {shlex.quote(out)}"]
        self.executable = yee
        self.executable_opts = (shlex.split(self.yee_opts) + [shell.Verbatim("$YEE_IO_OPTS"), "--report",
                                                               os.path.join(self.stagedir, "yee_io.json")])
        self.postrun_cmds = [f"cd {shlex.quote(self.stagedir)}",
                             f"echo output_bytes $(du -sb {shlex.quote(out)} | cut -f1)",
                             f"rm -rf {shlex.quote(out)}"]

    def _read(self, name):
        with open(os.path.join(self.stagedir, name), errors="replace") as f:
            return f.read()

    @sanity_function
    def validate(self):
        unmeasured = ""
        try:
            if self.tool in ("fio", "dd"):
                method = storage.read_method(self._read("read_method.txt") if os.path.exists(
                    os.path.join(self.stagedir, "read_method.txt")) else "")
                if self.tool == "fio":
                    self._bw = {"write": storage.fio_bandwidth(self._read("fio_write.json"))["write"]}
                    read = lambda: storage.fio_bandwidth(self._read("fio_read.json"))["read"]  # noqa: E731
                else:
                    self._bw = {"write": storage.dd_bandwidth(self._read("dd_write.txt"))}
                    read = lambda: storage.dd_bandwidth(self._read("dd_read.txt"))  # noqa: E731
                if method["measured"]:
                    self._bw["read"] = read()
                else:
                    unmeasured = f"read bandwidth NOT MEASURED: {method['why']}"
                self._read_how = method["why"]
            else:
                if os.path.exists(os.path.join(self.stagedir, UNSUPPORTED)):
                    return self.not_measured(self._read(UNSUPPORTED).strip() or "the solver has no "
                                             "binary per-rank output")
                report = parse_yee(self._read(str(self.stdout)) + self._read("yee_io.json"))
                written = int(sn.evaluate(sn.extractsingle(r"output_bytes (\d+)", self.stdout, 1)))
                io_s = float((report.get("seconds") or {}).get("io") or 0)
                if written <= 0 or io_s <= 0:
                    raise ValueError(f"solver wrote {written} bytes in {io_s} s of I/O")
                self._bw = {"write": written / io_s / 1e9}
                self._solver_note = (f" ({self.num_tasks} ranks wrote {written / 1e6:.1f} MB of binary "
                                     f"per-rank output in {io_s:.3g} s of solver I/O time"
                                     f"{', fsync' if '--output-fsync' in self._read('yee-help.txt') else ''})")
        except (OSError, ValueError, ParseError) as err:
            why = last_line(self, self.stderr)
            return self.verdict(False, f"{self.tool}: {err}" + (f" ({why})" if why else ""))
        figures = ", ".join(f"{k} {v:.3g} GB/s" for k, v in self._bw.items())
        note = (self._solver_note if self.tool == "yee-io"
                else f" ({self.size_mib} MiB file; read {self._read_how})")
        if unmeasured:
            return self.not_measured(f"{self.tool} in {self._target}: {figures}; {unmeasured}")
        return self.verdict(True, f"{self.tool} in {self._target}: {figures}{note}")

    def collect_foms(self):
        if not self.measured and not getattr(self, "_bw", None):
            return  # the solver offered no per-rank output: nothing was measured
        for kind, value in self._bw.items():
            self.add_fom(f"{kind}_bandwidth", value, "GB/s", "higher")
