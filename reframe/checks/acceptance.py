"""Acceptance checks: what a site runs before it signs for a new cluster (tag `acceptance`).

Modelled on the acceptance of a GPU cluster (paper 003) plus the stressful
performance checks its authors wished they had run: toolchains, MPI bindings,
scheduler and launch, topology and kernel settings, thread scaling, network
pairs and collectives, IP stack, storage, accelerators.  Every check ends
with `[acceptance] PASS|FAIL|SKIP <check>: <reason>`; `yeebench acceptance
report REPORT.json -o acceptance.html` turns a run into the sign-off page.

    reframe -C reframe/config/settings.py -c reframe/checks/acceptance.py -t acceptance -r
"""
import os
import sys

import reframe as rfm
import reframe.utility.sanity as sn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))  # yeebench without install

from yeebench.acceptance import (nodecheck, nodeprobe, outliers, scaling,  # noqa: E402
                                 topology)
from yeebench.acceptance.rfm import (CUDA_SOURCES, SOURCES, TOPOLOGY_DIR,  # noqa: E402
                                     AcceptanceMixin, compiles, cores_per_node, find_binary,
                                     gpu_present, launch_prefix, python_command,
                                     span_all_nodes)

SERIAL_SOURCES = {"c": "hello.c", "c++": "hello.cpp", "fortran": "hello.f90"}
MPI_SOURCES = {"c": "mpi_reduce.c", "c++": "mpi_reduce.cpp",
               "fortran-f08": "mpi_reduce_f08.f90", "fortran": "mpi_reduce_f90.f90"}
F08_PROBE = "program p\n  use mpi_f08\n  call MPI_Init()\n  call MPI_Finalize()\nend program p\n"


class _AcceptanceBuild(rfm.RegressionTest, AcceptanceMixin):
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    build_system = "SingleSource"
    sourcesdir = SOURCES
    maintainers = ["yeebench"]


@rfm.simple_test
class AcceptanceToolchain(_AcceptanceBuild):
    """C, C++ and Fortran compile and run; the program checks its own answer."""

    lang = parameter(list(SERIAL_SOURCES))
    descr = "Compilers: a C, C++ or Fortran program builds, runs and computes the right sum"
    num_tasks = 1
    local = True

    @run_before("compile")
    def set_source(self):
        self.sourcepath = SERIAL_SOURCES[self.lang]
        self.executable = "./hello"
        self.build_system.executable = "hello"
        self.build_system.cflags = ["-O2"]
        self.build_system.cxxflags = ["-O2", "-std=c++17"]

    @sanity_function
    def validate(self):
        line = self._last_line()
        return self.verdict(line.endswith(" VALID"), f"{self.lang}, environment "
                                                      f"{self.current_environ.name}: {line}")

    def _last_line(self):
        try:
            with open(os.path.join(self.stagedir, str(self.stdout))) as f:
                lines = [ln.strip() for ln in f if ln.strip()]
            return lines[-1] if lines else "no output"
        except OSError:
            return "no output"


@rfm.simple_test
class AcceptanceMPIBindings(_AcceptanceBuild):
    """MPI C, C++ and Fortran (mpi_f08 where the library has it) bindings across the partition."""

    binding = parameter(list(MPI_SOURCES))
    descr = "MPI bindings: compile with the MPI wrappers, run on every node, Allreduce is exact"
    num_tasks = 0  # flexible: all idle nodes of the partition
    #: MPI compiler wrappers (override with -S mpicc=cc on Cray-like systems).
    mpicc = variable(str, value="mpicc")
    mpicxx = variable(str, value="mpicxx")
    mpifort = variable(str, value="mpifort")

    @run_after("setup")
    def place_and_probe(self):
        span_all_nodes(self, cores_per_node(self.current_partition))
        if self.binding == "fortran-f08":
            ok, why = compiles([self.mpifort], F08_PROBE, ".f90")
            self.acceptance_skip_if(not ok, f"mpi_f08 module not available from {self.mpifort}: {why}")

    @run_before("compile")
    def set_source(self):
        self.sourcepath = MPI_SOURCES[self.binding]
        self.executable = "./mpi_reduce"
        self.build_system.executable = "mpi_reduce"
        self.build_system.cc = self.mpicc
        self.build_system.cxx = self.mpicxx
        self.build_system.ftn = self.mpifort

    @sanity_function
    def validate(self):
        text = sn.evaluate(sn.extractall(r"^mpi .*$", self.stdout))
        nodes = len(set(self.job.nodelist or [])) or 1
        if not text:
            return self.verdict(False, f"{self.binding}: no result line from rank 0")
        line = text[-1].strip()
        ranks = sn.evaluate(sn.extractsingle(r"ranks (\d+)", self.stdout, 1, int))
        ok = line.endswith("VALID") and not line.endswith("INVALID") and ranks == self.job.num_tasks
        return self.verdict(ok, f"{self.binding} on {nodes} node(s), {self.job.num_tasks} ranks: {line}")


@rfm.simple_test
class AcceptanceLaunch(rfm.RunOnlyRegressionTest, AcceptanceMixin):
    """The scheduler runs a job over every node; launch time of N ranks is the FOM."""

    width = parameter(["one-per-node", "all-cores"])
    descr = "Scheduler and launcher: one job spans every node, each host reports (once per node)"
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    executable = "hostname"
    num_tasks = 0

    @run_after("setup")
    def place(self):
        span_all_nodes(self, 1 if self.width == "one-per-node" else cores_per_node(self.current_partition))
        # launch time = wall time of the launcher running `hostname` on every rank
        self.prerun_cmds = ["t0=$(date +%s.%N)"]
        self.postrun_cmds = ['t1=$(date +%s.%N)',
                             'awk -v a="$t0" -v b="$t1" \'BEGIN{printf "launch_seconds %.4f\\n", b-a}\'']
        self.perf_directions = {"launch_time": "lower"}

    @sanity_function
    def validate(self):
        hosts = sn.evaluate(sn.extractall(r"^(?!launch_seconds)(\S+)$", self.stdout, 1))
        allocated = sorted(set(self.job.nodelist or []))
        counts = {h: hosts.count(h) for h in set(hosts)}
        per_node = self.job.num_tasks_per_node or 1
        problems = [f"{h} reported {n} times, expected {per_node}" for h, n in sorted(counts.items())
                    if n != per_node]
        if len(hosts) != self.job.num_tasks:
            problems.append(f"{len(hosts)} ranks reported, {self.job.num_tasks} launched")
        if allocated and len(counts) != len(allocated):
            problems.append(f"{len(counts)} distinct hosts answered, {len(allocated)} allocated")
        if problems:
            return self.verdict(False, "; ".join(problems))
        return self.verdict(True, f"{self.job.num_tasks} ranks on {len(counts)} node(s) "
                                  f"({', '.join(sorted(counts))}), {per_node} per node")

    @performance_function("s")
    def launch_time(self):
        return sn.extractsingle(r"launch_seconds (\S+)", self.stdout, 1, float)


class _NodeProbe(rfm.RunOnlyRegressionTest, AcceptanceMixin):
    """Runs the node probe once on every node (one rank per node)."""

    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    @run_after("init")
    def set_probe(self):
        self.executable = python_command("yeebench.acceptance.nodeprobe")

    @run_after("setup")
    def place(self):
        span_all_nodes(self, 1)

    def records(self):
        with open(os.path.join(self.stagedir, str(self.stdout))) as f:
            return nodeprobe.parse(f.read())

    def nodes_allocated(self):
        return len(set(self.job.nodelist or [])) or None


@rfm.simple_test
class AcceptanceTopology(_NodeProbe):
    """Sockets, cores, NUMA nodes and distances of every node against the expected file."""

    descr = "Topology (hwloc, numactl): all nodes alike and as recorded in reframe/config/topology/"
    #: Folder of expected-topology files (<system>[-<partition>].yaml).
    topology_dir = variable(str, value=os.path.abspath(TOPOLOGY_DIR))

    @sanity_function
    def validate(self):
        part = self.current_partition
        path = topology.expected_path(self.topology_dir, part.fullname.split(":")[0], part.name)
        expected = None
        if path:
            try:
                expected = topology.load_expected(path)
            except topology.TopologyError as err:
                return self.verdict(False, f"expected-topology file unusable: {err}")
        ok, reason, details = nodecheck.topology_verdict(self.records(), expected, path,
                                                         self.nodes_allocated())
        return self.verdict(ok, reason, details)


@rfm.simple_test
class AcceptanceKernelSettings(_NodeProbe):
    """ASLR, THP, huge pages, governor, NUMA reclaim: warnings with reasons, nodes must agree."""

    descr = "Kernel settings known to cost performance (paper 003's ASLR case), same on all nodes"

    @sanity_function
    def validate(self):
        ok, reason, findings = nodecheck.settings_verdict(self.records())
        details = [f"{f['level'].upper()} {f['host']}: {f['setting']} = {f['value']}: {f['reason']}"
                   for f in findings]
        for line in details:
            if line.startswith("WARNING"):
                self.logger.warning(line)
        return self.verdict(ok, reason, details)


@rfm.simple_test
class AcceptanceIPStack(_NodeProbe):
    """IPv4 and IPv6 (dual stack) on every node; IPv6 absence is reported, not failed."""

    descr = "IP stack: IPv4 works, IPv6 availability reported (paper 003 test 14)"

    @sanity_function
    def validate(self):
        ok, reason, ipv6 = nodecheck.ipstack_verdict(self.records())
        self.perf_directions = {"ipv6_available": "higher"}
        self._ipv6 = 1.0 if ipv6 else 0.0
        return self.verdict(ok, reason)

    @performance_function("bool")
    def ipv6_available(self):
        return self._ipv6


@rfm.simple_test
class AcceptanceNetwork(_AcceptanceBuild):
    """Latency and bandwidth of every node pair, collectives over all nodes, outlier nodes named."""

    descr = "Network: pair matrix (simultaneous pairs), Allreduce/Bcast checked; outlier nodes fail"
    sourcepath = "pairmatrix.c"
    executable = "./pairmatrix"
    #: An outlier node is worse than the median node by more than this fraction.
    tolerance = variable(float, value=0.5)
    mpicc = variable(str, value="mpicc")
    #: Options of pairmatrix (small sizes: the matrix is N-1 rounds).
    pairmatrix_opts = variable(list, value=["--lat-iters", "200", "--bw-iters", "5",
                                            "--large", "1048576", "--coll-iters", "20"])

    @run_after("setup")
    def place(self):
        self.build_system.cc = self.mpicc
        self.build_system.executable = "pairmatrix"
        self.build_system.cflags = ["-O2"]
        self.executable_opts = list(self.pairmatrix_opts)
        local = self.current_partition.scheduler.registered_name == "local"
        span_all_nodes(self, 2 if local else 1)  # one node: measure the intra-node pair instead
        self.perf_directions = {"latency_median": "lower", "bandwidth_min": "higher",
                                "allreduce_8B": "lower", "allreduce_large": "lower"}

    def _pairs(self):
        rows = sn.evaluate(sn.extractall(
            r"^pair (\d+) (\S+) (\d+) (\S+) latency_us (\S+) bandwidth_MBs (\S+)$",
            self.stdout, (1, 2, 3, 4, 5, 6)))
        hosts_unique = len({r[1] for r in rows} | {r[3] for r in rows}) == len(
            {r[0] for r in rows} | {r[2] for r in rows})
        name = (lambda rank, host: host) if hosts_unique else (lambda rank, host: f"{host}/{rank}")
        lat = {(name(a, ha), name(b, hb)): float(la) for a, ha, b, hb, la, _ in rows}
        bw = {(name(a, ha), name(b, hb)): float(bb) for a, ha, b, hb, _, bb in rows}
        return lat, bw

    @sanity_function
    def validate(self):
        summary = sn.evaluate(sn.extractall(r"^pairmatrix: .*$", self.stdout))
        if not summary or not summary[-1].endswith(" VALID"):
            return self.verdict(False, f"pairmatrix: {summary[-1] if summary else 'no summary line'}")
        lat, bw = self._pairs()
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
        if bad:
            return self.verdict(False, "outlier node(s): " + "; ".join(bad), details)
        text = f"{len(lat)} pair(s) measured, collectives correct"
        text += f"; {notes[0]}" if notes else f"; no node worse than the median by > {self.tolerance:.0%}"
        return self.verdict(True, text, details)

    @performance_function("us")
    def latency_median(self):
        import statistics
        return statistics.median(self._pairs()[0].values())

    @performance_function("MB/s")
    def bandwidth_min(self):
        return min(self._pairs()[1].values())

    @performance_function("us")
    def allreduce_8B(self):
        return sn.extractsingle(r"^collective allreduce bytes 8 time_us (\S+)", self.stdout, 1, float)

    @performance_function("us")
    def allreduce_large(self):
        return sn.extractall(r"^collective allreduce bytes \d+ time_us (\S+)", self.stdout, 1, float)[-1]
