"""The ReFrame `io` family (reframe/yeebench/checks/io/io.py) loads, has exactly one smoke member, and
that member passes against the yee built here: a valid run that wrote every step, with
the I/O figures the results tooling reads (io_seconds_per_step, io_gbs, bytes_written,
io_share) in ReFrame's JSON report, with units and directions."""
import json
import os
import shutil
import subprocess
import sys

from io_testlib import SKIP
from yee_testlib import YEE, check, fail, finish, scratch_dir

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


def reframe_python():
    """A python with ReFrame: $YEE_PY (the project's venv) or this one."""
    for py in (os.environ.get("YEE_PY"), sys.executable):
        if py and os.path.exists(os.path.join(os.path.dirname(py), "reframe")):
            return py
    print("SKIP: ReFrame is not installed next to $YEE_PY or this python")
    sys.exit(SKIP)


if not os.path.exists(os.path.join(REPO, "reframe", "yeebench", "checks", "io", "io.py")):
    print("SKIP: no reframe/yeebench/checks/io/io.py beside this solver (built outside the yeebench repository)")
    sys.exit(SKIP)
py = reframe_python()
rfm = os.path.join(os.path.dirname(py), "reframe")
tmp = scratch_dir("yee-io-rfm-")
os.makedirs(os.path.join(tmp, "prefix", "bin"))
os.symlink(os.path.abspath(YEE), os.path.join(tmp, "prefix", "bin", "yee"))
env = dict(os.environ, YEEBENCH_PREFIX=os.path.join(tmp, "prefix"), YEEBENCH_RFM_DIR=tmp,
           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
base = [rfm, "-C", os.path.join(REPO, "reframe/config/settings.py"), "--system", "local",
        "-c", os.path.join(REPO, "reframe/yeebench/checks/io/io.py")]


report = os.path.join(tmp, "report.json")
p = subprocess.run(base + ["--mode", "smoke", "-r", "--prefix", os.path.join(tmp, "rfm"), "--report-file", report],
                   capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
check(p.returncode == 0, "smoke member passes (reframe exit %d)%s" % (
    p.returncode, "" if p.returncode == 0 else ": " + p.stdout[-1500:]))
check(os.path.exists(report), "ReFrame wrote its JSON report")
if os.path.exists(report):
    cases = [c for r in json.load(open(report))["runs"] for c in r["testcases"]
             if c.get("name", "").startswith("IoOutput")]
    names = [c.get("display_name") for c in cases]
    check(names == ["IoOutput %format=binary %strategy=per-rank %ranks=2 %n_per_rank=30"],
          "the family's smoke set is exactly one member: %s" % names)
    perf = {}  # ReFrame 4 report: perfvalues {"system:partition:name": [value, ref, lo, hi, unit, result]}
    for c in cases:
        for key, v in (c.get("perfvalues") or {}).items():
            perf[key.split(":")[-1]] = (v[0], v[4])
    dirs = (cases[0].get("perf_directions") or {}) if cases else {}
    want = {"io_seconds_per_step": "s", "io_gbs": "GB/s", "bytes_written": "B", "io_share": "%"}
    check(all(k in perf and perf[k][1] == u for k, u in want.items()),
          "report has %s with units: %s" % (sorted(want), {k: perf.get(k) for k in want}))
    check(perf.get("bytes_written", (0,))[0] > 6 * 4 * 60 * 30 * 30 * 10 and 0 < perf.get("io_share", (0,))[0] <= 100,
          "bytes written cover 10 steps of 2 x 30^3 x 6 float32, I/O share in (0, 100] %")
    check(dirs.get("io_gbs") == "higher" and dirs.get("io_seconds_per_step") == "lower",
          "perf_directions: io_gbs higher, io_seconds_per_step lower")
shutil.rmtree(tmp, ignore_errors=True)
finish()
