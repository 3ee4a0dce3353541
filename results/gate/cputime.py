#!/usr/bin/env python3
"""Run a command under the real-time FIFO scheduler when permitted and print its CPU time
(user + system from wait4's rusage, microsecond resolution) as a JSON line after the
command's own output: {"cpu_seconds": .., "scheduler": "fifo"|"other", "exit": ..}.

Used by the gate check. On a machine shared with other jobs, a normally scheduled
single-threaded run is preempted every few milliseconds: its wall-clock time measures
the neighbours, and even its CPU time grows with the cache refills after each switch.
Under SCHED_FIFO (root or CAP_SYS_NICE) it keeps its core until it finishes, so both
times measure the program. The kernel's real-time throttling still leaves other tasks
5 % of every second. YEEBENCH_GATE_REALTIME=0 turns this off.
Usage: cputime.py COMMAND [ARG...]; exits with the command's status.
"""
import json
import os
import sys

REALTIME_PRIORITY = 10  # low among real-time priorities: kernel threads stay above it


def main():
    if len(sys.argv) < 2:
        print("cputime.py: error: no command given", file=sys.stderr)
        return 2
    scheduler = "other"
    if os.environ.get("YEEBENCH_GATE_REALTIME", "1") != "0":
        try:  # set before fork: the child inherits it from its first instruction
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(REALTIME_PRIORITY))
            scheduler = "fifo"
        except (PermissionError, OSError, AttributeError):
            pass  # not permitted here: run normally, reported as "other"
    sys.stdout.flush()
    try:
        pid = os.fork()
    except OSError as err:
        print(f"cputime.py: error: cannot fork: {err.strerror}", file=sys.stderr)
        return 1
    if pid == 0:
        try:
            os.execvp(sys.argv[1], sys.argv[1:])
        except OSError as err:
            print(f"cputime.py: error: cannot run {sys.argv[1]}: {err.strerror}", file=sys.stderr)
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    print(json.dumps({"cpu_seconds": usage.ru_utime + usage.ru_stime, "scheduler": scheduler, "exit": code}))
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
