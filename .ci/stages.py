#!/usr/bin/env python3
"""Runs the stages of `make test` (each a make target), times them and prints the table at the end.

    python3 .ci/stages.py --logs DIR [--budget-min 75] [--done NAME=SECONDS ...]
                          --background 'T1 T2 ...' --quiet 'T3 T4 ...' --measured 'T5 T6 ...'

Two phases, so that the machine's two cores are used without a build disturbing a measurement:
  1. the background stages (image and Spack builds, which measure nothing) one after the other, while the
     quiet stages (unit tests, lint, correctness checks: outcomes that do not depend on timing) run beside
     them one after the other;
  2. the measured stages (runs whose figures a stage judges) one at a time, with nothing beside them.
Each stage's output goes to DIR/<stage>.log and is printed whole when the stage ends, so two stages
never interleave on the terminal; a line every minute says what is running. The first failure stops the
run: nothing new starts and a running stage is sent SIGTERM (its own traps tear down daemons and
clusters). A total over --budget-min fails the run with a line naming the slowest stages, so a slow stage
is noticed before CI's limit. --jobs 1 runs everything in one line (the plain serial order).
"""
import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HEARTBEAT_S = 60
TERM_GRACE_S = 180   # a vcluster or dockerd teardown after SIGTERM takes well under this


def mmss(seconds):
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60}:{seconds % 60:02d}"


class Runner:
    def __init__(self, logs, make):
        self.logs = logs
        self.make = make
        self.lock = threading.Lock()
        self.running = {}        # stage -> (Popen, start time)
        self.times = []          # (stage, seconds, outcome)
        self.failed = None
        self.start = time.monotonic()
        self.last_print = self.start

    def say(self, text):
        with self.lock:
            print(text, flush=True)
            self.last_print = time.monotonic()

    def run_stage(self, stage):
        if self.failed:
            self.times.append((stage, 0.0, "not run"))
            return False
        log = self.logs / f"{stage}.log"
        began = time.monotonic()
        self.say(f"[{mmss(began - self.start)}] {stage}: started (log: {log})")
        with open(log, "wb") as out:
            proc = subprocess.Popen([self.make, "--no-print-directory", stage], stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            with self.lock:
                self.running[stage] = (proc, began)
            rc = proc.wait()
        took = time.monotonic() - began
        with self.lock:
            del self.running[stage]
            outcome = "passed" if rc == 0 else ("stopped" if self.failed else f"FAILED (exit {rc})")
            self.times.append((stage, took, outcome))
            if rc != 0 and not self.failed:
                self.failed = stage
            text = log.read_bytes().decode("utf-8", "replace")
            print(f"===== {stage}: {outcome} in {mmss(took)} =====", flush=True)
            sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
            print(f"===== end of {stage} =====", flush=True)
            self.last_print = time.monotonic()
        if rc != 0:
            self.stop_others(stage)
        return rc == 0

    def run_line(self, stages):
        for stage in stages:
            if not self.run_stage(stage):
                break
        for stage in stages:     # the rest of a stopped line is listed as not run
            if stage not in {t[0] for t in self.times}:
                self.times.append((stage, 0.0, "not run"))

    def stop_others(self, failed_stage):
        with self.lock:
            others = [(s, p) for s, (p, _) in self.running.items() if s != failed_stage]
        for stage, proc in others:
            self.say(f"stages: {failed_stage} failed: stopping {stage} (SIGTERM, then SIGKILL after {TERM_GRACE_S} s)")
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            threading.Thread(target=self.kill_late, args=(proc,), daemon=True).start()

    @staticmethod
    def kill_late(proc):
        try:
            proc.wait(TERM_GRACE_S)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def heartbeat(self, done):
        while not done.wait(5):
            now = time.monotonic()
            with self.lock:
                quiet_for = now - self.last_print
                running = ", ".join(f"{s} ({mmss(now - t)})" for s, (_, t) in self.running.items())
            if running and quiet_for >= HEARTBEAT_S:
                self.say(f"[{mmss(now - self.start)}] running: {running}")


def parse_done(items):
    done = []
    for item in items:
        name, _, seconds = item.partition("=")
        try:
            done.append((name, float(seconds), "passed"))
        except ValueError:
            raise SystemExit(f"stages: error: --done {item!r}: expected NAME=SECONDS")
    return done


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--logs", required=True, type=Path, help="folder for each stage's log")
    parser.add_argument("--background", default="", help="stages that build and measure nothing (phase 1)")
    parser.add_argument("--quiet", default="", help="stages whose outcome does not depend on timing (phase 1)")
    parser.add_argument("--measured", default="", help="stages that judge measured figures (phase 2, alone)")
    parser.add_argument("--jobs", type=int, default=2, choices=(1, 2),
                        help="2: phase 1 runs its two lines side by side (default); 1: all in one line")
    parser.add_argument("--budget-min", type=float, default=75.0,
                        help="fail when the total passes this many minutes; 0: no limit (default: %(default)s)")
    parser.add_argument("--done", action="append", default=[], metavar="NAME=SECONDS",
                        help="a stage make already ran before this script (listed in the table)")
    parser.add_argument("--make", default=os.environ.get("MAKE", "make"), help="the make to call")
    args = parser.parse_args()
    if args.budget_min < 0:
        parser.error("--budget-min must be 0 or more")
    background, quiet, measured = (s.split() for s in (args.background, args.quiet, args.measured))
    seen = {}
    for stage in background + quiet + measured:
        seen[stage] = seen.get(stage, 0) + 1
    repeated = sorted(s for s, n in seen.items() if n > 1)
    if repeated:
        parser.error(f"a stage is listed twice: {' '.join(repeated)}")
    args.logs.mkdir(parents=True, exist_ok=True)
    before = parse_done(args.done)
    runner = Runner(args.logs, args.make)
    done = threading.Event()
    threading.Thread(target=runner.heartbeat, args=(done,), daemon=True).start()
    runner.say(f"stages: phase 1: {' '.join(background) or '-'} | beside them: {' '.join(quiet) or '-'}; "
               f"phase 2, one at a time: {' '.join(measured) or '-'}")
    try:
        if args.jobs == 2 and background and quiet:
            side = threading.Thread(target=runner.run_line, args=(background,))
            side.start()
            runner.run_line(quiet)
            side.join()
        else:
            runner.run_line(background + quiet)
        runner.run_line(measured)
    except KeyboardInterrupt:
        runner.failed = runner.failed or "interrupted"
        runner.stop_others("interrupted")
    done.set()
    total = time.monotonic() - runner.start + sum(t for _, t, _ in before)
    rows = before + runner.times
    print("\nmake test: stage times (phase 1 stages ran two at a time, so their sum exceeds the wall time)")
    for stage, took, outcome in rows:
        print(f"  {stage:34s} {mmss(took):>8s}  {outcome}")
    print(f"  {'total (wall)':34s} {mmss(total):>8s}")
    if runner.failed:
        print(f"make test: FAILED in {runner.failed} (log: {args.logs / (runner.failed + '.log')})")
        return 1
    if args.budget_min and total > args.budget_min * 60:
        slowest = sorted(rows, key=lambda r: -r[1])[:3]
        print(f"make test: FAILED: the run took {mmss(total)}, over its {args.budget_min:g}-minute budget "
              f"(CI stops at 90); slowest: " + ", ".join(f"{s} {mmss(t)}" for s, t, _ in slowest))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
