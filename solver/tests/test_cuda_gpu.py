"""CUDA backend against the CPU backend, on a GPU (skipped with exit 77 and the reason
when the machine has none):
  - the same run on the CPU and the GPU gives bitwise-equal fields (both compute the
    same expressions in the same order without FMA contraction: checksum equality),
    energies equal to the precision's round-off, probe series within a precision-sized
    tolerance (reported) and bitwise equal;
  - GPU runs on 1..8 ranks (sharing the GPU round-robin) give bitwise-identical fields
    for both halo paths (host staging; CUDA-aware MPI when the MPI library has it), and
    so does the wavefront kernel on 1 (sweeps), 2 and 3 ranks (deep halos);
  - the report names the backend and its bytes-per-cell model (12 words per cell: the
    fused kernel reads and writes E and H once).
Every GPU run has YEE_POISON=1: row padding and message buffers start as NaN, so a
kernel reading memory it should not turns checksum and energy into NaN.
Environment: YEE_BIN (CUDA yee), YEE_CPU_BIN (CPU yee, the reference)."""
import json
import os
import shutil
import subprocess

from cuda_testlib import require_gpu_or_skip
from yee_testlib import MPIEXEC, YEE, check, env_for, fail, finish, scratch_dir

require_gpu_or_skip("CPU vs GPU comparison and GPU decomposition invariance")
CPU = os.environ.get("YEE_CPU_BIN", "")
if not (CPU and os.access(CPU, os.X_OK)):
    fail("YEE_CPU_BIN=%r is not an executable CPU-backend yee (build it: make build-solver)" % CPU)

GRID = ["--nx", 19, "--ny", 14, "--nz", 37]  # uneven, k rows not a multiple of the 128 B padding
COMMON = GRID + ["--steps", 40, "--source", "ricker", "--source-freq", 0.08, "--source-pos", "9,6,20",
                 "--init-mode", "pulse", "--energy-every", 4, "--probe", "3,4,5", "--probe", "15,10,30"]
TMP = scratch_dir("yee-cuda-test-")


def yee(binary, args, ranks=1):
    env = env_for(1)
    env["YEE_POISON"] = "1"
    probe = os.path.join(TMP, "probes-%d.csv" % len(os.listdir(TMP)))
    cmd = ([MPIEXEC, "-np", str(ranks), "--oversubscribe", "--bind-to", "none"] if ranks > 1 else []) + [binary]
    out = ["--probe-out", probe] if "--probe" in args else []  # (--probe-out alone is refused)
    p = subprocess.run(cmd + [str(a) for a in args] + ["--quiet"] + out, capture_output=True,
                       text=True, timeout=300, env=env)
    if p.returncode != 0:
        fail("%s %s (ranks=%d) exited %d: %s" % (binary, " ".join(map(str, args)), ranks, p.returncode,
                                                  p.stderr.strip()[-1500:]))
    rep = json.loads(p.stdout)
    rows = []
    if out:
        with open(probe) as f:
            rows = [line.strip().split(",")[2:] for line in f if line[0].isdigit()]
    rep["_probes"] = [float(x) for row in rows for x in row]
    return rep


for precision, energy_tol, field_tol in (("f32", 1e-6, 1e-5), ("f64", 1e-13, 1e-12)):
    for kernel in ("fused", "split", "wavefront"):
        args = COMMON + ["--precision", precision, "--kernel", kernel]
        cpu, gpu = yee(CPU, args), yee(YEE, args)
        label = "%s %s" % (precision, kernel)
        check(gpu["backend"] == "cuda" and cpu["backend"] == "cpu", "%s: backends reported cuda / cpu" % label)
        check(gpu["valid"] and gpu["e_max"] > 0, "%s: GPU run valid with non-zero fields" % label)
        check(gpu["checksum"] == cpu["checksum"], "%s: GPU checksum %s == CPU %s (bitwise-equal fields)" % (
            label, gpu["checksum"], cpu["checksum"]))
        rel = abs(gpu["energy"] - cpu["energy"]) / abs(cpu["energy"])
        check(rel <= energy_tol, "%s: energy relative difference %.2e <= %g (sums in another order)" % (
            label, rel, energy_tol))
        scale = max(abs(x) for x in cpu["_probes"])
        diff = max(abs(x - y) for x, y in zip(gpu["_probes"], cpu["_probes"]))
        check(len(gpu["_probes"]) == len(cpu["_probes"]) == 2 * 40 and scale > 0 and diff <= field_tol * scale,
              "%s: probe series agree within %g of their maximum (max difference %.3g, scale %.3g)" % (
                  label, field_tol, diff, scale))
        check(gpu["_probes"] == cpu["_probes"], "%s: probe series bitwise equal" % label)
        check(gpu["bytes_per_cell"] == 12 * (4 if precision == "f32" else 8),
              "%s: bytes_per_cell %s is the 12-word model" % (label, gpu["bytes_per_cell"]))

CASES = [(2, "2x1x1"), (2, "1x1x2"), (3, "1x3x1"), (4, "2x2x1"), (6, "1x2x3"), (8, "2x2x2")]
# The wavefront kernel on several ranks: deep halos through pack_box/unpack_box, passes of
# the split kernels over the halo boxes; on one rank, sweeps of two steps (the energy every
# 4 steps cuts passes to 3 steps: a sweep and a fused step, with the source and probes).
WAVEFRONT = [(2, "2x1x1", ["--kernel", "wavefront", "--time-block", 3]),
             (3, "1x3x1", ["--kernel", "wavefront"]),
             (1, "1x1x1", ["--kernel", "wavefront", "--time-block", 5])]
for precision in ("f32", "f64"):
    base = COMMON + ["--precision", precision]
    ref = yee(YEE, base)
    for paths in (["--cuda-aware", "off"], ["--cuda-aware", "auto"]):
        for ranks, dims in CASES:
            rep = yee(YEE, base + ["--decomp", dims] + paths, ranks=ranks)
            check(rep["checksum"] == ref["checksum"] and rep["_probes"] == ref["_probes"],
                  "%s GPU ranks=%d %s %s: checksum %s == 1 rank %s" % (
                      precision, ranks, dims, " ".join(paths), rep["checksum"], ref["checksum"]))
    for ranks, dims, extra in WAVEFRONT:
        rep = yee(YEE, base + ["--decomp", dims] + extra, ranks=ranks)
        check(rep["checksum"] == ref["checksum"] and rep["_probes"] == ref["_probes"] and rep["time_block"]["passes"] > 0,
              "%s GPU ranks=%d %s %s: checksum %s == fused 1 rank %s (%s passes)" % (
                  precision, ranks, dims, " ".join(map(str, extra)), rep["checksum"], ref["checksum"],
                  rep["time_block"]["passes"]))

# The comparison can fail: one more step changes the checksum.
other = yee(YEE, GRID + ["--steps", 41, "--init-mode", "pulse", "--precision", "f64"])
check(other["checksum"] != ref["checksum"], "a different run gives a different checksum")
shutil.rmtree(TMP, ignore_errors=True)
finish()
