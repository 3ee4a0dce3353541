"""Acceptance checks, part 4: accelerators (paper 003 tests 9 and 16: CUDA, GPU performance).

Compiled with nvcc in the job and run where a GPU exists; skipped with the
reason elsewhere.  See acceptance.py for the whole set.
"""
import os
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, sanity_function, variable
from reframe.core.backends import getlauncher

from yeebench.acceptance.rfm import AcceptanceMixin, build_on_node_or_explain, gpu_present, last_line
from yeebench import shell
from yeebench.base import BUILT_IN_JOB, YeebenchCheck

#: Written by the job when the node has no nvcc (the reason).
NO_NVCC = "nvcc-missing.txt"

#: kernel -> (program options, [(FOM name, regex, unit)])
KERNELS = {
    "devicequery": ("", [("devices", r"^devices (\d+)", "count")]),
    "bandwidth": ("--mib 1024 --repeats 20", [("copy_bandwidth", r"^copy_GBs (\S+)", "GB/s"),
                                              ("triad_bandwidth", r"^triad_GBs (\S+)", "GB/s")]),
    "nbody": ("--bodies 65536 --steps 10", [("nbody_gflops", r"^gflops (\S+)", "GFLOP/s")]),
}


@rfm.simple_test
class AcceptanceGPU(AcceptanceMixin, YeebenchCheck):
    """CUDA device query, device-memory bandwidth and an N-body kernel on the node's GPU."""

    kernel = parameter(list(KERNELS))
    descr = "Accelerators: CUDA device query, device-memory bandwidth, N-body (GPU nodes only)"
    sourcesdir = "src/cuda"  # beside this file (ReFrame resolves it against the check's folder)
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
        self.num_gpus_per_node = 1  # becomes the scheduler's GPU request (e.g. Slurm --gres)
        self.job.launcher = getlauncher("local")()
        # nvcc is looked for on the node, when the job runs; without it the verdict is NOT MEASURED
        self.prerun_cmds = build_on_node_or_explain(
            "nvcc", shell.words(["nvcc", "-O3", "-std=c++17", *shlex.split(self.nvcc_arch), "-o", self.kernel,
                                 f"{self.kernel}.cu"]), NO_NVCC,
            f"the {self.kernel} kernel", " (CUDA toolkit)", failed_build_measures=True)
        self.executable = f"./{self.kernel}"
        self.executable_opts = shlex.split(self.kernel_opts or KERNELS[self.kernel][0])

    @sanity_function
    def validate(self):
        if os.path.exists(os.path.join(self.stagedir, NO_NVCC)):
            return self.not_measured(last_line(self, NO_NVCC))
        found = sn.evaluate(sn.extractall(r"^(\w+ .*(VALID|INVALID))$", self.stdout, 1))
        if not found:
            why = last_line(self, self.stderr) or "no output"
            return self.verdict(False, f"{self.kernel}: no verdict line ({why})")
        line = found[-1]
        details = list(sn.evaluate(sn.extractall(r"^device .*$", self.stdout)))
        names = sn.evaluate(sn.extractall(r'^device \d+ name "([^"]*)" cc (\S+)', self.stdout, (1, 2)))
        if names:
            line += "; " + ", ".join(f"{n} (cc {cc})" for n, cc in names)
        return self.verdict(line.split(";")[0].endswith(" VALID"), f"{self.kernel}: {line}", details)

    def collect_foms(self):
        if not self.measured:
            return  # no nvcc on the node: nothing ran
        for name, regex, unit in KERNELS[self.kernel][1]:
            self.add_fom(name, sn.extractsingle(regex, self.stdout, 1, float), unit, "higher")
