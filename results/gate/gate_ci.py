#!/usr/bin/env python3
"""The CI performance-regression step: two short runs of the gate check on this machine,
both ingested, then `yeebench results compare` with its default settings between them.
They measure the same thing, so the gate must pass (exit 0); a non-zero exit means
the gate raises false alarms here, which is itself a failure worth seeing.

    .venv/bin/python results/gate/gate_ci.py --out build/gate

Also writes the HTML report of the second run against the first (out/report.html).
"""
import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/gate", help="folder for the runs and the report (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=7, help="repeats per run (default: %(default)s)")
    args = parser.parse_args()
    out = Path(args.out)
    started = time.time()
    binary = common.find_workload(out / "bin")
    print(f"gate: workload {binary}, {args.repeats} repeats per run", flush=True)
    runs = []
    for name in ("baseline", "candidate"):
        try:
            run = common.record_run(binary, args.repeats, out / "runs")
        except (RuntimeError, subprocess.CalledProcessError) as err:
            print(f"gate: error: {name} run: {err}", file=sys.stderr)
            return 1
        print(f"gate: {name} run recorded in {run}", flush=True)
        runs.append(run)
    yeebench = str(Path(sys.executable).parent / "yeebench")
    report = subprocess.run([yeebench, "results", "report", runs[1], "--baseline", runs[0],
                             "-o", str(out / "report.html")], capture_output=True, text=True)
    if report.returncode != 0:
        print(f"gate: report failed: {report.stderr.strip()}", file=sys.stderr)
        return report.returncode
    gate = subprocess.run([yeebench, "results", "compare", "--baseline", runs[0], "--candidate", runs[1]])
    verdict = "passed" if gate.returncode == 0 else f"FAILED (compare exit {gate.returncode})"
    print(f"gate: {verdict} in {time.time() - started:.0f} s; report {out / 'report.html'}")
    return gate.returncode


if __name__ == "__main__":
    sys.exit(main())
