"""Acceptance checks, part 5: OpenCL (paper 003 test 8: the system supports OpenCL).

A tiny probe (src/opencl_probe.c) lists every OpenCL platform and device of the node and adds two
vectors on each device, checking the sum.  Built with the environment's C compiler in the job where
the node has the OpenCL headers (CL/cl.h) and the ICD loader (libOpenCL); skipped with the reason
where the node has no OpenCL platform.  See acceptance.py for the whole set.
"""
import ctypes.util
import glob
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, sanity_function

from yeebench.acceptance_check import AcceptanceMixin, gpu_present, last_line
from yeebench.base import BUILT_IN_JOB, YeebenchCheck
from yeebench.gpus import partition_gpus

#: Written by the job when the node cannot build or run the probe (the reason).
NO_OPENCL = "opencl-unavailable.txt"

#: Where OpenCL installations put CL/cl.h and libOpenCL (the distribution, the CUDA toolkit, ROCm).
ROOTS = ("/usr", "/usr/local", "/usr/local/cuda", "/opt/rocm")
CUDA_ROOT_VARS = ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT")

#: The ICD registry: each installed platform has a file here (ocl-icd reads OCL_ICD_VENDORS instead).
ICD_DIR = "/etc/OpenCL/vendors"


def roots(environ=os.environ):
    return [*(environ[v] for v in CUDA_ROOT_VARS if environ.get(v)), *ROOTS]


def opencl_on_host(environ=os.environ, icd_dir=ICD_DIR):
    """(present, why): an OpenCL platform this host could build the probe against and run it on."""
    headers = [r for r in roots(environ) if os.path.exists(os.path.join(r, "include", "CL", "cl.h"))]
    loader = ctypes.util.find_library("OpenCL")
    vendors = environ.get("OCL_ICD_VENDORS") or icd_dir
    icds = glob.glob(os.path.join(vendors, "*.icd")) if os.path.isdir(vendors) else []
    missing = ([] if headers else ["no OpenCL headers (CL/cl.h under " + ", ".join(roots(environ)) + ")"]) + \
              ([] if loader else ["no ICD loader (libOpenCL)"]) + \
              ([] if icds else [f"no platform registered ({vendors} has no .icd file)"])
    if missing:
        have = f"; {loader} is installed" if loader else ""
        return False, "no OpenCL platform on this host: " + ", ".join(missing) + have
    return True, f"headers in {headers[0]}/include, {loader}, platforms {', '.join(sorted(icds))}"


def build_lines(cc, marker=NO_OPENCL, environ_roots=ROOTS):
    """Pre-run lines building the probe on the node: the first root with CL/cl.h gives the headers, its
    lib64/lib the loader; without them, or when the build fails, the reason goes to `marker` and the job
    ends before the probe runs."""
    candidates = " ".join(['${CUDA_HOME:-}', '${CUDA_PATH:-}', *environ_roots])
    return [
        f"cl=; for r in {candidates}; do [ -n \"$r\" ] && [ -e \"$r/include/CL/cl.h\" ] && {{ cl=$r; break; }}; done",
        f"[ -n \"$cl\" ] || {{ echo 'no OpenCL headers (CL/cl.h) on the node' > {marker}; exit 0; }}",
        f"{cc} -O2 -I\"$cl/include\" -o opencl_probe opencl_probe.c -L\"$cl/lib64\" -L\"$cl/lib\" -lOpenCL -lm "
        f"2> opencl-build.err || {{ echo \"the OpenCL probe did not build: $(grep -m1 -i error opencl-build.err "
        f"|| tail -n 1 opencl-build.err)\" > {marker}; exit 0; }}",
    ]


def platform_verdict(line, devices, gpus_declared):
    """(ok, reason) of the probe's last line and its devices [(name, type)]: where the partition declares
    GPUs (`gpus_declared`: their number, None for 'some'), a CPU-only OpenCL is not the GPUs' OpenCL."""
    seen = ", ".join(f"{n} ({t})" for n, t in devices)
    said = f"{line}: {seen}" if seen else line
    if not line.endswith(" VALID"):
        return False, said
    gpu_devices = sum(1 for _, t in devices if t == "GPU")
    if gpus_declared is None or gpus_declared > 0:
        declared = f"{gpus_declared} GPU(s)" if gpus_declared else "GPUs"
        if not gpu_devices:
            return False, (f"{said}; the partition declares {declared} per node but no OpenCL platform offers a GPU "
                           "device (the GPU vendor's OpenCL driver, its ICD in /etc/OpenCL/vendors, is missing)")
        return True, f"{said}; {gpu_devices} GPU device(s) for the {declared} the partition declares"
    if gpu_devices:
        return True, said
    return True, f"{said}; CPU devices only, which is enough: the partition declares no GPU"


@rfm.simple_test
class AcceptanceOpenCL(AcceptanceMixin, YeebenchCheck):
    """Every OpenCL platform and device of the node listed, a vector added on each (paper 003 test 8); where
    the partition declares GPUs, one of the devices must be a GPU (a CPU-only platform is not enough)."""

    time_limit = "3m"  # seconds of work: a hang becomes a failure, not a 10-minute wait
    descr = "OpenCL: platforms and devices listed, a vector addition right on every device"
    sourcesdir = "src"  # beside this file (ReFrame resolves it against the check's folder)
    tags = {BUILT_IN_JOB}  # compiled in the job
    executable = "./opencl_probe"
    num_tasks = 1

    @run_after("setup")
    def require_opencl(self):
        if self.current_partition.scheduler.registered_name == "local":  # the host is the node
            present, why = opencl_on_host()
            self.skip_if(not present, why)
        cc = self.current_environ.cc or "cc"
        self.prerun_cmds = build_lines(cc)
        # a partition with GPUs needs their OpenCL, not only a CPU platform (None: GPUs, number not declared)
        present, _ = gpu_present(self.current_partition)
        self.gpus_declared = (partition_gpus(self.current_partition)[0] or None) if present else 0

    @sanity_function
    def validate(self):
        if os.path.exists(os.path.join(self.stagedir, NO_OPENCL)):
            return self.not_measured(last_line(self, NO_OPENCL))
        last = sn.evaluate(sn.extractall(r"^opencl platforms .*$", self.stdout))
        if not last:
            why = last_line(self, self.stderr) or last_line(self, self.stdout) or "no output"
            return self.verdict(False, f"no verdict line from the OpenCL probe ({why})")
        line = last[-1]
        if line.startswith("opencl platforms 0"):
            return self.not_measured(f"no OpenCL platform on the node: {line} (no ICD registered)")
        details = list(sn.evaluate(sn.extractall(r"^(?:platform|device|vadd) .*$", self.stdout)))
        names = sn.evaluate(sn.extractall(r'^device \S+ name "([^"]*)" type (\S+)', self.stdout, (1, 2)))
        ok, reason = platform_verdict(line, names, self.gpus_declared)
        return self.verdict(ok, reason, details)

    def collect_foms(self):
        if not self.measured:
            return
        self.add_fom("opencl_devices", sn.extractsingle(r"^opencl platforms \d+ devices (\d+)", self.stdout, 1,
                                                        int), "count", "higher")
