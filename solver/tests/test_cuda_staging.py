"""The halo's device-message paths without a GPU: the CPU build with YEE_HALO_STAGING=1
treats its message buffers as device memory, so the staged path (message -> host copy
-> MPI -> host copy -> message) and the direct path (--cuda-aware on) run here. Fields
must stay bitwise identical to the single-rank run for every split and path, and the
report must name the path taken (auto: what the MPI library says, agreed by all ranks).
Environment: YEE_CPU_BIN (the CPU build's yee)."""
import json
import os
import subprocess

from yee_testlib import MPIEXEC, check, env_for, fail, finish

CPU = os.environ.get("YEE_CPU_BIN", "")
if not (CPU and os.access(CPU, os.X_OK)):
    fail("YEE_CPU_BIN=%r is not an executable CPU-backend yee (build it: make build-solver)" % CPU)
ARGS = ["--nx", 13, "--ny", 11, "--nz", 10, "--steps", 20, "--source-pos", "6,5,4", "--init-mode", "pulse",
        "--energy-every", 5, "--precision", "f64", "--quiet"]


def yee(ranks, extra, staging):
    env = env_for(1)
    env["YEE_HALO_STAGING"] = "1" if staging else "0"
    cmd = ([MPIEXEC, "-np", str(ranks), "--oversubscribe", "--bind-to", "none"] if ranks > 1 else []) + [CPU]
    p = subprocess.run(cmd + [str(a) for a in ARGS + extra], capture_output=True, text=True, timeout=120, env=env)
    if p.returncode != 0:
        fail("ranks=%d %s exited %d: %s" % (ranks, extra, p.returncode, p.stderr.strip()[-800:]))
    return json.loads(p.stdout)


ref = yee(1, [], False)
check(ref["halo_path"] == "host" and ref["device"] == "host", "CPU build: host messages, device 'host'")
for ranks, dims in ((2, "2x1x1"), (3, "1x3x1"), (4, "1x2x2")):
    for mode, expect in (("off", "staged"), ("on", "cuda-aware"), ("auto", None)):
        rep = yee(ranks, ["--decomp", dims, "--cuda-aware", mode], True)
        ok_path = rep["halo_path"] == expect if expect else rep["halo_path"] in ("staged", "cuda-aware")
        check(ok_path, "ranks=%d --cuda-aware %s: halo path %r" % (ranks, mode, rep["halo_path"]))
        check(rep["checksum"] == ref["checksum"] and rep["energy"] == rep["energy"],
              "ranks=%d %s --cuda-aware %s: checksum %s == 1 rank %s" % (ranks, dims, mode, rep["checksum"],
                                                                      ref["checksum"]))
rep = yee(2, ["--decomp", "2x1x1", "--cuda-aware", "off"], False)
check(rep["halo_path"] == "host", "without the test aid the CPU build ignores --cuda-aware (path %r)" % rep["halo_path"])
finish()
