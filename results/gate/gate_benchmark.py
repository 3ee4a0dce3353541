#!/usr/bin/env python3
"""Measure the regression gate's detection and false-alarm rates on this machine.

Each trial records a baseline run of the gate check (N repeats), then candidate
runs with 0 % (no change), +10 % and +20 % extra time steps, in a shuffled order,
and runs `yeebench results compare` with its DEFAULT settings between the
baseline and each candidate. The injected work changes the time metrics
(wall-clock loop_time_s and process cpu_time_s); throughput per cell
is unchanged by design. For each time metric the table counts the trials where
compare classified it 'regressed' (and exited 1), and the no-change line counts
trials where compare exited non-zero for any metric.

    .venv/bin/python results/gate/gate_benchmark.py --trials 20 --repeats 7 --out /tmp/gate-bench

Writes a Markdown table (and per-trial JSON) under --out; the table in
results/README.md came from this script.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402


TIME_METRICS = ("loop_time_s", "cpu_time_s")


def compare(baseline, candidate):
    """Run the real CLI with default settings; returns (exit code, {metric: result})."""
    done = subprocess.run([str(Path(sys.executable).parent / "yeebench"), "results", "compare",
                           "--baseline", baseline, "--candidate", candidate, "--format", "json"],
                          capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"compare failed: {done.stderr.strip()}")
    results = json.loads(done.stdout)["results"]
    return done.returncode, {r["metric"]: r for r in results}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=7, help="repeats per run (default: %(default)s)")
    parser.add_argument("--levels", default="0,0.1,0.2", help="injected extra work fractions")
    parser.add_argument("--nx", type=int, default=None)
    parser.add_argument("--base-steps", type=int, default=None)
    parser.add_argument("--out", default="gate-benchmark", help="output folder (runs, trials.json, table.md)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--binary", help="solver binary (default: yee from the install prefix or PATH)")
    args = parser.parse_args()
    levels = [float(x) for x in args.levels.split(",")]
    out = Path(args.out)
    results_dir = out / "runs"
    binary = args.binary or common.find_workload(out / "bin")
    rng = random.Random(args.seed)
    trials = []
    started = time.time()
    for trial in range(args.trials):
        baseline = common.record_run(binary, args.repeats, results_dir / f"t{trial:02d}-base",
                                     nx=args.nx, base_steps=args.base_steps)
        order = levels[:]
        rng.shuffle(order)
        for level in order:
            candidate = common.record_run(binary, args.repeats, results_dir / f"t{trial:02d}-{level:g}",
                                          extra_work=level, nx=args.nx, base_steps=args.base_steps)
            code, by_metric = compare(baseline, candidate)
            trials.append({"trial": trial, "extra_work": level, "exit": code, "baseline": baseline,
                           "candidate": candidate, "metrics": by_metric})
            print(f"trial {trial:2d} +{level * 100:3.0f}% exit {code}: " + "; ".join(
                f"{m} {by_metric[m]['change'] * 100:+6.1f}% ±{by_metric[m]['noise'] * 100:4.1f}% "
                f"{by_metric[m]['verdict']}" for m in TIME_METRICS), flush=True)
    elapsed = time.time() - started
    lines = [f"workload: {os.path.basename(binary)} ({binary}), {args.repeats} repeats per run, "
             f"{args.trials} trials per level, {elapsed / 60:.1f} min, host {os.uname().nodename}, "
             f"{os.cpu_count()} CPUs", "",
             "| metric | injected extra work | trials | flagged regressed | rate | median measured change |",
             "|---|---|---|---|---|---|"]
    for metric in TIME_METRICS:
        for level in levels:
            picked = [t for t in trials if t["extra_work"] == level]
            flagged = sum(1 for t in picked if t["metrics"][metric]["verdict"] == "regressed")
            changes = sorted(t["metrics"][metric]["change"] for t in picked)
            what = "false alarms" if level == 0 else "detected"
            lines.append(f"| {metric} | +{level * 100:.0f}% | {len(picked)} | {flagged} | "
                         f"{what} {100 * flagged / len(picked):.0f}% | {changes[len(changes) // 2] * 100:+.1f}% |")
    for level in levels:  # the gate's verdict: compare's exit status over all figures
        picked = [t for t in trials if t["extra_work"] == level]
        failing = sum(1 for t in picked if t["exit"] != 0)
        what = "false alarms" if level == 0 else "detected"
        lines.append(f"| any figure (exit status) | +{level * 100:.0f}% | {len(picked)} | {failing} | "
                     f"{what} {100 * failing / len(picked):.0f}% | |")
    table = "\n".join(lines) + "\n"
    (out / "trials.json").write_text(json.dumps(trials, indent=1) + "\n")
    (out / "table.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
