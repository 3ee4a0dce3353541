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

from yeebench.acceptance_check import AcceptanceMixin, build_on_node_or_explain, gpu_present, last_line
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
    """CUDA device query, device-memory bandwidth and an N-body kernel on every GPU of the node.

    The paper tested each GPU: bandwidth and N-body run once per GPU (`each_gpu.sh`), the figure of
    merit is the weakest GPU's and every GPU's figure is in the details; the device query must see
    as many GPUs as the partition declares.  Bandwidth and N-body are judged against the reference
    of the GPU model that ran them (GPU_REFERENCES) where the system's own reference file has none.
    """

    kernel = parameter(list(KERNELS))
    descr = "Accelerators: CUDA device query, device-memory bandwidth, N-body on every GPU (GPU nodes only)"
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
        self.job.launcher = getlauncher("local")()
        # nvcc is looked for on the node, when the job runs; without it the verdict is NOT MEASURED
        self.prerun_cmds = build_on_node_or_explain(
            "nvcc", shell.words(["nvcc", "-O3", "-std=c++17", *shlex.split(self.nvcc_arch), "-o", self.kernel,
                                 f"{self.kernel}.cu"]), NO_NVCC,
            f"the {self.kernel} kernel", " (CUDA toolkit)", failed_build_measures=True)
        options = shlex.split(self.kernel_opts or KERNELS[self.kernel][0])
        if self.kernel == "devicequery":  # one run lists every device
            self.executable, self.executable_opts = f"./{self.kernel}", options
        else:
            self.executable = "bash"
            self.executable_opts = ["each_gpu.sh", str(self.gpus), f"./{self.kernel}"] + options

    @sanity_function
    def validate(self):
        if os.path.exists(os.path.join(self.stagedir, NO_NVCC)):
            return self.not_measured(last_line(self, NO_NVCC))
        if self.kernel == "devicequery":
            return self.validate_query()
        runs = {int(gpu): line for gpu, line in
                sn.evaluate(sn.extractall(r"^gpu(\d+) (\w+ .*(?:VALID|INVALID))$", self.stdout, (1, 2)))}
        missing = [n for n in range(self.gpus) if n not in runs]
        if missing:
            why = last_line(self, self.stdout) or last_line(self, self.stderr) or "no output"
            return self.verdict(False, f"{self.kernel}: no verdict from GPU(s) {missing} of {self.gpus} ({why})")
        names = dict(sn.evaluate(sn.extractall(r"^gpu(\d+) device_name (.*)$", self.stdout, (1, 2))))
        details = [f"GPU {n} ({names.get(str(n), '?')}): {line}" for n, line in sorted(runs.items())]
        bad = [n for n, line in runs.items() if not line.endswith(" VALID")]
        reason = (f"{self.kernel}: every GPU VALID ({self.gpus})" if not bad else
                  f"{self.kernel}: INVALID on GPU(s) {sorted(bad)} of {self.gpus}")
        return self.verdict(not bad, reason, details)

    def validate_query(self):
        found = sn.evaluate(sn.extractall(r"^(\w+ .*(VALID|INVALID))$", self.stdout, 1))
        if not found:
            why = last_line(self, self.stderr) or "no output"
            return self.verdict(False, f"{self.kernel}: no verdict line ({why})")
        line = found[-1]
        details = list(sn.evaluate(sn.extractall(r"^device .*$", self.stdout)))
        names = sn.evaluate(sn.extractall(r'^device \d+ name "([^"]*)" cc (\S+)', self.stdout, (1, 2)))
        if names:
            line += "; " + ", ".join(f"{n} (cc {cc})" for n, cc in names)
        seen = len(names)
        ok = line.split(";")[0].endswith(" VALID") and seen >= self.gpus
        if seen < self.gpus:
            line += f"; the partition declares {self.gpus} GPU(s) per node, the node shows {seen}"
        return self.verdict(ok, f"{self.kernel}: {line}", details)

    def collect_foms(self):
        if not self.measured:
            return  # no nvcc on the node: nothing ran
        for name, regex, unit in KERNELS[self.kernel][1]:
            if self.kernel == "devicequery":
                self.add_fom(name, sn.extractsingle(regex, self.stdout, 1, float), unit, "higher")
            else:  # the weakest GPU's figure: acceptance vouches for every GPU
                per_gpu = sn.extractall(r"^gpu\d+ " + regex[1:], self.stdout, 1, float)
                self.add_fom(name, sn.min(per_gpu), unit, "higher")

    @run_before("performance")
    def gpu_model_reference(self):
        """The GPU model's reference for the figures the system's own reference file leaves open."""
        if self.is_dry_run() or not self.measured or self.kernel == "devicequery":
            return
        stdout = os.path.join(self.stagedir, self.job.stdout)  # hooks run outside the stage directory
        models = set(sn.evaluate(sn.extractall(r"^gpu\d+ device_name (.*)$", stdout, 1)))
        if len(models) != 1:
            return  # no name, or several models on one node: no single reference applies
        refs = {var: tuple(ref) for var, ref in GPU_REFERENCES.get(models.pop(), {}).items()
                if var in self._foms}
        if refs:
            mine = dict(self.reference.get(self.current_partition.fullname, {})) if self.reference else {}
            self.reference = {self.current_partition.fullname: {**refs, **mine}}


def gpus_per_node(partition):
    """GPUs per node: the partition's `devices` (ReFrame's description), else extras.num_gpus, else 1."""
    declared = sum(d.num_devices or 1 for d in partition.select_devices("gpu"))
    return declared or int(partition.extras.get("num_gpus", 1))
