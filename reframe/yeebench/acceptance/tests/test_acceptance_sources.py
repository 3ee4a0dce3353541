"""The acceptance probe sources compile (CUDA with nvcc when installed; nothing CUDA runs here)."""
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(__file__)
CHECKS = os.path.join(HERE, "..", "..", "checks")
CUDA = os.path.join(CHECKS, "gpu", "src")
SRC = os.path.join(CHECKS, "acceptance", "src")
PT2PT = os.path.join(CHECKS, "pt2pt", "src")
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
    subprocess.run(["mpicc", "-O2", "-Wall", "-Werror", "-o", str(exe), os.path.join(PT2PT, "pairmatrix.c")],
                   check=True, timeout=120)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    done = subprocess.run([str(exe), "--lat-iters", "0"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2 and "--lat-iters must be a positive integer" in done.stderr
    done = subprocess.run([str(exe), "--lat-iters", "5", "--bw-iters", "1", "--large", "4096",
                           "--coll-iters", "2"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0 and done.stdout.strip().endswith("pairmatrix: ranks 1 pairs 0 VALID")


def _has_multicast_interface():
    """An up, multicast-capable, non-loopback interface with an IPv4 address (what mcast picks)."""
    for name in os.listdir("/sys/class/net"):
        try:
            flags = int(open(f"/sys/class/net/{name}/flags").read(), 16)
        except OSError:
            continue
        if flags & 0x1 and flags & 0x1000 and not flags & 0x8:   # IFF_UP, IFF_MULTICAST, not IFF_LOOPBACK
            done = subprocess.run(["ip", "-4", "-o", "addr", "show", "dev", name], capture_output=True, text=True)
            if " inet " in done.stdout:
                return True
    return False


@pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None, reason="no MPI")
def test_mcast_delivers_every_datagram_through_the_multicast_loopback(tmp_path):
    exe = tmp_path / "mcast"
    subprocess.run(["mpicc", "-O2", "-Wall", "-Werror", "-o", str(exe), os.path.join(SRC, "mcast.c")],
                   check=True, timeout=120)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for bad, message in ((["--size", "3"], "--size must be 16..65000"), (["--group", "10.0.0.1"], "not an IPv4 multicast"),
                         (["--count", "x"], "--count must be a positive integer")):
        done = subprocess.run([str(exe), *bad], capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 2 and message in done.stderr, (bad, done.stderr)
    done = subprocess.run([str(exe), "--iface", "no-such-if0"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "mcast: SKIP no IPv4 address on interface no-such-if0"
    done = subprocess.run(["mpirun", "--oversubscribe", "-np", "3", str(exe), "--count", "60"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    if not _has_multicast_interface():
        assert last.startswith("mcast: SKIP no up, multicast-capable"), last
        return
    rounds = [line.split() for line in done.stdout.splitlines() if line.startswith("round ")]
    assert [r[2] for r in rounds] == ["1", "2"]               # receivers 1, then all (2)
    assert all(r[4] == "0" for r in rounds)                  # one host: no remote receiver
    assert all(r[8] == "60" for r in rounds), rounds         # 60 datagrams fit any socket buffer: none lost
    assert last.startswith("mcast: ranks 3 remote_receivers 0 group 239.255.") and last.endswith(" VALID")
