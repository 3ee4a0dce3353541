"""Acceptance checks, part 2: what every node is (topology, kernel settings, IP stack).

One probe (`python -m yeebench.checks.acceptance.nodeprobe`) runs once on every node
of the partition; each check judges one aspect of its records.  See
acceptance.py for the whole set.
"""
import os
import sys

import reframe as rfm
from reframe.core.builtins import run_after, sanity_function, variable

from yeebench.checks.acceptance import nodecheck, nodeprobe
from yeebench import node_topology as topology
from yeebench import stage_files
from yeebench.acceptance_check import (TOPOLOGY_DIR, AcceptanceMixin, last_line, nodes_used,
                                     span_all_nodes)
from yeebench.base import YeebenchCheck


class _NodeProbe(AcceptanceMixin, YeebenchCheck):
    """Runs the node probe once on every node (one rank per node)."""

    time_limit = "3m"  # seconds of work: a hang becomes a failure, not a 10-minute wait

    @run_after("init")
    def set_probe(self):
        # the program and its arguments as separate words: each is quoted on its own
        self.executable, self.executable_opts = sys.executable, ["-m", "yeebench.checks.acceptance.nodeprobe"]

    @run_after("setup")
    def place(self):
        span_all_nodes(self, 1)

    def records(self):
        """Probe records by host; raises ValueError when the output is unusable."""
        records = nodeprobe.parse(stage_files.read_stage_file(self, self.stdout))
        if not records:
            why = last_line(self, self.stderr) or "no output"
            raise ValueError(f"the node probe reported nothing ({why})")
        return records

    def nodes_allocated(self):
        return nodes_used(self)

    def judge(self, evaluate):
        """Run `evaluate(records)` -> (verdict, reason, details) and turn it into the check's verdict.

        verdict: True/False (pass/fail) or one of nodecheck's PASS, FAIL, NOT MEASURED.
        """
        try:
            records = self.records()
        except (OSError, ValueError) as err:
            return self.verdict(False, str(err))
        # recorded with the run (loggable), whatever the verdict
        self.observations = {host: {"topology": rec["topology"], "settings": rec["settings"],
                                    "ipstack": rec["ipstack"]} for host, rec in records.items()}
        verdict, reason, details = evaluate(records)
        if verdict == nodecheck.NOT_MEASURED:
            return self.not_measured(reason, details)
        return self.verdict(verdict in (True, nodecheck.PASS), reason, details)


@rfm.simple_test
class AcceptanceTopology(_NodeProbe):
    """Sockets, cores, NUMA nodes and distances of every node against the expected file."""

    descr = "Topology (hwloc, numactl): all nodes alike and as recorded in reframe/config/topology/"
    #: Folder of expected-topology files (<system>[-<partition>].yaml); shown on the page as given.
    topology_dir = variable(str, value=os.path.normpath(TOPOLOGY_DIR))

    @sanity_function
    def validate(self):
        part = self.current_partition
        system = self.current_system.name
        path = topology.expected_path(self.topology_dir, system, part.name)  # as given, never rewritten
        expected = None
        if path:
            try:
                expected = topology.load_expected(path)
            except topology.TopologyError as err:
                return self.verdict(False, f"expected-topology file unusable: {err}")
        how = nodecheck.RECORD_TOPOLOGY.format(system=system, partition=f" --partition {part.name}",
                                               dir=self.topology_dir, dash_partition=f"-{part.name}")
        return self.judge(lambda recs: nodecheck.topology_verdict(
            recs, expected, path, self.nodes_allocated(), how_to_record=how))


@rfm.simple_test
class AcceptanceKernelSettings(_NodeProbe):
    """ASLR, THP, huge pages, governor, NUMA reclaim: warnings with reasons; nodes must agree."""

    descr = "Kernel settings known to cost performance (paper 003's ASLR case), same on all nodes"

    @sanity_function
    def validate(self):
        def evaluate(records):
            ok, reason, findings = nodecheck.settings_verdict(records)
            details = [f"{f['level'].upper()} {f['host']}: {f['setting']} = {f['value']}: {f['reason']}"
                       for f in findings]
            for line in details:
                if line.startswith("WARNING"):
                    self.logger.warning(f"[acceptance] {line}")
            return ok, reason, details
        return self.judge(evaluate)


@rfm.simple_test
class AcceptanceIPStack(_NodeProbe):
    """IPv4 and IPv6 (dual stack, paper 003 test 14) on the interfaces jobs use, and from each node to the
    next node's addresses; no IPv6, or one node (the fabric never crossed: "same node"): NOT MEASURED."""

    descr = ("IP stack: IPv4 TCP over the interfaces MPI/Slurm give a job (not loopback) on every node; "
             "IPv6 TCP on them too (dual stack); each node to the next node's addresses across the network")
    #: The folder of the stage directory where the nodes' probes meet (the stage is shared by the nodes).
    peers_dir = "ipstack-peers"

    @run_after("init")
    def meet_the_other_nodes(self):
        # a round trip to the node's own address never leaves it: the probes meet and cross the network
        self.executable_opts = list(self.executable_opts) + ["--peers", self.peers_dir]

    @sanity_function
    def validate(self):
        def evaluate(records):
            verdict, reason, ipv6, details = nodecheck.ipstack_verdict(records)
            self._ipv6 = 1 if ipv6 else 0
            return verdict, reason, details
        return self.judge(evaluate)

    def collect_foms(self):
        if self.measured:
            self.add_fom("ipv6_available", getattr(self, "_ipv6", 0), "bool", "higher")
