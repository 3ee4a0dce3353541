"""The benchmark script runs as the README shows it (here on tiny grids so it takes seconds):
both kernels on 1 rank x 2 threads and 2 ranks x 1 thread, the triad and read-modify-write
figures in the same run, a JSON file with one row per kernel, the kernels' checksums equal.
Timings of such tiny runs mean nothing; only the plumbing is checked."""
import json
import os
import subprocess
import sys

from yee_testlib import HERE, YEE, check, env_for, finish, scratch_dir

BENCH = os.path.join(HERE, "..", "bench", "run_bench.py")
TRIAD = os.path.join(os.path.dirname(YEE), "yee-triad")
out = os.path.join(scratch_dir("yee-bench-"), "bench.json")
p = subprocess.run([sys.executable, BENCH, "--yee", YEE, "--triad", TRIAD, "--sizes", "24", "--precisions", "f32",
                    "--layouts", "1x2,2x1", "--kernels", "fused,wavefront", "--repeats", "1", "--steps", "12",
                    "--out", out], capture_output=True, text=True, timeout=600, env=env_for(1))
check(p.returncode == 0, "run_bench.py exits 0 (%s)" % p.stderr.strip()[-300:])
doc = json.load(open(out)) if os.path.exists(out) else {"rows": []}
rows = doc["rows"]
check([(r["ranks"], r["threads"], r["kernel"]) for r in rows] ==
      [(1, 2, "fused"), (1, 2, "wavefront"), (2, 1, "fused"), (2, 1, "wavefront")], "one row per layout and kernel")
check(all(r["rmw_best_gbs"] > 0 and r["triad_best_gbs"] > 0 and r["mcells_per_s"] > 0 for r in rows),
      "triad, read-modify-write and Mcells/s recorded")
check(all(r["time_block"] >= 2 for r in rows if r["kernel"] == "wavefront"), "wavefront rows name their time block")
check(len({r["checksum"] for r in rows}) == 1, "every kernel and layout gives the same checksum")
check("load" in p.stdout.splitlines()[0] and "xRMW" in p.stdout, "table header with the load and RMW columns")
finish()
