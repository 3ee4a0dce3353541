"""Acceptance checks, part 4: accelerators (paper 003 tests 9 and 16: CUDA, GPU performance).

Compiled with nvcc in the job and run where a GPU exists; skipped with the
reason elsewhere.  See acceptance.py for the whole set.
"""
import json
import os
import shlex
from pathlib import Path

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable
from reframe.core.backends import getlauncher

from yeebench.acceptance_check import (AcceptanceMixin, build_on_node_or_explain, gpu_present, last_line,
                                       nodes_used, span_all_nodes)
from yeebench import shell
from yeebench.base import BUILT_IN_JOB, YeebenchCheck

#: Written by the job when the node has no nvcc (the reason).
NO_NVCC = "nvcc-missing.txt"

#: Per GPU model (as the CUDA runtime names it): ReFrame reference tuples (value, lower, upper, unit), set
#: from a run on that model with the options below; a system's own reference file wins over them.
GPU_REFERENCES = json.loads((Path(__file__).parent / "src" / "gpu_references.json").read_text())["models"]

#: kernel -> (program options, [(FOM name, regex, unit)])
KERNELS = {
    "devicequery": ("", [("devices", r"^devices (\d+)", "count")]),
    "bandwidth": ("--mib 1024 --repeats 20", [("copy_bandwidth", r"^copy_GBs (\S+)", "GB/s"),
                                              ("triad_bandwidth", r"^triad_GBs (\S+)", "GB/s")]),
    "nbody": ("--bodies 65536 --steps 10", [("nbody_gflops", r"^gflops (\S+)", "GFLOP/s")]),
}


@rfm.simple_test
class AcceptanceGPU(AcceptanceMixin, YeebenchCheck):
    """CUDA device query, device-memory bandwidth and an N-body kernel on every GPU of every node.

    The paper tested each GPU of the cluster: one job spans every node of the partition (one task per
    node), and on each node `each_gpu.sh` runs bandwidth and N-body once per GPU; the figure of merit
    is the weakest GPU's and every GPU's figure is in the details.  The device query runs once per
    node and must see as many GPUs as the partition declares, on every node.  Bandwidth and N-body
    are judged against the reference of the GPU model that ran them (GPU_REFERENCES) where the
    system's own reference file has none.
    """

    kernel = parameter(list(KERNELS))
    descr = ("Accelerators: CUDA device query, device-memory bandwidth, N-body on every GPU of every node "
             "(GPU nodes only)")
    sourcesdir = "src"  # beside this file (ReFrame resolves it against the check's folder)
    tags = {BUILT_IN_JOB}  # compiled with nvcc in the job
    #: nvcc target architectures: native code for Hopper plus PTX that newer GPUs JIT-compile.
    nvcc_arch = variable(str, value="-gencode arch=compute_90,code=sm_90 "
                                    "-gencode arch=compute_80,code=compute_80")
    kernel_opts = variable(str, value="")
    num_tasks = 1

    @run_after("setup")
    def require_gpu(self):
        present, why = gpu_present(self.current_partition)
        self.skip_if(not present, why)
        self.gpus = gpus_per_node(self.current_partition)
        self.num_gpus_per_node = self.gpus  # becomes the scheduler's GPU request (e.g. Slurm --gres)
        span_all_nodes(self, 1)  # one task per node: each_gpu.sh walks the node's GPUs
        if self.current_partition.scheduler.registered_name == "local":
            self.job.launcher = getlauncher("local")()  # one host: no launcher between it and the script
        # nvcc is looked for on the node, when the job runs; without it the verdict is NOT MEASURED
        self.prerun_cmds = build_on_node_or_explain(
            "nvcc", shell.words(["nvcc", "-O3", "-std=c++17", *shlex.split(self.nvcc_arch), "-o", self.kernel,
                                 f"{self.kernel}.cu"]), NO_NVCC,
            f"the {self.kernel} kernel", " (CUDA toolkit)", failed_build_measures=True)
        options = shlex.split(self.kernel_opts or KERNELS[self.kernel][0])
        count = "all" if self.kernel == "devicequery" else str(self.gpus)  # one query lists every device
        self.executable = "bash"
        self.executable_opts = ["each_gpu.sh", count, f"./{self.kernel}"] + options

    def _hosts(self):
        """Hosts that answered, and the number the job spanned."""
        hosts = sorted(set(sn.evaluate(sn.extractall(r"^(\S+) (?:gpu\d+|node) ", self.stdout, 1))))
        return hosts, nodes_used(self)

    @sanity_function
    def validate(self):
        if os.path.exists(os.path.join(self.stagedir, NO_NVCC)):
            return self.not_measured(last_line(self, NO_NVCC))
        if self.kernel == "devicequery":
            return self.validate_query()
        runs = {(host, int(gpu)): line for host, gpu, line in
                sn.evaluate(sn.extractall(r"^(\S+) gpu(\d+) (\w+ .*(?:VALID|INVALID))$", self.stdout, (1, 2, 3)))}
        hosts, spanned = self._hosts()
        missing = [f"{h} GPU {n}" for h in hosts for n in range(self.gpus) if (h, n) not in runs]
        if not hosts or missing or len(hosts) < spanned:
            why = last_line(self, self.stdout) or last_line(self, self.stderr) or "no output"
            gaps = "; ".join(filter(None, [f"no verdict from {', '.join(missing)}" if missing else "",
                                           f"{len(hosts)} of {spanned} node(s) answered" if len(hosts) < spanned
                                           else ""])) or "no verdict from any GPU"
            return self.verdict(False, f"{self.kernel}: {gaps} ({why})")
        names = {(h, int(n)): name for h, n, name in
                 sn.evaluate(sn.extractall(r"^(\S+) gpu(\d+) device_name (.*)$", self.stdout, (1, 2, 3)))}
        details = [f"{h} GPU {n} ({names.get((h, n), '?')}): {line}" for (h, n), line in sorted(runs.items())]
        bad = [f"{h} GPU {n}" for (h, n), line in sorted(runs.items()) if not line.endswith(" VALID")]
        where = f"{self.gpus} GPU(s) on each of {len(hosts)} node(s)"
        reason = (f"{self.kernel}: every GPU VALID ({where})" if not bad else
                  f"{self.kernel}: INVALID on {', '.join(bad)} ({where})")
        return self.verdict(not bad, reason, details)

    def validate_query(self):
        hosts, spanned = self._hosts()
        found = {h: line for h, line in
                 sn.evaluate(sn.extractall(r"^(\S+) node (\w+ .*(?:VALID|INVALID))$", self.stdout, (1, 2)))}
        if not found:
            why = last_line(self, self.stderr) or last_line(self, self.stdout) or "no output"
            return self.verdict(False, f"{self.kernel}: no verdict line ({why})")
        details = [f"{h}: {d}" for h, d in sn.evaluate(sn.extractall(r"^(\S+) node (device .*)$",
                                                                      self.stdout, (1, 2)))]
        names = sn.evaluate(sn.extractall(r'^(\S+) node device \d+ name "([^"]*)" cc (\S+)', self.stdout,
                                          (1, 2, 3)))
        problems, seen = [], {}
        for host, name, cc in names:
            seen.setdefault(host, []).append(f"{name} (cc {cc})")
        for host in hosts:
            line = found.get(host)
            if line is None or not line.endswith(" VALID"):
                problems.append(f"{host}: {line or 'no verdict line'}")
            if len(seen.get(host, [])) < self.gpus:
                problems.append(f"{host}: the partition declares {self.gpus} GPU(s) per node, "
                                f"the node shows {len(seen.get(host, []))}")
        if len(hosts) < spanned:
            problems.append(f"{len(hosts)} of {spanned} node(s) answered")
        models = sorted({m for devices in seen.values() for m in devices})
        if problems:
            return self.verdict(False, f"{self.kernel}: " + "; ".join(problems), details)
        return self.verdict(True, f"{self.kernel}: VALID on {len(hosts)} node(s), {self.gpus} GPU(s) each: "
                                  f"{', '.join(models)}", details)

    def collect_foms(self):
        if not self.measured:
            return  # no nvcc on the node: nothing ran
        for name, regex, unit in KERNELS[self.kernel][1]:
            if self.kernel == "devicequery":  # the fewest devices any node shows
                per_node = sn.extractall(r"^\S+ node " + regex[1:], self.stdout, 1, float)
            else:  # the weakest GPU's figure: acceptance vouches for every GPU
                per_node = sn.extractall(r"^\S+ gpu\d+ " + regex[1:], self.stdout, 1, float)
            self.add_fom(name, sn.min(per_node), unit, "higher")

    @run_before("performance")
    def gpu_model_reference(self):
        """The GPU model's reference for the figures the system's own reference file leaves open."""
        if self.is_dry_run() or not self.measured or self.kernel == "devicequery":
            return
        stdout = os.path.join(self.stagedir, self.job.stdout)  # hooks run outside the stage directory
        models = set(sn.evaluate(sn.extractall(r"^\S+ gpu\d+ device_name (.*)$", stdout, 1)))
        if len(models) != 1:
            return  # no name, or several models in the partition: no single reference applies
        refs = {var: tuple(ref) for var, ref in GPU_REFERENCES.get(models.pop(), {}).items()
                if var in self._foms}
        if refs:
            mine = dict(self.reference.get(self.current_partition.fullname, {})) if self.reference else {}
            self.reference = {self.current_partition.fullname: {**refs, **mine}}


def gpus_per_node(partition):
    """GPUs per node: the partition's `devices` (ReFrame's description), else extras.num_gpus, else 1."""
    declared = sum(d.num_devices or 1 for d in partition.select_devices("gpu"))
    return declared or int(partition.extras.get("num_gpus", 1))
