"""Host-side test of bench/run_cuda_bench.py with stand-in programs (no GPU needed):
the arithmetic (Gcells/s from the report's Mcells/s, GB/s = Gcells/s x bytes per cell,
% of the measured copy bandwidth), best-of-repeats, the 512^3 f32 target verdict, the
atomic output file, and the failure paths (invalid copy, failing or CPU-backend yee, bad
arguments)."""
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


# Copy: 3000 GB/s. yee: Mcells/s depends on n and precision, and alternates between two
# values across repeats (counter file) so that best-of-repeats is visible.
COPY = script("copy", 'print(json.dumps({"valid": True, "device": "Fake GPU", "best_gbs": 3000.0, '
                      '"memcpy_gbs": 2900.0, "kernel_copy_gbs": 3000.0}))')
YEE = script("yee", '''
a = sys.argv[1:]
n = int(a[a.index("--nx") + 1]); p = a[a.index("--precision") + 1]
c = os.path.join(os.path.dirname(sys.argv[0]), "count")
k = int(open(c).read()) if os.path.exists(c) else 0
open(c, "w").write(str(k + 1))
mc = {(256, "f32"): 30000.0, (512, "f32"): 32000.0, (256, "f64"): 15000.0, (512, "f64"): 16000.0}[(n, p)]
mc = mc if k % 2 else mc / 2
print(json.dumps({"valid": True, "backend": os.environ.get("FAKE_BACKEND", "cuda"), "device": "Fake GPU",
                  "mcells_per_s": mc, "bytes_per_cell": 72 if p == "f32" else 144, "seconds": {"total": 1.0}}))
''')


def bench(*extra, yee=YEE, copy=COPY, env=None):
    return subprocess.run([sys.executable, BENCH, "--yee", yee, "--copy", copy] + list(extra), capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, **(env or {})))


out = os.path.join(TMP, "bench.json")
p = bench("--repeats", "2", "--steps", "10", "--out", out)
check(p.returncode == 0, "bench runs with stand-ins (exit %d: %s)" % (p.returncode, p.stderr.strip()[-300:]))
res = json.load(open(out))
rows = {(r["n"], r["precision"]): r for r in res["results"]}
check(res["schema"] == "yee-cuda-bench" and set(rows) == {(256, "f32"), (512, "f32"), (256, "f64"), (512, "f64")},
      "four cases: 256^3 and 512^3, f32 and f64")
r = rows[(512, "f32")]
check(r["gcells_per_s"] == 32.0, "best of 2 repeats kept: 32 Gcells/s (got %s)" % r["gcells_per_s"])
check(r["achieved_gbs"] == 2304.0 and r["pct_of_copy"] == 76.8,
      "512^3 f32: 32 Gcells/s x 72 B = 2304 GB/s = 76.8%% of 3000 (got %s, %s)" % (r["achieved_gbs"], r["pct_of_copy"]))
r = rows[(256, "f64")]
check(r["achieved_gbs"] == 2160.0 and r["pct_of_copy"] == 72.0, "256^3 f64: 15 x 144 = 2160 GB/s = 72%")
check(res["target"]["met"] is True and res["target"]["measured_pct"] == 76.8, "target verdict: 76.8% >= 75% met")
check("% copy" in p.stderr and "met" in p.stderr, "table on stderr")
check(not [f for f in os.listdir(TMP) if f.startswith(".cuda-bench-")], "no temporary file left behind")

# Failure paths: each one exits non-zero with one "run_cuda_bench: error:" line.
bad_copy = script("badcopy", 'print(json.dumps({"valid": False, "best_gbs": 0}))')
fail_yee = script("failyee", 'sys.stderr.write("yee: error: CUDA backend: no usable GPU\\n"); sys.exit(1)')
for label, proc, code in (
        ("invalid copy measurement", bench(copy=bad_copy), 1),
        ("failing yee", bench(yee=fail_yee), 1),
        ("CPU-backend yee", bench(env={"FAKE_BACKEND": "cpu"}), 1),
        ("bad --precisions", bench("--precisions", "f16"), 2),
        ("bad --sizes", bench("--sizes", "abc"), 2)):
    check(proc.returncode == code and "error" in proc.stderr,
          "%s: exit %d (got %d: %s)" % (label, code, proc.returncode, proc.stderr.strip()[-160:]))
shutil.rmtree(TMP, ignore_errors=True)
finish()
