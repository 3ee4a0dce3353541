"""The virtual network: a switch namespace holding a bridge, one namespace per node, veth links.

Addresses live only inside namespaces created here; the host's own interfaces are never touched.
"""
import os
from typing import List

from .layout import HEAD_ADDR, NETNS_PREFIX, SWITCH_NETNS, Layout, tbf_burst_bytes
from .sysrun import run

BRIDGE = "br0"
NETNS_DIR = "/run/netns"


def existing_namespaces() -> List[str]:
    """Our namespaces that exist now (also those left by a crashed run)."""
    try:
        return sorted(n for n in os.listdir(NETNS_DIR) if n.startswith(NETNS_PREFIX))
    except FileNotFoundError:
        return []


def netns_path(name: str) -> str:
    return os.path.join(NETNS_DIR, name)


def create(layout: Layout) -> None:
    run(["ip", "netns", "add", SWITCH_NETNS])
    sw = ["ip", "-n", SWITCH_NETNS]
    run(sw + ["link", "set", "lo", "up"])
    run(sw + ["link", "add", BRIDGE, "type", "bridge"])
    run(sw + ["addr", "add", f"{HEAD_ADDR}/24", "dev", BRIDGE])
    run(sw + ["link", "set", BRIDGE, "up"])
    for node in layout.nodes:
        run(["ip", "netns", "add", node.netns])
        nd = ["ip", "-n", node.netns]
        run(nd + ["link", "set", "lo", "up"])
        # Create the pair directly inside the two namespaces: no interface ever appears on the host.
        run(["ip", "-n", SWITCH_NETNS, "link", "add", node.veth_switch, "type", "veth",
             "peer", "name", "eth0", "netns", node.netns])
        run(sw + ["link", "set", node.veth_switch, "master", BRIDGE])
        run(sw + ["link", "set", node.veth_switch, "up"])
        run(nd + ["addr", "add", f"{node.addr}/24", "dev", "eth0"])
        run(nd + ["link", "set", "eth0", "mtu", str(layout.mtu), "up"])
        run(sw + ["link", "set", node.veth_switch, "mtu", str(layout.mtu)])
        if layout.link_rate_bps:
            shape_link(layout, node)
    run(sw + ["link", "set", BRIDGE, "mtu", str(layout.mtu)])   # after the ports: a bridge takes their minimum


def shape_link(layout: Layout, node) -> None:
    """Limit the node's link to the configured rate with one token bucket for both directions.

    Both directions of the link (into the switch and out of it) are redirected through one IFB
    device holding a tbf. One shared bucket matters for ping-pong benchmarks: with one bucket per
    direction, each bucket refills while the other direction sends, and messages up to the bucket
    size then cross at veth speed (NetPIPE would report up to twice the rate).
    """
    rate = f"{int(layout.link_rate_bps)}bit"
    burst = str(tbf_burst_bytes(layout.link_rate_bps))
    ifb = ifb_name(node)
    sw = ["tc", "-n", SWITCH_NETNS]
    redirect = ["protocol", "all", "u32", "match", "u32", "0", "0",
                "action", "mirred", "egress", "redirect", "dev", ifb]
    run(["ip", "-n", SWITCH_NETNS, "link", "add", ifb, "type", "ifb"])
    run(["ip", "-n", SWITCH_NETNS, "link", "set", ifb, "mtu", str(layout.mtu), "up"])
    run(sw + ["qdisc", "add", "dev", ifb, "root", "tbf", "rate", rate, "burst", burst, "latency", "100ms"])
    run(sw + ["qdisc", "add", "dev", node.veth_switch, "ingress"])                 # node -> switch
    run(sw + ["filter", "add", "dev", node.veth_switch, "parent", "ffff:"] + redirect)
    run(sw + ["qdisc", "add", "dev", node.veth_switch, "root", "handle", "1:", "htb"])  # switch -> node
    run(sw + ["filter", "add", "dev", node.veth_switch, "parent", "1:"] + redirect)


def ifb_name(node) -> str:
    return node.veth_switch.replace("ybvs", "ybvi")


def namespace_pids(name: str) -> List[int]:
    proc = run(["ip", "netns", "pids", name], check=False)
    return [int(p) for p in proc.stdout.split() if p.isdigit()]


def delete(name: str) -> None:
    """Deleting a namespace removes its interfaces (veth pairs, the bridge) with it."""
    run(["ip", "netns", "delete", name], check=False)
