#!/usr/bin/env python3
"""The CI performance-regression step: two short runs of the gate check on this machine,
both ingested, then `yeebench results compare` with its default settings between them.
They measure the same thing, so any figure the gate calls regressed is a false alarm. A false alarm
is judged against a third run of the same code (false_alarm.py): when one pair with it agrees, the
alarm was noise (one run disturbed, or the load changed between runs) and is reported as such, naming
the figures and the load averages; when all three pairs differ, the gate calls noise a change here and
the step fails. Any other non-zero exit of compare (a figure missing, bad input) fails at once.

    .venv/bin/python results/gate/gate_ci.py --out build/gate

Also writes the HTML report of the second run against the first (out/report.html).
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import false_alarm  # noqa: E402


def record(name, binary, repeats, out, loads):
    """A run of the gate check, with the 1-minute load average when it started (None: it failed)."""
    loads[name] = os.getloadavg()[0]
    try:
        run = common.record_run(binary, repeats, out / "runs")
    except (RuntimeError, subprocess.CalledProcessError) as err:
        print(f"gate: error: {name} run: {err}", file=sys.stderr)
        return None
    print(f"gate: {name} run recorded in {run} (load average {loads[name]:.1f} at its start)", flush=True)
    return run


def compared(yeebench, baseline, candidate, out):
    """compare's per-figure results between two runs (its --format json), or None when it failed."""
    done = subprocess.run([yeebench, "results", "compare", "--baseline", baseline, "--candidate", candidate,
                           "--format", "json", "-o", str(out)], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        print(f"gate: compare failed: {done.stderr.strip()}", file=sys.stderr)
        return None
    return json.loads(out.read_text())["results"]


def flagged_between(yeebench, baseline, candidate, out):
    """The figures compare calls regressed or improved between two runs, or None when it failed."""
    results = compared(yeebench, baseline, candidate, out)
    return None if results is None else false_alarm.flagged(results)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/gate", help="folder for the runs and the report (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=7, help="repeats per run (default: %(default)s)")
    args = parser.parse_args()
    out = Path(args.out)
    started = time.time()
    binary = common.find_workload(out / "bin")
    print(f"gate: workload {binary}, {args.repeats} repeats per run", flush=True)
    runs, loads = [], {}
    for name in ("baseline", "candidate"):
        run = record(name, binary, args.repeats, out, loads)
        if run is None:
            return 1
        runs.append(run)
    yeebench = str(Path(sys.executable).parent / "yeebench")
    report = subprocess.run([yeebench, "results", "report", runs[1], "--baseline", runs[0],
                             "-o", str(out / "report.html")], capture_output=True, text=True)
    if report.returncode != 0:
        print(f"gate: report failed: {report.stderr.strip()}", file=sys.stderr)
        return report.returncode
    gate = subprocess.run([yeebench, "results", "compare", "--baseline", runs[0], "--candidate", runs[1]])
    rc = gate.returncode
    results = compared(yeebench, runs[0], runs[1], out / "baseline-candidate.json") if rc == 1 else None
    a_b = false_alarm.flagged(results or [])
    missing = [r for r in results or [] if r["verdict"] == "missing"]   # not noise: a figure the run lost
    if rc == 1 and a_b and not missing:
        # the same code called different: a third run says whether that was noise
        print(f"gate: the same code was called changed ({false_alarm.describe(a_b)}): a third run judges it "
              "(A baseline, B candidate, C recheck)", flush=True)
        third = record("recheck", binary, args.repeats, out, loads)
        if third is None:
            return 1
        a_c = flagged_between(yeebench, runs[0], third, out / "baseline-recheck.json")
        b_c = flagged_between(yeebench, runs[1], third, out / "candidate-recheck.json")
        if a_c is None or b_c is None:
            return 1
        outcome, reason = false_alarm.judge(a_b, a_c, b_c)
        loads_text = ", ".join(f"{name} {load:.1f}" for name, load in loads.items())
        if outcome == "noise":
            print(f"gate: the false alarm was noise: {reason}; load averages at the runs' starts {loads_text}")
            rc = 0
        else:
            print(f"gate: {reason}; load averages at the runs' starts {loads_text}", file=sys.stderr)
    verdict = "passed" if rc == 0 else f"FAILED (compare exit {gate.returncode})"
    print(f"gate: {verdict} in {time.time() - started:.0f} s; report {out / 'report.html'}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
