"""One cpuset cgroup per virtual node (cgroup v1 or v2), so a node's jobs stay on the node's CPUs.

Optional: when no writable cpuset controller exists, the node's slurmd is still pinned with
sched_setaffinity (taskset), which every process it starts inherits.
"""
import os
from typing import Optional

CGROUP_NAME = "yeebench-vcluster"
V1_ROOT = "/sys/fs/cgroup/cpuset"
V2_ROOT = "/sys/fs/cgroup"


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _read(path: str) -> str:
    with open(path) as f:
        return f.read().strip()


def detect_root() -> Optional[str]:
    """Parent directory for our cgroups, or None when cpusets are unavailable."""
    if os.path.isfile(os.path.join(V1_ROOT, "cpuset.cpus")) and os.access(V1_ROOT, os.W_OK):
        return os.path.join(V1_ROOT, CGROUP_NAME)
    controllers = os.path.join(V2_ROOT, "cgroup.controllers")
    if os.path.isfile(controllers) and "cpuset" in _read(controllers).split() \
            and os.access(V2_ROOT, os.W_OK):
        return os.path.join(V2_ROOT, CGROUP_NAME)
    return None


def _is_v1(parent: str) -> bool:
    return parent.startswith(V1_ROOT + "/")


def create(parent: str, node_name: str, cpus) -> str:
    """Make parent/node_name restricted to `cpus`; returns its path (the wrapper joins it by writing its PID)."""
    cpu_list = ",".join(str(c) for c in cpus)
    if _is_v1(parent):
        if not os.path.isdir(parent):
            os.mkdir(parent)
            _write(os.path.join(parent, "cpuset.cpus"), _read(os.path.join(V1_ROOT, "cpuset.cpus")))
            _write(os.path.join(parent, "cpuset.mems"), _read(os.path.join(V1_ROOT, "cpuset.mems")))
        path = os.path.join(parent, node_name)
        os.makedirs(path, exist_ok=True)
        _write(os.path.join(path, "cpuset.cpus"), cpu_list)
        _write(os.path.join(path, "cpuset.mems"), _read(os.path.join(parent, "cpuset.mems")))
    else:
        if not os.path.isdir(parent):
            os.mkdir(parent)
            _write(os.path.join(V2_ROOT, "cgroup.subtree_control"), "+cpuset")
            _write(os.path.join(parent, "cgroup.subtree_control"), "+cpuset")
        path = os.path.join(parent, node_name)
        os.makedirs(path, exist_ok=True)
        _write(os.path.join(path, "cpuset.cpus"), cpu_list)
    return path


def procs_file(path: str) -> str:
    return os.path.join(path, "cgroup.procs")


def remove_all(parent: Optional[str]) -> None:
    """Remove node cgroups then the parent; a cgroup with processes left cannot go, so kill first."""
    for root in ([parent] if parent else [os.path.join(V1_ROOT, CGROUP_NAME),
                                           os.path.join(V2_ROOT, CGROUP_NAME)]):
        remove_tree_of_cgroups(root)


def remove_tree_of_cgroups(root: str) -> None:
    """rmdir `root`'s child cgroups, then `root`; one still holding a process stays (rmdir refuses)."""
    if not os.path.isdir(root):
        return
    for entry in os.listdir(root):
        child = os.path.join(root, entry)
        if os.path.isdir(child):
            try:
                os.rmdir(child)
            except OSError:
                pass
    try:
        os.rmdir(root)
    except OSError:
        pass


def cgroup_pids(parent: Optional[str]):
    """PIDs still inside our cgroups (processes that escaped a namespace kill, e.g. double-forked)."""
    pids = []
    for root in ([parent] if parent else []):
        if not os.path.isdir(root):
            continue
        for entry in os.listdir(root):
            f = os.path.join(root, entry, "cgroup.procs")
            if os.path.isfile(f):
                pids += [int(x) for x in _read(f).split()]
    return pids
