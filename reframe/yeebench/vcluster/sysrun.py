"""Running system commands with one-line failures instead of tracebacks."""
import subprocess
from typing import List, Optional


class SystemError_(RuntimeError):
    """A system command failed; str() is a one-line reason for the user."""


def run(cmd: List[str], check: bool = True, timeout: float = 60, env: Optional[dict] = None,
        quiet: bool = False) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=timeout, env=env)
    except FileNotFoundError:
        raise SystemError_(f"command not found: {cmd[0]}")
    except subprocess.TimeoutExpired:
        raise SystemError_(f"timed out after {timeout:.0f} s: {' '.join(cmd)}")
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise SystemError_(f"`{' '.join(cmd)}` failed: {detail[-1] if detail else f'exit {proc.returncode}'}")
    return proc
