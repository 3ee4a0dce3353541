"""Whether a process still runs: the one test every owner check (run state, temporaries, daemons) uses."""
import os


def alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (a zombie child of ours counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
