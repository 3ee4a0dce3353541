"""The OpenCL acceptance check (paper 003 test 8): where a host has an OpenCL platform, and the job's
build lines on a node with and without the headers (a stand-in compiler: no OpenCL runs here)."""
import subprocess
from pathlib import Path

from yeebench.checks.gpu import acceptance_opencl as ocl


def opencl_root(tmp_path):
    root = tmp_path / "cuda"
    (root / "include" / "CL").mkdir(parents=True)
    (root / "include" / "CL" / "cl.h").write_text("/* stand-in */\n")
    return root


def test_a_host_without_headers_or_platforms_says_which_is_missing(tmp_path):
    present, why = ocl.opencl_on_host(environ={}, icd_dir=str(tmp_path / "none"))
    assert not present and why.startswith("no OpenCL platform on this host")
    assert "no platform registered" in why


def test_a_host_with_headers_loader_and_an_icd_has_opencl(tmp_path, monkeypatch):
    root = opencl_root(tmp_path)
    vendors = tmp_path / "vendors"
    vendors.mkdir()
    (vendors / "nvidia.icd").write_text("libnvidia-opencl.so.1\n")
    monkeypatch.setattr(ocl.ctypes.util, "find_library", lambda name: "libOpenCL.so.1")
    present, why = ocl.opencl_on_host(environ={"CUDA_HOME": str(root), "OCL_ICD_VENDORS": str(vendors)})
    assert present and f"{root}/include" in why and "nvidia.icd" in why
    monkeypatch.setattr(ocl.ctypes.util, "find_library", lambda name: None)
    present, why = ocl.opencl_on_host(environ={"CUDA_HOME": str(root), "OCL_ICD_VENDORS": str(vendors)})
    assert not present and "no ICD loader (libOpenCL)" in why


def run_build(tmp_path, env, cc="false"):
    script = "set -u\n" + "\n".join(ocl.build_lines(cc, environ_roots=())) + "\necho built\n"
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env)
    marker = tmp_path / ocl.NO_OPENCL
    return done.stdout.strip(), marker.read_text().strip() if marker.exists() else ""


def test_no_headers_on_the_node_ends_the_job_with_the_reason(tmp_path):
    out, reason = run_build(tmp_path, {"PATH": "/usr/bin:/bin"})
    assert out == "" and reason == "no OpenCL headers (CL/cl.h) on the node"


def test_a_failed_build_gives_the_compilers_error(tmp_path):
    root = opencl_root(tmp_path)
    cc = tmp_path / "cc"
    cc.write_text("#!/bin/sh\necho 'opencl_probe.c:1: error: CL/cl.h is broken' >&2\nexit 1\n")
    cc.chmod(0o755)
    out, reason = run_build(tmp_path, {"PATH": "/usr/bin:/bin", "CUDA_HOME": str(root)}, cc=str(cc))
    assert out == "" and reason == "the OpenCL probe did not build: opencl_probe.c:1: error: CL/cl.h is broken"


def test_the_probe_builds_against_the_first_root_with_headers(tmp_path):
    root = opencl_root(tmp_path)
    cc = tmp_path / "cc"
    cc.write_text('#!/bin/sh\necho "$@" > cc-args\n')
    cc.chmod(0o755)
    out, reason = run_build(tmp_path, {"PATH": "/usr/bin:/bin", "CUDA_PATH": str(root)}, cc=str(cc))
    assert out == "built" and reason == ""
    args = Path(tmp_path / "cc-args").read_text()
    assert f"-I{root}/include" in args and f"-L{root}/lib64" in args and args.rstrip().endswith("-lOpenCL -lm")


CPU_ONLY = [("pthread-AMD EPYC 9654 96-Core Processor", "CPU")]
WITH_GPU = CPU_ONLY + [("NVIDIA H200", "GPU")]
LAST = "opencl platforms 2 devices 2 VALID"


def test_a_partition_with_gpus_needs_a_gpu_platform_not_only_a_cpu_one():
    ok, reason = ocl.platform_verdict("opencl platforms 1 devices 1 VALID", CPU_ONLY, 4)
    assert not ok and "declares 4 GPU(s) per node but no OpenCL platform offers a GPU device" in reason
    ok, reason = ocl.platform_verdict(LAST, WITH_GPU, 4)
    assert ok and reason.endswith("1 GPU device(s) for the 4 GPU(s) the partition declares")
    ok, reason = ocl.platform_verdict("opencl platforms 1 devices 1 VALID", CPU_ONLY, None)   # 'gpu' feature only
    assert not ok and "declares GPUs per node" in reason


def test_a_partition_without_gpus_passes_a_cpu_platform_and_says_so():
    ok, reason = ocl.platform_verdict("opencl platforms 1 devices 1 VALID", CPU_ONLY, 0)
    assert ok and reason.endswith("CPU devices only, which is enough: the partition declares no GPU")
    ok, reason = ocl.platform_verdict("opencl platforms 1 devices 1 INVALID", CPU_ONLY, 0)
    assert not ok and reason.startswith("opencl platforms 1 devices 1 INVALID")
