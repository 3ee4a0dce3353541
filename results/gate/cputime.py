#!/usr/bin/env python3
"""Run a command and print its CPU time (user + system, from wait4's rusage, microsecond
resolution) as a JSON line after the command's own output.

Used by the gate check: CPU seconds of a single-threaded run measure the work done
and barely move when other processes share the cores, where wall-clock time does.
Usage: cputime.py COMMAND [ARG...]; exits with the command's status.
"""
import json
import os
import sys


def main():
    if len(sys.argv) < 2:
        print("cputime.py: error: no command given", file=sys.stderr)
        return 2
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
    print(json.dumps({"cpu_seconds": usage.ru_utime + usage.ru_stime, "exit": code}))
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
