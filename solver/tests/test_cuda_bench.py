"""Host-side test of bench/run_cuda_bench.py with stand-in programs (no GPU needed):
the arithmetic (Gcells/s from the report's Mcells/s, GB/s at the minimal 48/96 B per cell,
% of the measured copy bandwidth), every kernel side by side with its settings passed
on (flags, and the fused kernel's depth in yee's environment), best-of-repeats, the targets' verdicts, the atomic output file naming the device,
and the failure paths (invalid copy, failing or CPU-backend yee, kernels whose
checksums differ, bad arguments)."""
import json
import os
import shutil
import subprocess
import sys

from yee_testlib import check, finish, scratch_dir

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "bench", "run_cuda_bench.py")
TMP = scratch_dir("yee-cuda-bench-test-")


def script(name, body):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write("#!%s\nimport json, os, sys\n%s\n" % (sys.executable, body))
    os.chmod(path, 0o755)
    return path


# Copy: 3000 GB/s. yee: Mcells/s depends on n, precision, kernel, --tile and
# YEE_CUDA_FUSED_DEPTH (3: x1.25), and alternates
# between two values across repeats (counter file) so that best-of-repeats is visible.
COPY = script("copy", 'print(json.dumps({"valid": True, "device": "Fake GPU", "best_gbs": 3000.0, '
                      '"memcpy_gbs": 2900.0, "kernel_copy_gbs": 3000.0}))')
YEE = script("yee", '''
a = sys.argv[1:]
n = int(a[a.index("--nx") + 1]); p = a[a.index("--precision") + 1]; kern = a[a.index("--kernel") + 1]
tile = int(a[a.index("--tile") + 1]) if "--tile" in a else 0
c = os.path.join(os.path.dirname(sys.argv[0]), "count")
k = int(open(c).read()) if os.path.exists(c) else 0
open(c, "w").write(str(k + 1))
mc = {(256, "f32"): 30000.0, (512, "f32"): 48000.0, (256, "f64"): 15000.0, (512, "f64"): 24000.0}[(n, p)]
mc *= {"split": 0.5, "fused": 1.0, "wavefront": 1.5}[kern] * (0.5 if tile == 8 else 1.0)
mc *= 1.25 if os.environ.get("YEE_CUDA_FUSED_DEPTH") == "3" else 1.0
mc = mc if k % 2 else mc / 2
print(json.dumps({"valid": True, "backend": os.environ.get("FAKE_BACKEND", "cuda"), "device": "Fake GPU",
                  "mcells_per_s": mc, "bytes_per_cell": 48 if p == "f32" else 96, "seconds": {"total": 1.0},
                  "checksum": os.environ.get("FAKE_SUM_" + kern, "0x1")}))
''')


def bench(*extra, yee=YEE, copy=COPY, env=None):
    return subprocess.run([sys.executable, BENCH, "--yee", yee, "--copy", copy] + list(extra), capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, **(env or {})))


out = os.path.join(TMP, "bench.json")
p = bench("--repeats", "2", "--steps", "10", "--sizes", "256,512", "--kernels",
          "split,fused,fused:tile=8,wavefront,fused:depth=3+tile=8", "--out", out)
check(p.returncode == 0, "bench runs with stand-ins (exit %d: %s)" % (p.returncode, p.stderr.strip()[-300:]))
res = json.load(open(out))
rows = {(r["n"], r["precision"], r["kernel"]): r for r in res["results"]}
check(res["schema"] == "yee-cuda-bench" and res["schema_version"] == 2 and res["device"] == "Fake GPU",
      "schema version 2 naming the device")
check(len(rows) == 20 and res["kernels"] == ["split", "fused", "fused:tile=8", "wavefront", "fused:depth=3+tile=8"],
      "20 cases: 256^3 and 512^3, f32 and f64, five kernels side by side (got %d)" % len(rows))
r = rows[(512, "f32", "fused")]
check(r["gcells_per_s"] == 48.0, "best of 2 repeats kept: 48 Gcells/s (got %s)" % r["gcells_per_s"])
check(r["minimal_bytes_per_cell"] == 48 and r["gbs_at_minimal"] == 2304.0 and r["pct_of_copy_at_minimal"] == 76.8,
      "512^3 f32 fused: 48 Gcells/s x 48 B = 2304 GB/s = 76.8%% of 3000 (got %s, %s)" % (
          r["gbs_at_minimal"], r["pct_of_copy_at_minimal"]))
r = rows[(256, "f64", "split")]
check(r["minimal_bytes_per_cell"] == 96 and r["gbs_at_minimal"] == 720.0 and r["pct_of_copy_at_minimal"] == 24.0,
      "256^3 f64 split: 7.5 Gcells/s x 96 B = 720 GB/s = 24%% (got %s, %s)" % (
          r["gbs_at_minimal"], r["pct_of_copy_at_minimal"]))
check(rows[(512, "f32", "fused:tile=8")]["gcells_per_s"] == 24.0 and "--tile 8" in rows[(512, "f32", "fused:tile=8")]["command"],
      "fused:tile=8 runs yee with --tile 8")
r = rows[(512, "f32", "fused:depth=3+tile=8")]
check(r["gcells_per_s"] == 30.0 and r["command"].startswith("YEE_CUDA_FUSED_DEPTH=3 ") and "--tile 8" in r["command"],
      "fused:depth=3+tile=8 runs yee with YEE_CUDA_FUSED_DEPTH=3 and --tile 8, recorded in the command (got %s: %s)" % (
          r["gcells_per_s"], r["command"][:60]))
check("YEE_CUDA_FUSED_DEPTH" not in rows[(512, "f32", "fused")]["command"], "other kernels: no depth set")
verdicts = {t["case"]: t["met"] for t in res["targets"]}
check(verdicts == {"fused 512^3 f32": True, "fused 512^3 f64": True, "wavefront 512^3 f32": True,
                   "wavefront 512^3 f64": True},
      "targets at 512^3 (384^3 not run): fused 76.8%% >= 75%%, wavefront 115.2%% > 100%% (got %s)" % verdicts)
check("% copy" in p.stderr and "NOT met" not in p.stderr and "fused:tile=8" in p.stderr, "table on stderr")
check(not [f for f in os.listdir(TMP) if f.startswith(".cuda-bench-")], "no temporary file left behind")
p = bench("--repeats", "1", "--sizes", "512", "--precisions", "f32", "--kernels", "split")
check(p.returncode == 0 and json.loads(p.stdout)["targets"] == [], "no target verdict for kernels without a target")
p = bench("--repeats", "1", "--sizes", "256", "--precisions", "f32")
check(p.returncode == 0 and json.loads(p.stdout)["kernels"] == json.load(open(os.path.join(
    HERE, "..", "src", "backends", "cuda", "traits.json")))["kernels"], "default kernels: those traits.json declares")

# Failure paths: each one exits non-zero with one "run_cuda_bench: error:" line.
bad_copy = script("badcopy", 'print(json.dumps({"valid": False, "best_gbs": 0}))')
fail_yee = script("failyee", 'sys.stderr.write("yee: error: CUDA backend: no usable GPU\\n"); sys.exit(1)')
for label, proc, code in (
        ("invalid copy measurement", bench(copy=bad_copy), 1),
        ("failing yee", bench(yee=fail_yee), 1),
        ("CPU-backend yee", bench(env={"FAKE_BACKEND": "cpu"}), 1),
        ("kernels with different checksums", bench("--kernels", "split,fused", env={"FAKE_SUM_fused": "0x2"}), 1),
        ("bad --precisions", bench("--precisions", "f16"), 2),
        ("unknown kernel", bench("--kernels", "fused,blocked"), 2),
        ("bad kernel setting", bench("--kernels", "fused:rows=8"), 2),
        ("bad depth value", bench("--kernels", "fused:depth=x"), 2),
        ("bad --sizes", bench("--sizes", "abc"), 2)):
    check(proc.returncode == code and "error" in proc.stderr,
          "%s: exit %d (got %d: %s)" % (label, code, proc.returncode, proc.stderr.strip()[-160:]))
shutil.rmtree(TMP, ignore_errors=True)
finish()
