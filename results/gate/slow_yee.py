#!/usr/bin/env python3
"""A real, load-independent slowdown of a program: run it, and keep it stopped (SIGSTOP) for a fixed
share of the wall-clock time. Stopped for 1/6 of the time, every rate it reports from its own wall
clock drops to 5/6: 20 % more time per unit of work, whatever else the machine is doing.

    slow_yee.py REAL_PROGRAM [ARGS...]      (YEEBENCH_SLOWDOWN=0.2 by default)
"""
import os
import signal
import subprocess
import sys
import time

PERIOD_S = float(os.environ.get("YEEBENCH_SLOW_PERIOD_S", "0.002"))  # short: smoke solver loops last milliseconds


def main():
    if len(sys.argv) < 2:
        sys.exit("slow_yee: usage: slow_yee.py PROGRAM [ARGS...]")
    slowdown = float(os.environ.get("YEEBENCH_SLOWDOWN", "0.2"))
    stopped_share = slowdown / (1.0 + slowdown)     # +20 % time <=> stopped 1/6 of it
    proc = subprocess.Popen(sys.argv[1:])
    while proc.poll() is None:
        time.sleep(PERIOD_S * (1 - stopped_share))
        try:
            proc.send_signal(signal.SIGSTOP)
            time.sleep(PERIOD_S * stopped_share)
            proc.send_signal(signal.SIGCONT)
        except ProcessLookupError:
            break
    sys.exit(proc.wait())


if __name__ == "__main__":
    main()
