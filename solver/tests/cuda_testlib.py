"""Helpers of the CUDA backend's tests: is there a GPU to run on, and what device code
does a binary carry. Standard library only, like yee_testlib."""
import os
import shutil
import struct
import subprocess
import sys

from yee_testlib import YEE, env_for

SKIP = 77  # ctest SKIP_RETURN_CODE


def gpu_listing():
    """(True, lines) when nvidia-smi lists at least one GPU, else (False, reason)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False, "nvidia-smi not found"
    try:
        p = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, "nvidia-smi -L failed: %s" % e
    gpus = [line for line in p.stdout.splitlines() if line.startswith("GPU ")]
    if p.returncode != 0 or not gpus:
        return False, "nvidia-smi -L lists no GPU (exit %d: %s)" % (p.returncode, (p.stderr or p.stdout).strip()[:200])
    return True, gpus


def require_gpu_or_skip(what):
    """Exits with SKIP and a stated reason when this machine has no NVIDIA GPU. With one,
    the CUDA build must be able to use it: a driver/runtime mismatch is a failure, not a skip."""
    ok, info = gpu_listing()
    if not ok:
        print("SKIP  %s: no NVIDIA GPU on this machine (%s); these checks run on a GPU node" % (what, info))
        sys.exit(SKIP)
    p = subprocess.run([YEE, "--nx", "4", "--ny", "4", "--nz", "4", "--steps", "1", "--quiet", "--report",
                        os.devnull], capture_output=True, text=True, timeout=120, env=env_for(1))
    if p.returncode != 0:
        print("FAIL  %s: nvidia-smi lists %s but the CUDA build cannot use it: %s" % (what, info[0], p.stderr.strip()))
        sys.exit(1)
    print("gpu   " + "; ".join(info))


def fatbin_entries(path):
    """[(kind, arch)] of the CUDA fat binary embedded in an executable: kind "sass" (ELF
    code for one sm) or "ptx" (virtual-architecture code the driver can JIT)."""
    data = open(path, "rb").read()
    out = []
    pos = data.find(struct.pack("<I", 0xBA55ED50))
    while pos >= 0:
        _, _, header, size = struct.unpack_from("<IHHQ", data, pos)
        q, end = pos + header, pos + header + size
        while q < end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, q)
            arch = struct.unpack_from("<I", data, q + 28)[0]
            out.append(({1: "ptx", 2: "sass"}.get(kind, "kind%d" % kind), arch))
            q += entry_header + payload
        pos = data.find(struct.pack("<I", 0xBA55ED50), end)
    return out
