"""One `yeebench` command in a forked child of a process that has imported the suite once: the exit code,
stdout and stderr as the real command line gives them, a memory ceiling, and a deadline after which
the command counts as hung and is killed.

Forking costs milliseconds where a new interpreter costs a second of imports, which is what lets a
few hundred commands run within the stage's budget.
"""
import io
import os
import resource
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass

#: The exit of a child whose command raised past the CLI (the traceback is on its stderr).
RAISED = 70
#: A command may use this much address space; a read of /dev/zero or of a 3 GB file would not fit.
MEMORY_LIMIT = 3 * 1024 ** 3


@dataclass
class Outcome:
    argv: list
    code: int          # exit code; None when it hung or died of a signal
    out: str
    err: str
    hung: bool = False
    signal: int = 0
    seconds: float = 0.0

    @property
    def traceback(self):
        return self.code == RAISED or "Traceback (most recent call last)" in self.err


def _child(argv, cwd, out, err, env):
    os.chdir(cwd)
    os.environ.update(env)
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    sys.stdin = open(os.devnull)
    sys.stdout = io.TextIOWrapper(open(1, "wb", closefd=False), encoding="utf-8", line_buffering=True)
    sys.stderr = io.TextIOWrapper(open(2, "wb", closefd=False), encoding="utf-8", errors="backslashreplace",
                                  line_buffering=True)
    from yeebench.cli import main
    try:
        code = main(list(argv))
    except SystemExit as done:             # argparse's usage errors
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 2)
    except BaseException:                  # what the real command line would print as a traceback
        traceback.print_exc()
        code = RAISED
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code if isinstance(code, int) and 0 <= code < 256 else RAISED)


def run(argv, cwd, timeout_s, env=None):
    """Run `yeebench argv...` in cwd; an Outcome (hung=True when it outlived timeout_s and was killed)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            try:
                _child(argv, cwd, out, err, env or {})
            finally:
                os._exit(RAISED)
        hung, status = False, 0
        deadline = started + timeout_s
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                hung = True
                os.kill(pid, signal.SIGKILL)
                _, status = os.waitpid(pid, 0)
                break
            time.sleep(0.01)
        seconds = time.monotonic() - started
        texts = []
        for stream in (out, err):
            stream.seek(0)
            texts.append(stream.read(1 << 20).decode("utf-8", "replace"))
    code = os.waitstatus_to_exitcode(status)
    killed = -code if code < 0 else 0
    return Outcome(list(argv), None if (hung or killed) else code, texts[0], texts[1], hung, killed, seconds)
