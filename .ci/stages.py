#!/usr/bin/env python3
"""Runs the stages of `make test` (each a make target), times them and prints the table at the end.

    python3 .ci/stages.py --logs DIR [--jobs 2] [--budget-min 75] [--done NAME=SECONDS ...]
                          --shared 'T1 T2 ...' --measured 'T3 T4 ...'
                          [--after 'T2:T1 ...'] [--holds 'RESOURCE:T1 ...']

Two phases, so that the machine's cores are used without other work disturbing a measurement:
  1. the shared stages (builds, unit tests, correctness checks: nothing they judge depends on timing),
     up to --jobs at a time, each started as soon as a worker is free, in the order given among those
     whose --after stages have passed and that hold no resource a running stage holds (--holds: the
     Docker data root, the one virtual cluster);
  2. the measured stages (runs whose figures a stage judges) one at a time, with nothing beside them,
     in the order given (their --after stages must come before them).
Each stage's output goes to DIR/<stage>.log and is printed whole when the stage ends, so two stages
never interleave on the terminal; a line every minute says what is running. The first failure stops the
run: nothing new starts and a running stage is sent SIGTERM (its own traps tear down daemons and
clusters); --keep-going runs on (a stage waiting for a failed one is not run), for a complete table of
times. A total over --budget-min fails the run with a line naming the slowest stages, so a slow stage
is noticed before CI's limit.
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


class Plan:
    """The stages, what each waits for and what each holds; pure (no processes), so it is easy to test."""

    def __init__(self, shared, measured, after, holds):
        self.shared, self.measured = list(shared), list(measured)
        self.after = after          # stage -> set of stages that must pass first
        self.holds = holds          # stage -> set of resources
        self.passed, self.started = set(), set()

    def next_shared(self, running):
        """The first shared stage that may start beside RUNNING (stages), or None."""
        busy = set().union(*(self.holds.get(s, set()) for s in running))
        for stage in self.shared:
            if stage in self.started or not self.after.get(stage, set()) <= self.passed:
                continue
            if self.holds.get(stage, set()) & busy:
                continue
            return stage
        return None

    def shared_left(self):
        return [s for s in self.shared if s not in self.started]


def parse_pairs(items, option):
    """'A:B,C' ... -> {A: {B, C}}; every name must be a stage of the run (a typo is an error, not a no-op)."""
    pairs = {}
    for item in items:
        key, sep, values = item.partition(":")
        names = [v for v in values.split(",") if v]
        if not sep or not key or not names:
            raise ValueError(f"{option} {item!r}: expected NAME:NAME[,NAME]")
        pairs.setdefault(key, set()).update(names)
    return pairs


class Runner:
    def __init__(self, logs, make, plan, keep_going=False):
        self.logs, self.make, self.plan, self.keep_going = logs, make, plan, keep_going
        self.failures = []
        self.lock = threading.Condition()
        self.running = {}        # stage -> (Popen or None, start time)
        self.times = []          # (stage, seconds, outcome)
        self.failed = None
        self.start = time.monotonic()
        self.last_print = self.start

    def say(self, text):
        with self.lock:
            print(text, flush=True)
            self.last_print = time.monotonic()

    def run_stage(self, stage):
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
            if rc == 0:
                self.plan.passed.add(stage)
            else:
                self.failures.append(stage)
                if not self.failed and not self.keep_going:
                    self.failed = stage
            text = log.read_bytes().decode("utf-8", "replace")
            print(f"===== {stage}: {outcome} in {mmss(took)} =====", flush=True)
            sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
            print(f"===== end of {stage} =====", flush=True)
            self.last_print = time.monotonic()
            self.lock.notify_all()
        if rc != 0 and not self.keep_going:
            self.stop_others(stage)
        return rc == 0

    def shared_worker(self):
        while True:
            with self.lock:
                while True:
                    if self.failed or not self.plan.shared_left():
                        return
                    stage = self.plan.next_shared(self.running)
                    if stage is not None:
                        self.plan.started.add(stage)
                        self.running[stage] = (None, time.monotonic())   # held until its process starts
                        break
                    if not self.running:   # nothing runs and nothing may start: a cycle or a failed prerequisite
                        if not self.failures:
                            self.failed = "plan"
                            print(f"stages: error: no stage can start: {' '.join(self.plan.shared_left())} "
                                  "wait for stages that never pass (--after)", flush=True)
                        self.lock.notify_all()
                        return
                    self.lock.wait()
            self.run_stage(stage)

    def run_measured(self):
        for stage in self.plan.measured:
            if self.failed:
                return
            if not self.plan.after.get(stage, set()) <= self.plan.passed:
                continue      # (--keep-going) a stage it waits for failed
            self.plan.started.add(stage)
            self.run_stage(stage)

    def stop_others(self, failed_stage):
        with self.lock:
            others = [(s, p) for s, (p, _) in self.running.items() if s != failed_stage and p is not None]
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
            raise ValueError(f"--done {item!r}: expected NAME=SECONDS")
    return done


def make_plan(args, parser):
    shared, measured = args.shared.split(), args.measured.split()
    counts = {}
    for stage in shared + measured:
        counts[stage] = counts.get(stage, 0) + 1
    repeated = sorted(s for s, n in counts.items() if n > 1)
    if repeated:
        parser.error(f"a stage is listed twice: {' '.join(repeated)}")
    try:
        after = parse_pairs(" ".join(args.after).split(), "--after")
        resources = parse_pairs(" ".join(args.holds).split(), "--holds")
    except ValueError as err:
        parser.error(str(err))
    holds = {}
    for resource, stages in resources.items():
        for stage in stages:
            holds.setdefault(stage, set()).add(resource)
    for stage, deps in after.items():
        unknown = sorted(({stage} | deps) - set(counts))
        if unknown:
            parser.error(f"--after {stage}: not a stage of this run: {' '.join(unknown)}")
        if stage in shared and deps & set(measured):
            parser.error(f"--after {stage}: a shared stage cannot wait for a measured one ({' '.join(sorted(deps))})")
        if stage in measured and any(measured.index(d) > measured.index(stage) for d in deps if d in measured):
            parser.error(f"--after {stage}: a measured stage it waits for comes after it in --measured")
    unknown = sorted(set(holds) - set(counts))
    if unknown:
        parser.error(f"--holds: not a stage of this run: {' '.join(unknown)}")
    return Plan(shared, measured, after, holds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--logs", required=True, type=Path, help="folder for each stage's log")
    parser.add_argument("--shared", default="", help="stages that may run beside each other (phase 1), by priority")
    parser.add_argument("--measured", default="", help="stages that judge measured figures (phase 2, alone)")
    parser.add_argument("--after", action="append", default=[], metavar="'STAGE:DEP[,DEP] ...'",
                        help="STAGE starts only after DEP passed")
    parser.add_argument("--holds", action="append", default=[], metavar="'RESOURCE:STAGE[,STAGE] ...'",
                        help="stages holding one RESOURCE never run at once")
    parser.add_argument("--jobs", type=int, default=2, help="shared stages at once (default: %(default)s)")
    parser.add_argument("--budget-min", type=float, default=75.0,
                        help="fail when the total passes this many minutes; 0: no limit (default: %(default)s)")
    parser.add_argument("--done", action="append", default=[], metavar="NAME=SECONDS",
                        help="a stage make already ran before this script (listed in the table)")
    parser.add_argument("--keep-going", action="store_true",
                        help="run every stage whose prerequisites passed, even after a failure")
    parser.add_argument("--make", default=os.environ.get("MAKE", "make"), help="the make to call")
    args = parser.parse_args()
    if args.budget_min < 0:
        parser.error("--budget-min must be 0 or more")
    if args.jobs < 1:
        parser.error("--jobs must be 1 or more")
    plan = make_plan(args, parser)
    try:
        before = parse_done(args.done)
    except ValueError as err:
        parser.error(str(err))
    args.logs.mkdir(parents=True, exist_ok=True)
    runner = Runner(args.logs, args.make, plan, args.keep_going)
    done = threading.Event()
    threading.Thread(target=runner.heartbeat, args=(done,), daemon=True).start()

    def interrupted(signum, frame):     # SIGTERM as Ctrl-C: the running stages get it too, by process group
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, interrupted)
    runner.say(f"stages: phase 1, {args.jobs} at a time: {' '.join(plan.shared) or '-'}; "
               f"phase 2, one at a time: {' '.join(plan.measured) or '-'}")
    try:
        workers = [threading.Thread(target=runner.shared_worker) for _ in range(args.jobs)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        runner.run_measured()
    except KeyboardInterrupt:
        runner.failed = runner.failed or "interrupted"
        runner.stop_others("interrupted")
        with runner.lock:
            procs = [p for p, _ in runner.running.values() if p is not None]
        for proc in procs:      # their traps tear down daemons and clusters: wait for them
            try:
                proc.wait(TERM_GRACE_S)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
    done.set()
    total = time.monotonic() - runner.start + sum(t for _, t, _ in before)
    ran = {s for s, _, _ in runner.times}
    rows = before + runner.times + [(s, 0.0, "not run") for s in plan.shared + plan.measured if s not in ran]
    print(f"\nmake test: stage times (phase 1 ran up to {args.jobs} stages at a time, so the sum exceeds the wall time)")
    for stage, took, outcome in rows:
        print(f"  {stage:34s} {mmss(took):>8s}  {outcome}")
    print(f"  {'total (wall)':34s} {mmss(total):>8s}")
    if runner.failures and not runner.failed:
        print(f"make test: FAILED in {' '.join(runner.failures)} (logs in {args.logs})")
        return 1
    if runner.failed:
        where = "" if runner.failed in ("plan", "interrupted") else f" (log: {args.logs / (runner.failed + '.log')})"
        print(f"make test: FAILED in {runner.failed}{where}")
        return 1
    if args.budget_min and total > args.budget_min * 60:
        slowest = sorted(rows, key=lambda r: -r[1])[:3]
        print(f"make test: FAILED: the run took {mmss(total)}, over its {args.budget_min:g}-minute budget "
              f"(CI stops at 90); slowest: " + ", ".join(f"{s} {mmss(t)}" for s, t, _ in slowest))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
