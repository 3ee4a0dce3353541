"""Acceptance (paper 003): what remote memory costs, against the distances numactl reports.

  AcceptanceNUMACosts   triad bandwidth from every NUMA node's CPUs to every node's memory
                        (numa_costs.py), the whole matrix `rounds` times in turn; a contradiction
                        of the distance table fails when Mann-Whitney's p that noise ranked the
                        rounds so is at most `alpha`, else it is NOT MEASURED (within the node's
                        noise); NOT MEASURED with one NUMA node. FOMs (each cell's best round):
                        local_triad_min, remote_triad_min (GB/s), remote_cost_max (%).
                        The node's distance table: observations['hardware']['numa_distances'].
"""
import shlex

import reframe as rfm
from reframe.core.builtins import fixture, run_after, sanity_function, variable

from yeebench import shell, stage_files, sweeps
from yeebench.checks.numa import numa_costs
from yeebench.acceptance_check import AcceptanceMixin, last_line
from yeebench.base import YeebenchCheck
from yeebench.fixtures import ProbeBinaries
from yeebench.parsers import ParseError
from yeebench.parsers.numactl import parse_hardware
from yeebench.parsers.jsonreport import numa_bw_triad, parse_probe

#: Written by the yee-io job when the solver offers no binary per-rank output (the reason).
UNSUPPORTED = "yee-io-unsupported.txt"


@rfm.simple_test
class AcceptanceNUMACosts(AcceptanceMixin, YeebenchCheck):
    """Bandwidth from every NUMA node's cores to every node's memory, against `numactl --hardware` distances."""

    descr = "NUMA: measured remote-memory cost agrees with the distance table (paper 003: 16 ~ +60%, 20 ~ +100%)"
    numa_bw_opts = variable(str, value="--size 33554432 --repeats 5")
    probes = fixture(ProbeBinaries, scope="environment")
    #: Slack before a farther node being faster counts as a contradiction.
    tolerance = variable(float, value=0.10)
    #: Times the whole matrix is measured, in turn (a busy spell then weighs on every cell alike).
    rounds = variable(int, value=5)
    #: A contradiction fails only when the chance that noise alone ranked the rounds so is at most this:
    #: with 5 rounds, every round of the faster cell but one beat every round of the other.
    alpha = variable(float, value=0.01)
    num_tasks = 1

    @run_after("setup")
    def plan_runs(self):
        topo = self.node_topology
        self.skip_if(topo.num_numa_nodes < 2, f"{topo.num_numa_nodes} NUMA node on this system: "
                                                         "no remote memory to measure")
        self.skip_if(self.rounds < 1 or not 0 < self.alpha < 1,
                     f"rounds must be >= 1 and alpha between 0 and 1, got {self.rounds} and {self.alpha}")
        self.require_feature("numactl")
        numa_bw, numactl = self.probes.paths["numa-bw"], "numactl"  # numactl: on the nodes' PATH
        self.nodes = topo.num_numa_nodes
        threads = max(1, topo.num_cores // self.nodes)
        cmds = [f"{numactl} --hardware > numactl.txt"]
        for r in range(self.rounds):
            for i in range(self.nodes):
                for j in range(self.nodes):
                    cmds.append(f"OMP_NUM_THREADS={threads} {numactl} --cpunodebind={i} --membind={j} "
                                + shell.words([numa_bw, *shlex.split(self.numa_bw_opts), "--threads", threads,
                                               "--expect-nodes", j, "--output", f"numa_{i}_{j}_{r}.json"]))
        sweeps.run_sweep(self, cmds)

    @sanity_function
    def validate(self):
        try:
            distances = parse_hardware(stage_files.read_stage_file(self, "numactl.txt"))["distances"]
            # the compute node's own table: the report's paper figure reads a case's facts from here
            # (the provenance's topology is the machine that ran ingest)
            self.observations.setdefault("hardware", {})["numa_distances"] = distances
            runs = [[[self._triad(i, j, r) for r in range(self.rounds)] for j in range(self.nodes)]
                    for i in range(self.nodes)]
            problems, within_noise, rows = numa_costs.judge(runs, distances, self.tolerance, self.alpha)
            bw = [[max(cell) for cell in row] for row in runs]
        except (OSError, ParseError, ValueError) as err:
            why = last_line(self, self.stderr)
            return self.verdict(False, f"{err}" + (f" ({why})" if why else ""))
        self._bw, self._rows = bw, rows
        details = [f"cpu node {r['cpu']} -> memory node {r['mem']}: {r['gbs']:.3g} GB/s, cost "
                   f"{r['cost_percent']:.0f}% (distance implies {r['implied_percent']:.0f}%)" for r in rows]
        if problems:
            return self.verdict(False, "; ".join(problems), details)
        if within_noise:
            return self.not_measured(f"the distance table is contradicted only within this node's noise (p > "
                                     f"{self.alpha:g}): " + "; ".join(within_noise) + "; rerun on an idle node "
                                     "or with more rounds (-S AcceptanceNUMACosts.rounds=N)", details)
        worst = max(rows, key=lambda r: r["cost_percent"])
        return self.verdict(True, f"{self.nodes} NUMA nodes; remote memory costs up to "
                                  f"{worst['cost_percent']:.0f}% (node {worst['cpu']} -> {worst['mem']}; "
                                  f"distance implies {worst['implied_percent']:.0f}%), consistent with the table",
                            details)

    def _triad(self, i, j, r):
        report = parse_probe(stage_files.read_stage_file(self, f"numa_{i}_{j}_{r}.json"), "numa-bw")
        if report.get("valid") is not True:
            raise ParseError(f"numa-bw run cpu {i} / memory {j} (round {r + 1}) is not valid")
        return numa_bw_triad(report)

    def collect_foms(self):
        if not self.measured:
            return  # a contradiction within the noise: the figures vouch for nothing
        local = [self._bw[i][i] for i in range(self.nodes)]
        self.add_fom("local_triad_min", min(local), "GB/s", "higher")
        self.add_fom("remote_triad_min", min(r["gbs"] for r in self._rows), "GB/s", "higher")
        self.add_fom("remote_cost_max", max(r["cost_percent"] for r in self._rows), "%", "lower")
