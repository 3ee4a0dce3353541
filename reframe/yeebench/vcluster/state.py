"""The record of a running cluster (state.json in the state directory), written atomically."""
import json
import os
from typing import Optional

from yeebench import safe_io

from .layout import Layout

STATE_FILE = "state.json"


def write_atomic(path: str, text: str, mode: int = 0o644) -> None:
    """Write through a locked temporary named by a random token (safe_io): only a regular file is replaced."""
    safe_io.write_text(path, text, mode=mode)


def save(layout: Layout, daemons: dict, cgroup_parent: Optional[str], phase: str) -> None:
    data = {"layout": layout.to_dict(), "daemons": daemons, "cgroup_parent": cgroup_parent, "phase": phase}
    write_atomic(os.path.join(layout.state_dir, STATE_FILE), json.dumps(data, indent=1) + "\n")


def load(state_dir: str) -> Optional[dict]:
    path = os.path.join(state_dir, STATE_FILE)
    try:
        with open(path) as f:
            data = json.load(f)
        data["layout"] = Layout.from_dict(data["layout"])
        return data
    except (OSError, ValueError, KeyError, TypeError):
        return None
