#!/usr/bin/env python3
"""Time `yeebench results compare` against a history of many recorded runs (synthetic).

    python results/history_benchmark.py --runs 1000 --figures 50 --out build/history-benchmark

Writes RUNS run directories of FIGURES figures x REPEATS repeats each (system 'bench'), then times,
as a user would run them (a fresh process each): the first compare (builds the history cache),
`compare --baseline history` and a run-vs-run compare with the history's noise model (cache warm).
Prints one JSON line with the timings and `uptime`'s load.
"""
import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path


def write_runs(out, runs, figures, repeats, seed=1):
    rng = random.Random(seed)
    system_dir = out / "results" / "bench"
    for i in range(runs):
        run_id = f"2026{i // 28 % 12 + 1:02d}{i % 28 + 1:02d}T{i % 24:02d}0000Z-{i:08x}"
        run_dir = system_dir / run_id
        run_dir.mkdir(parents=True)
        lines = []
        for f in range(figures):
            for r in range(repeats):
                lines.append(json.dumps({
                    "schema": "yeebench-row", "schema_version": 1, "run_id": run_id,
                    "timestamp": f"2026-01-01T00:00:{i % 60:02d}Z", "system": "bench", "partition": "default",
                    "environ": "builtin", "check": f"Check{f // 10}", "parameters": {"size": f % 10},
                    "metric": f"time_{f}", "value": (1 + f) * rng.lognormvariate(0, 0.03), "unit": "s",
                    "direction": "lower", "direction_source": "declared", "repeat": r, "status": "pass"}))
        (run_dir / "rows.jsonl").write_text("\n".join(lines) + "\n")
    return sorted(system_dir.iterdir())


def timed(argv, cwd):
    """(wall seconds, CPU seconds) of one command: on a busy machine the CPU time is the steadier figure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if proc.returncode not in (0, 1):
        sys.exit(f"history_benchmark: {' '.join(map(str, argv))} failed: {proc.stderr.strip()}")
    return round(elapsed, 2), round(cpu, 2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--figures", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("build/history-benchmark"))
    args = parser.parse_args()
    args.out = args.out.resolve()
    shutil.rmtree(args.out, ignore_errors=True)
    print(f"history_benchmark: writing {args.runs} runs x {args.figures} figures x {args.repeats} repeats",
          file=sys.stderr)
    runs = write_runs(args.out, args.runs, args.figures, args.repeats)
    cli = [sys.executable, "-m", "yeebench", "results", "compare"]
    results = str(args.out / "results")
    history_cmd = cli + ["--baseline", "history", "--candidate", str(runs[-1]), "--results-dir", results]
    pair_cmd = cli + ["--baseline", str(runs[-2]), "--candidate", str(runs[-1]), "--results-dir", results]
    print("history_benchmark: first compare (builds the cache)", file=sys.stderr)
    cold = timed(history_cmd, args.out)
    warm = [timed(history_cmd, args.out) for _ in range(3)]
    pair = [timed(pair_cmd, args.out) for _ in range(3)]
    load = os.getloadavg()
    print(json.dumps({"runs": args.runs, "figures": args.figures, "repeats": args.repeats,
                      "cold_cache_wall_cpu_s": cold, "history_compare_wall_cpu_s": warm,
                      "pair_compare_with_noise_model_wall_cpu_s": pair,
                      "load_1_5_15": [round(x, 2) for x in load], "cpus": os.cpu_count()}))


if __name__ == "__main__":
    main()
