"""Acceptance, paper 003 test 13: network multicast scalability.

AcceptanceMulticast runs the `mcast` probe (src/mcast.c, built on a node by the
McastProbe fixture with ReFrame's SingleSource build system) with one rank per node: rank 0
sends UDP datagrams to an administratively scoped IPv4 multicast group, and in each round 1, 2,
4 ... all other nodes have joined it and count what arrives. PASS when every round delivered at
least `min_delivery` of the datagrams to every receiver; FAIL below that, or when a datagram
arrived damaged; NOT MEASURED when no receiver was on another node (kernel loopback, not the
network), when the network or kernel refuses multicast (the probe's SKIP reason: no multicast
interface, a socket option refused, a join refused), or when the datagrams a receiver missed reached
its node and overflowed its socket buffer (the kernel's UDP RcvbufErrors: the receiving process was not
scheduled in time on a busy node, which on shared virtual nodes happens with no fault in the network).
FOMs: multicast_delivered (% of datagrams, worst receiver of the worst round), multicast_mbps_1
and multicast_mbps_all (the slowest receiver's rate with one receiver and with all),
multicast_scaling (x: all over one; 1 = the fabric replicates for free). Rank 0 sends as fast as it
can in every round, so the rates follow the sender and the machine's load too: on shared virtual nodes
the scaling was measured both below and above 1 (0.04-1.7), which says those nodes cannot show it.
"""
import shlex

import reframe as rfm
from reframe.core.builtins import fixture, run_after, sanity_function, variable

from yeebench import launch, stage_files
from yeebench.checks.acceptance import multicast
from yeebench.acceptance_check import AcceptanceMixin, ProbeBuild, last_line, span_all_nodes
from yeebench.base import BUILT_IN_JOB, YeebenchCheck


class McastProbe(ProbeBuild):
    """src/mcast.c built with the MPI C wrapper on a node (-S mpicc=cc on other systems)."""
    sourcesdir = "src"  # beside this file (ReFrame resolves it against the check's folder)
    source = "mcast.c"
    program = "mcast"
    mpicc = variable(str, value="mpicc")

    def compiler(self):
        return self.mpicc


@rfm.simple_test
class AcceptanceMulticast(AcceptanceMixin, YeebenchCheck):
    """IP multicast from one node to the others, over growing receiver counts (test 13)."""

    time_limit = "3m"
    descr = "Network: IP multicast from one node to 1, 2, 4 ... all others; delivery and rate per receiver count"
    #: The probe, built on a node of the partition (a node that cannot build it: NOT MEASURED, why).
    probe = fixture(McastProbe, scope="environment")
    tags = {BUILT_IN_JOB}  # the probe is compiled in a job from the suite's source
    #: mcast options (datagrams per round, bytes each; --iface NAME to choose the interface).
    mcast_opts = variable(str, value="--count 2000 --size 1024")
    #: Smallest fraction of the datagrams every receiver must get in every round.
    min_delivery = variable(float, value=0.99)

    def is_smoke_case(self):
        return True

    smoke_overrides = {"mcast_opts": "--count 200 --size 1024"}

    @run_after("setup")
    def place(self):
        # A runtime-only node or image measures nothing rather than failing to launch: it may lack the
        # wrapper, or have the wrapper (Debian's openmpi-bin) without the compiler behind it.
        why = self.probe.not_built()
        self.skip_if(why, why)
        self.executable = self.probe.path
        one_node = self.current_partition.scheduler.registered_name == "local"
        span_all_nodes(self, 2 if one_node else 1)
        self.executable_opts = shlex.split(self.mcast_opts)
        launch.allow_oversubscription(self, self.num_tasks_per_node, self.node_topology.num_cores)

    @sanity_function
    def validate(self):
        try:
            summary, self._rounds = multicast.parse(stage_files.read_stage_file(self, self.stdout))
        except (OSError, multicast.McastOutputError) as err:
            return self.verdict(False, f"mcast: {err}; {last_line(self, self.stderr) or 'nothing on stderr'}")
        status, reason = multicast.verdict(summary, self._rounds, self.min_delivery)
        if status == "not measured":
            return self.not_measured(reason, multicast.details(self._rounds))
        return self.verdict(status == "pass", reason, multicast.details(self._rounds))

    def collect_foms(self):
        if not self.measured:
            return
        for name, value, unit, direction in multicast.foms(self._rounds):
            self.add_fom(name, value, unit, direction)
