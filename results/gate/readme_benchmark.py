#!/usr/bin/env python3
"""The gate on the README's workflow: false alarms and detection of `make run` + `compare`.

Each trial makes three `make run`-style runs (reframe/run.sh, the smoke selection) in shuffled order:
two of unchanged code (A, B) and one whose solver is really 20 % slower (S: yee built with
-DYEE_INJECTED_SLOWDOWN=20, which spins after every step for 20 % of the CPU time the step took).
A and B are recorded in one results tree, as a user's
`results/` fills up run after run; S in another (a slowed run is not history). Then, with compare's
DEFAULT settings and that results tree as its history:

  false alarm: `compare --baseline A --candidate B` calls any figure 'regressed'
  detection:   `compare --baseline A --candidate S` calls the solver's mcells_per_s 'regressed'
               (every mcells_per_s figure of the selection; counted per compare and per figure)
  gate caught: that compare exits 1 with at least one mcells_per_s 'regressed' (the gate fails, for
               the right reason)

    .venv/bin/python results/gate/readme_benchmark.py --trials 20 --out build/gate-readme

Prints progress, then one JSON summary line; per-trial JSON goes to --out/trials.jsonl.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

from yeebench.results.formats import verdict_text   # the benchmark runs with the suite's venv

REPO = Path(__file__).resolve().parents[2]
SOLVER_METRIC = "mcells_per_s"


def slow_prefix(prefix, out, percent):
    """A prefix whose yee is built with YEE_INJECTED_SLOWDOWN=percent (the same sources and options as
    the normal build otherwise) and whose other programs are PREFIX's."""
    slowed = out / "slow-prefix"
    shutil.rmtree(slowed, ignore_errors=True)
    build = out / "slow-build"
    print(f"building yee with a {percent} % injected slowdown in {build}", file=sys.stderr)
    for command in (["cmake", "-S", str(REPO / "solver"), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     "-DYEE_TESTS=OFF", f"-DYEE_INJECTED_SLOWDOWN={percent}"],
                    ["cmake", "--build", str(build), "--target", "yee", f"-j{os.cpu_count() or 1}"]):
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError(f"{' '.join(command[:2])} failed: {(proc.stderr or proc.stdout).strip()[-400:]}")
    (slowed / "bin").mkdir(parents=True)
    shutil.copy2(build / "yee", slowed / "bin" / "yee")
    for tool in (prefix / "bin").iterdir():
        if not (slowed / "bin" / tool.name).exists():
            (slowed / "bin" / tool.name).symlink_to(tool.resolve())
    return slowed


def make_run(prefix, results, rfm_dir, run_args, venv):
    env = dict(os.environ, PREFIX=str(prefix), RESULTS_DIR=str(results), YEEBENCH_RFM_DIR=str(rfm_dir),
               VENV=str(venv), RUN_SELECTION="--mode smoke")
    proc = subprocess.run(["bash", str(REPO / "reframe" / "run.sh"), *run_args], capture_output=True,
                          text=True, env=env, cwd=REPO)
    for line in proc.stdout.splitlines():
        if line.strip().startswith("results run"):
            return Path(line.split()[-1])
    raise RuntimeError(f"run.sh recorded no run (exit {proc.returncode}): {proc.stderr.strip()[-400:]}")


def compare(venv, base, cand, history, extra=()):
    proc = subprocess.run([str(venv / "bin" / "yeebench"), "results", "compare", "--baseline", str(base),
                           "--candidate", str(cand), "--results-dir", str(history), "--format", "json", *extra],
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"compare failed: {proc.stderr.strip()}")
    return proc.returncode, json.loads(proc.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("build/gate-readme"))
    parser.add_argument("--prefix", type=Path, default=REPO / "build" / "install")
    parser.add_argument("--venv", type=Path, default=Path(sys.executable).parent.parent)
    parser.add_argument("--keep", action="store_true", help="add to an earlier benchmark's history")
    parser.add_argument("--slowdown", type=int, default=20, metavar="PERCENT",
                        help="the slowed run's injected extra CPU work per step (default: 20)")
    parser.add_argument("run_args", nargs="*", default=["-n", "FdtdStrongScaling"],
                        help="extra run.sh arguments (default: -n FdtdStrongScaling)")
    parser.add_argument("--rescore", metavar="COMPARE_OPTIONS",
                        help="no new runs: compare the recorded trials again with these extra compare options "
                             "(e.g. '--no-history'), each trial's history as it stood then")
    args = parser.parse_args()
    out = args.out.resolve()
    if args.rescore is not None:
        return rescore(out, args.venv, args.rescore.split())
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    prefix = args.prefix.resolve()
    slow = slow_prefix(prefix, out, args.slowdown)
    rng = random.Random(2026)
    alarms = detected = gate_caught = figures_slowed = figures_caught = compares = 0
    with open(out / "trials.jsonl", "a") as log:
        for trial in range(args.trials):
            order = ["A", "B", "S"]
            rng.shuffle(order)
            runs = {}
            for kind in order:
                prefix_of_run, results = (slow, out / "results-slowed") if kind == "S" else (prefix, out / "results")
                runs[kind] = make_run(prefix_of_run, results, out / "rfm", args.run_args, args.venv)
            code_ab, same = compare(args.venv, runs["A"], runs["B"], out / "results")
            code_as, slowed = compare(args.venv, runs["A"], runs["S"], out / "results")
            false_alarm, solver, caught, every, gate = score(same, slowed, code_as)
            alarms += false_alarm
            detected += every
            gate_caught += gate
            figures_slowed += len(solver)
            figures_caught += len(caught)
            compares += 1
            record = {"trial": trial, "order": order, "runs": {k: str(v) for k, v in runs.items()}, "load": os.getloadavg(), "exit_same": code_ab,
                      "exit_slowed": code_as,
                      "false_alarm": false_alarm, "same_summary": same["summary"],
                      "solver_verdicts": [(r["parameters"], r["verdict"], r["change"], r["noise"]) for r in solver],
                      "history_runs": same["settings"].get("history_runs")}
            log.write(json.dumps(record) + "\n")
            log.flush()
            print(f"trial {trial + 1}/{args.trials}: false alarm {false_alarm}, solver "
                  f"{len(caught)}/{len(solver)} regressed, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    print(json.dumps({"trials": compares, "false_alarms": alarms, "false_alarm_rate": alarms / compares,
                      "detected": detected, "detection_rate": detected / compares,
                      "gate_caught": gate_caught, "gate_caught_rate": gate_caught / compares,
                      "solver_figures_caught": f"{figures_caught}/{figures_slowed}",
                      "load_end": os.getloadavg(), "selection": ["--mode", "smoke", *args.run_args]}))


def score(same, slowed, code_slowed):
    """(any figure of A vs B regressed, the solver figures of A vs S, those of them regressed,
    every one of them regressed, the gate failed on A vs S for one of them)."""
    false_alarm = any(r["verdict"] == "regressed" for r in same["results"])
    solver = [r for r in slowed["results"] if r["metric"] == SOLVER_METRIC]
    caught = [r for r in solver if r["verdict"] == "regressed"]
    every = bool(solver) and len(caught) == len(solver)
    return false_alarm, solver, caught, every, code_slowed == 1 and bool(caught)


def _noise(result):
    return "unknown" if result["noise"] is None else f"{result['noise']:.0%}"


def rescore(out, venv, extra):
    """The recorded trials compared again (history: the unchanged runs recorded before each trial's B)."""
    trials = [json.loads(line) for line in open(out / "trials.jsonl")]
    alarms = detected = gate_caught = 0
    for t in trials:
        runs = {k: Path(v) for k, v in t["runs"].items()}
        hidden = sorted(p for p in (out / "results" / "local").iterdir() if p.name > max(runs["A"].name, runs["B"].name))
        for p in hidden:   # the history as it stood: runs recorded later are moved aside meanwhile
            p.rename(p.with_name("." + p.name + ".later"))
        try:
            _, same = compare(venv, runs["A"], runs["B"], out / "results", extra)
            code_as, slowed = compare(venv, runs["A"], runs["S"], out / "results", extra)
        finally:
            for p in hidden:
                p.with_name("." + p.name + ".later").rename(p)
        false_alarm, solver, caught, every, gate = score(same, slowed, code_as)
        alarms += false_alarm
        detected += every
        gate_caught += gate
        flagged = ", ".join(f"{r['check']} {r['metric']} {r['change']:+.0%} (noise {_noise(r)})"
                            for r in same["results"] if r["verdict"] == "regressed")
        verdicts = ", ".join(f"{verdict_text(r)} {r['change']:+.0%} (noise {_noise(r)})" for r in solver)
        print(f"trial {t['trial'] + 1}: false alarm {false_alarm}{': ' + flagged if flagged else ''}; solver "
              f"{len(caught)}/{len(solver)} regressed: {verdicts}", file=sys.stderr)
    print(json.dumps({"rescored_with": extra, "trials": len(trials), "false_alarms": alarms, "detected": detected,
                      "gate_caught": gate_caught}))


if __name__ == "__main__":
    main()
