"""Acceptance checks, part 1: the system works (toolchains, MPI bindings, scheduler and launch).

The acceptance set (tag `acceptance`) is what a site runs before it signs for
a new cluster; it follows paper 003's 17 acceptance tests and adds the
stressful performance checks its authors wished they had run.  Files (each in
its experiment's folder of yeebench/checks/):
  acceptance/acceptance.py          toolchains, MPI C/C++/Fortran bindings, scheduler + launch time
  acceptance/acceptance_node.py     topology vs expected file, kernel settings, IPv4/IPv6
  acceptance/acceptance_multicast.py  multicast scalability
  acceptance/acceptance_scaling.py  thread/process scaling
  numa/acceptance_numa.py           NUMA distance costs
  pt2pt/acceptance_network.py       network pair matrix
  io/acceptance_storage.py          storage bandwidth
  gpu/acceptance_gpu.py             CUDA device query, device-memory bandwidth, N-body
  gpu/acceptance_gpu_stress.py      every GPU of a node loaded at once; ECC and Xid before and after
  gpu/acceptance_opencl.py          OpenCL platforms and devices, a vector addition on each
Every check ends with `[acceptance] PASS|FAIL|NOT MEASURED <check>: <reason>`;
`yeebench acceptance report REPORT.json -o acceptance.html` makes the sign-off page.

    reframe -C reframe/config/settings.py -c reframe/yeebench/checks -R -t acceptance -r
"""
import os
import re
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

from yeebench.acceptance_check import AcceptanceMixin, last_line, nodes_used, span_all_nodes
from yeebench import shell
from yeebench.base import BUILT_IN_JOB, YeebenchCheck

SERIAL_SOURCES = {"c": "hello.c", "c++": "hello.cpp", "fortran": "hello.f90"}
MPI_SOURCES = {"c": "mpi_reduce.c", "c++": "mpi_reduce.cpp",
               "fortran-f08": "mpi_reduce_f08.f90", "fortran": "mpi_reduce_f90.f90"}
#: Compiled in the job before the fortran-f08 binding: without the mpi_f08 module it writes the reason here.
NO_F08 = "mpi_f08-unavailable.txt"


@rfm.simple_test
class AcceptanceToolchain(AcceptanceMixin, YeebenchCheck):
    """C, C++ and Fortran compile and run; the program checks its own answer (paper 003 tests 5, 7)."""

    time_limit = "3m"  # seconds of work: a hang becomes a failure, not a 10-minute wait

    lang = parameter(list(SERIAL_SOURCES))
    descr = "Compilers: a C, C++ or Fortran program builds, runs and computes the right sum"
    sourcesdir = "src"  # beside this file (ReFrame resolves it against the check's folder)
    executable = "./hello"
    tags = {BUILT_IN_JOB}  # compiled in the job
    num_tasks = 1

    @run_before("run")
    def compile_in_job(self):
        env = self.current_environ
        compiler, flags = {"c": (env.cc, "-O2"), "c++": (env.cxx, "-O2 -std=c++17"),
                           "fortran": (env.ftn, "-O2")}[self.lang]
        # the environment's compiler may be several words ("ccache gcc"): each one quoted
        self.prerun_cmds = [shell.words([*shlex.split(compiler), *flags.split(), "-o", "hello",
                                         SERIAL_SOURCES[self.lang]])]

    @sanity_function
    def validate(self):
        line = last_line(self, self.stdout) or last_line(self, self.stderr) or "no output"
        return self.verdict(line.endswith(" VALID"),
                            f"{self.lang} with environment {self.current_environ.name}: {line}")


@rfm.simple_test
class AcceptanceMPIBindings(AcceptanceMixin, YeebenchCheck):
    """MPI C, C++ and Fortran (mpi_f08 where available) on every core of every node (paper 003 test 10)."""

    time_limit = "3m"  # seconds of work: a hang becomes a failure, not a 10-minute wait

    binding = parameter(list(MPI_SOURCES))
    descr = "MPI bindings: compile with the MPI wrappers, run on all cores of all nodes, Allreduce exact"
    sourcesdir = "src"  # beside this file (ReFrame resolves it against the check's folder)
    executable = "./mpi_reduce"
    tags = {BUILT_IN_JOB}  # compiled in the job
    #: MPI compiler wrappers (override with -S mpicc=cc on systems with other names).
    mpicc = variable(str, value="mpicc")
    mpicxx = variable(str, value="mpicxx")
    mpifort = variable(str, value="mpifort")

    @run_after("setup")
    def place(self):
        span_all_nodes(self, self.node_topology.num_cores if self.node_topology else 1)

    @run_before("run")
    def compile_in_job(self):
        wrapper = {"c": self.mpicc, "c++": self.mpicxx}.get(self.binding, self.mpifort)
        self.prerun_cmds = [shell.words([wrapper, "-O2", "-o", "mpi_reduce", MPI_SOURCES[self.binding]])]
        if self.binding == "fortran-f08":
            # probed on the node, where the job compiles: the launch host's compilers say nothing
            self.prerun_cmds.insert(0, f"if ! {shell.quote(self.mpifort)} -o f08_probe f08_probe.f90 > f08_probe.log 2>&1; "
                                       f"then grep -m1 rror f08_probe.log > {NO_F08} || echo failed > {NO_F08}; "
                                       "exit 0; fi")

    @sanity_function
    def validate(self):
        if os.path.exists(os.path.join(self.stagedir, NO_F08)):
            return self.not_measured(f"mpi_f08 module not available from {self.mpifort}: "
                                     f"{last_line(self, NO_F08)}")
        lines = sn.evaluate(sn.extractall(r"^mpi .*$", self.stdout))
        if not lines:
            why = last_line(self, self.stderr) or "no output"
            return self.verdict(False, f"{self.binding}: no result line from rank 0 ({why})")
        line = lines[-1].strip()
        ranks = int(sn.evaluate(sn.extractsingle(r"ranks (\d+)", self.stdout, 1)))
        seen = re.search(r" hosts (\d+) ", line)  # the C and C++ programs count the hosts; else the allocation
        nodes = int(seen.group(1)) if seen else nodes_used(self)
        ok = line.endswith(" VALID") and ranks == self.job.num_tasks
        reason = f"{self.binding} on {nodes} node(s), {self.job.num_tasks} ranks launched: {line}"
        if ok and nodes < 2:
            # test 10 is the bindings over the network: on one node MPI used shared memory
            return self.not_measured(f"{reason}; one node only, so the messages never crossed the network "
                                     "(test 10 needs >= 2 nodes)")
        return self.verdict(ok, reason)


@rfm.simple_test
class AcceptanceLaunch(AcceptanceMixin, YeebenchCheck):
    """A job spans every node; each host answers once per rank slot; launch time is the FOM (test 6)."""

    time_limit = "3m"  # seconds of work: a hang becomes a failure, not a 10-minute wait

    width = parameter(["one-per-node", "all-cores"])
    descr = "Scheduler and launcher: one job over every node, each host reports; launch time"
    executable = "hostname"

    @run_after("setup")
    def place(self):
        cores = self.node_topology.num_cores if self.node_topology else 1
        span_all_nodes(self, 1 if self.width == "one-per-node" else cores)
        # launch time: wall time of the launcher running `hostname` on every rank
        self.prerun_cmds = ["t0=$(date +%s.%N)"]
        self.postrun_cmds = ['t1=$(date +%s.%N)',
                             'awk -v a="$t0" -v b="$t1" \'BEGIN{printf "launch_seconds %.4f\\n", b-a}\'']

    @sanity_function
    def validate(self):
        hosts = sn.evaluate(sn.extractall(r"^(?!launch_seconds )(\S+)$", self.stdout, 1))
        allocated = nodes_used(self)
        counts = {h: hosts.count(h) for h in set(hosts)}
        per_node = self.job.num_tasks_per_node or 1
        problems = [f"{h} answered {n} times, expected {per_node}" for h, n in sorted(counts.items())
                    if n != per_node]
        if len(hosts) != self.job.num_tasks:
            problems.append(f"{len(hosts)} ranks answered, {self.job.num_tasks} launched")
        if len(counts) != allocated:
            problems.append(f"{len(counts)} distinct hosts answered, {allocated} allocated")
        if problems:
            return self.verdict(False, "; ".join(problems))
        reason = (f"{self.job.num_tasks} ranks on {len(counts)} node(s) "
                  f"({', '.join(sorted(counts))}), {per_node} per node")
        scheduler = self.current_partition.scheduler.registered_name
        if scheduler == "local":
            # test 6 is the batch scheduler: the local scheduler runs the job on this host, no batch system
            return self.not_measured(f"{reason}; scheduler 'local' on partition {self.current_partition.fullname}: "
                                     "no batch scheduler took the job, so test 6 was not tested")
        return self.verdict(True, f"{reason} (scheduler {scheduler})")

    def collect_foms(self):
        if not self.measured:
            return  # no batch scheduler: the launch time of a local run vouches for nothing
        self.add_fom("launch_time", sn.extractsingle(r"launch_seconds (\S+)", self.stdout, 1, float),
                     "s", "lower")
