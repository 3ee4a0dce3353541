"""Who owns the machine's one virtual cluster.

The namespaces (ybvc-*) and the cgroup (yeebench-vcluster) have fixed, machine-wide names, so one machine
holds one cluster at a time. `up` claims them first, atomically, in CLAIM_PATH (its state directory, PID,
user, working directory and start time); a second `up` reads the claim and says whose the cluster is,
and `down` touches the namespaces, cgroups and daemons only when the claim names its own state directory.
"""
import getpass
import json
import os
import socket
import time
from typing import Optional

CLAIM_PATH = "/run/yeebench-vcluster.owner.json"


class Claimed(RuntimeError):
    """The cluster names are held by another state directory (the message says whose)."""


def read() -> Optional[dict]:
    try:
        with open(CLAIM_PATH) as f:
            data = json.load(f)
        return data if isinstance(data, dict) and "state_dir" in data else None
    except (OSError, ValueError):
        return None


def describe(claim: dict) -> str:
    return (f"the virtual cluster of state directory {claim['state_dir']}, started by user "
            f"{claim.get('user', '?')} (pid {claim.get('pid', '?')}, in {claim.get('cwd', '?')}, "
            f"at {claim.get('started', '?')})")


def claim(state_dir: str, stale) -> None:
    """Take the names for `state_dir`, or raise Claimed naming the holder. `stale(claim)` says whether
    an existing claim is left from a cluster that is gone (then it is replaced)."""
    record = {"state_dir": state_dir, "pid": os.getpid(), "user": _user(), "cwd": os.getcwd(),
              "host": socket.gethostname(), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    for _ in range(2):
        try:
            fd = os.open(CLAIM_PATH, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            held = read()
            if held is not None and held["state_dir"] == state_dir:
                raise Claimed(f"{describe(held)} is already up: run `yeebench vcluster down "
                              f"--state-dir {state_dir}` first")
            if held is not None and not stale(held):
                raise Claimed(f"{describe(held)} is up; stop it there with `yeebench vcluster down "
                              f"--state-dir {held['state_dir']}`")
            _remove_if_unchanged(held)
            continue
        with os.fdopen(fd, "w") as f:
            json.dump(record, f)
        return
    raise Claimed(f"could not claim {CLAIM_PATH}: another `vcluster up` is starting at the same time")


def owns(state_dir: str) -> bool:
    """True when `state_dir` may tear the cluster names down: it holds the claim, or nobody does
    (namespaces left by a crash before any claim are anybody's to clean)."""
    held = read()
    return held is None or held["state_dir"] == state_dir


def release(state_dir: str) -> None:
    held = read()
    if held is not None and held["state_dir"] == state_dir:
        _remove_if_unchanged(held)


def _remove_if_unchanged(held: Optional[dict]) -> None:
    if read() == held:
        try:
            os.remove(CLAIM_PATH)
        except FileNotFoundError:
            pass


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())
