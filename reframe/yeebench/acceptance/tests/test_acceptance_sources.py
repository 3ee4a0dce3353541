"""The acceptance probe sources compile (CUDA with nvcc when installed; nothing CUDA runs here)."""
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(__file__)
CUDA = os.path.join(HERE, "..", "..", "..", "checks", "src", "cuda")
SRC = os.path.join(HERE, "..", "..", "..", "checks", "src", "acceptance")
NVCC = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if os.access("/usr/local/bin/nvcc", os.X_OK) else None)
ARCH = ["-gencode", "arch=compute_90,code=sm_90", "-gencode", "arch=compute_80,code=compute_80"]


@pytest.mark.skipif(NVCC is None, reason="nvcc not installed: CUDA sources not compiled")
@pytest.mark.parametrize("kernel", ["devicequery", "bandwidth", "nbody"])
def test_cuda_sources_compile_with_nvcc(tmp_path, kernel):
    done = subprocess.run([NVCC, "-O3", "-std=c++17", *ARCH, "-o", str(tmp_path / kernel),
                           os.path.join(CUDA, f"{kernel}.cu")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / kernel).stat().st_size > 0


@pytest.mark.skipif(shutil.which("mpicc") is None, reason="mpicc not installed")
def test_pairmatrix_rejects_bad_arguments(tmp_path):
    exe = tmp_path / "pairmatrix"
    subprocess.run(["mpicc", "-O2", "-Wall", "-Werror", "-o", str(exe), os.path.join(SRC, "pairmatrix.c")],
                   check=True, timeout=120)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    done = subprocess.run([str(exe), "--lat-iters", "0"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2 and "--lat-iters must be a positive integer" in done.stderr
    done = subprocess.run([str(exe), "--lat-iters", "5", "--bw-iters", "1", "--large", "4096",
                           "--coll-iters", "2"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0 and done.stdout.strip().endswith("pairmatrix: ranks 1 pairs 0 VALID")
