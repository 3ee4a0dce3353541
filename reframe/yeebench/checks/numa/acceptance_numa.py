"""Acceptance (paper 003): what remote memory costs, against the distances numactl reports.

  AcceptanceNUMACosts   triad bandwidth from every NUMA node's CPUs to every node's memory
                        (numa_costs.py); NOT MEASURED with one NUMA node. FOMs: local_triad_min,
                        remote_triad_min (GB/s), remote_cost_max (%).
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
    num_tasks = 1

    @run_after("setup")
    def plan_runs(self):
        topo = self.node_topology
        self.skip_if(topo.num_numa_nodes < 2, f"{topo.num_numa_nodes} NUMA node on this system: "
                                                         "no remote memory to measure")
        self.require_feature("numactl")
        numa_bw, numactl = self.probes.paths["numa-bw"], "numactl"  # numactl: on the nodes' PATH
        self.nodes = topo.num_numa_nodes
        threads = max(1, topo.num_cores // self.nodes)
        cmds = [f"{numactl} --hardware > numactl.txt"]
        for i in range(self.nodes):
            for j in range(self.nodes):
                cmds.append(f"OMP_NUM_THREADS={threads} {numactl} --cpunodebind={i} --membind={j} "
                            + shell.words([numa_bw, *shlex.split(self.numa_bw_opts), "--threads", threads,
                                           "--expect-nodes", j, "--output", f"numa_{i}_{j}.json"]))
        sweeps.run_sweep(self, cmds)

    @sanity_function
    def validate(self):
        try:
            distances = parse_hardware(stage_files.read_stage_file(self, "numactl.txt"))["distances"]
            bw = []
            for i in range(self.nodes):
                bw.append([])
                for j in range(self.nodes):
                    report = parse_probe(stage_files.read_stage_file(self, f"numa_{i}_{j}.json"), "numa-bw")
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
