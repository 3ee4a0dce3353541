"""Make one node of a running virtual cluster bad on purpose: a slow link or a capped CPU.

What a site's acceptance run must find among healthy nodes, reproduced on demand so that a test can
assert that exactly this node is named:
  slow_link  the node's link through a token bucket at a lower rate (`tc ... tbf`, the same IFB
             redirect that --link-rate uses; netem needs a kernel module this machine kind lacks);
  cap_cpu    every process of the node (slurmd and the job steps it starts from then on) limited to a
             share of one CPU (cgroup v2 cpu.max, or v1 cpu.cfs_quota_us).
`clear` undoes both for a node; `down` removes whatever is left.
"""
import os
from typing import Optional

from . import cpusets, netns, state
from .layout import SWITCH_NETNS, Layout, parse_link_rate, tbf_burst_bytes
from .sysrun import run

CAP_NAME = "yeebench-vcluster-cap"
V1_CPU_ROOT = "/sys/fs/cgroup/cpu"
PERIOD_US = 100_000


class DegradeError(RuntimeError):
    """One line for the user: why the node could not be degraded."""


def _layout_and_node(state_dir: str, node_name: str):
    record = state.load(state_dir)
    if record is None or record.get("phase") != "up":
        raise DegradeError(f"no virtual cluster is up in {state_dir} (yeebench vcluster up)")
    layout: Layout = record["layout"]
    node = next((n for n in layout.nodes if n.name == node_name), None)
    if node is None:
        raise DegradeError(f"no node {node_name!r} in the cluster (nodes: {', '.join(layout.node_names)})")
    return record, layout, node


def slow_link(state_dir: str, node_name: str, rate_text: str) -> float:
    """Put the node's link at `rate_text` (e.g. 100mbit); returns the rate in bit/s."""
    _, layout, node = _layout_and_node(state_dir, node_name)
    try:
        rate = parse_link_rate(rate_text)
    except ValueError as err:
        raise DegradeError(str(err))
    if not rate:
        raise DegradeError("--link-rate needs a rate such as 100mbit (none is what --clear restores)")
    if layout.link_rate_bps and rate >= layout.link_rate_bps:
        raise DegradeError(f"{rate_text} is not slower than the cluster's {layout.link_rate_bps:.0f} bit/s links")
    if layout.link_rate_bps:          # the node's bucket exists: a lower rate in it
        _set_bucket(node, rate)
    else:
        _clear_link(layout, node)
        netns.shape_link(Layout(**{**layout.__dict__, "link_rate_bps": rate}), node)
    return rate


def _set_bucket(node, rate: float) -> None:
    run(["tc", "-n", SWITCH_NETNS, "qdisc", "replace", "dev", netns.ifb_name(node), "root", "tbf",
         "rate", f"{int(rate)}bit", "burst", str(tbf_burst_bytes(rate)), "latency", "100ms"])


def _clear_link(layout: Layout, node) -> None:
    """Back to the cluster's own link: its bucket at the cluster's rate, or no shaping at all."""
    sw = ["tc", "-n", SWITCH_NETNS]
    ifb = netns.ifb_name(node)
    if layout.link_rate_bps:
        _set_bucket(node, layout.link_rate_bps)
        return
    run(sw + ["qdisc", "del", "dev", node.veth_switch, "ingress"], check=False)
    run(sw + ["qdisc", "del", "dev", node.veth_switch, "root"], check=False)
    run(["ip", "-n", SWITCH_NETNS, "link", "del", ifb], check=False)


def _cap_dir(node_name: str) -> str:
    if os.path.isfile(os.path.join(cpusets.V2_ROOT, "cgroup.controllers")):
        return os.path.join(cpusets.V2_ROOT, cpusets.CGROUP_NAME, node_name)
    return os.path.join(V1_CPU_ROOT, CAP_NAME, node_name)


def cap_cpu(state_dir: str, node_name: str, percent: float) -> str:
    """Limit the node to `percent` of one CPU; returns the cgroup that holds the limit."""
    _, layout, node = _layout_and_node(state_dir, node_name)
    if not 0 < percent < 100:
        raise DegradeError(f"--cpu-percent must be between 0 and 100 (exclusive), got {percent:g}")
    quota = max(1000, int(PERIOD_US * percent / 100))
    path = _cap_dir(node.name)
    try:
        if path.startswith(V1_CPU_ROOT):
            if not os.path.isfile(os.path.join(V1_CPU_ROOT, "cpu.cfs_quota_us")):
                raise DegradeError(f"no cgroup cpu controller at {V1_CPU_ROOT} or {cpusets.V2_ROOT}")
            os.makedirs(path, exist_ok=True)
            _write(os.path.join(path, "cpu.cfs_period_us"), str(PERIOD_US))
            _write(os.path.join(path, "cpu.cfs_quota_us"), str(quota))
        else:
            if not os.path.isdir(path):
                raise DegradeError(f"{node.name} has no cgroup of its own ({path}): the cluster runs without cpusets")
            parent = os.path.dirname(path)
            _write(os.path.join(cpusets.V2_ROOT, "cgroup.subtree_control"), "+cpu")
            _write(os.path.join(parent, "cgroup.subtree_control"), "+cpu")
            _write(os.path.join(path, "cpu.max"), f"{quota} {PERIOD_US}")
        pids = netns.namespace_pids(node.netns)
        if not pids:
            raise DegradeError(f"no process runs in {node.netns}: is {node.name}'s slurmd up?")
        for pid in pids:      # already in the v2 cgroup (cpuset); v1 has a separate cpu hierarchy
            if path.startswith(V1_CPU_ROOT):
                _write(os.path.join(path, "cgroup.procs"), str(pid))
    except OSError as err:
        raise DegradeError(f"cannot cap {node.name}'s CPU at {path}: {err.strerror or err}")
    return path


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _uncap(node_name: str) -> None:
    path = _cap_dir(node_name)
    if path.startswith(V1_CPU_ROOT):
        if os.path.isdir(path):
            _write(os.path.join(path, "cpu.cfs_quota_us"), "-1")
    elif os.path.isfile(os.path.join(path, "cpu.max")):
        _write(os.path.join(path, "cpu.max"), f"max {PERIOD_US}")


def clear(state_dir: str, node_name: str) -> None:
    """The node as `up` made it: the cluster's link and no CPU limit."""
    _, layout, node = _layout_and_node(state_dir, node_name)
    _clear_link(layout, node)
    try:
        _uncap(node.name)
    except OSError as err:
        raise DegradeError(f"cannot lift {node.name}'s CPU limit: {err.strerror or err}")


def remove_caps(root: Optional[str] = None) -> None:
    """Remove the v1 cap cgroups (called by `down` once the node's processes are gone)."""
    cpusets.remove_tree_of_cgroups(root or os.path.join(V1_CPU_ROOT, CAP_NAME))
