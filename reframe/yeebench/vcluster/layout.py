"""The shape of a virtual cluster, computed without touching the machine (so it is unit-testable).

Everything here is a pure function of the request (nodes, CPUs, link rate) and the state directory.
"""
import os
import re
from dataclasses import dataclass, field, asdict
from typing import List, Optional

SUBNET = "10.77.0.0/24"
HEAD_ADDR = "10.77.0.1"          # bridge address in the switch namespace; slurmctld listens here
NODE_ADDR_BASE = 11              # node i gets 10.77.0.(11 + i)
MAX_NODES = 64
HEAD_NAME = "vc-head"
NODE_PREFIX = "vc"               # node names vc0, vc1, ...
NETNS_PREFIX = "ybvc-"           # namespaces ybvc-switch, ybvc-vc0, ...
SWITCH_NETNS = NETNS_PREFIX + "switch"
PARTITION = "vc"
CLUSTER_NAME = "yeebench-vc"
SLURMCTLD_PORT = 6817
SLURMD_PORT = 6818
DEFAULT_STATE_DIR = "/run/yeebench-vcluster"
# Jumbo frames, as cluster Ethernet fabrics are usually configured: fewer packets per byte leaves the
# CPUs of a small CI machine to the benchmark. --mtu 1500 gives standard Ethernet framing.
DEFAULT_MTU = 9000
MTU_RANGE = (1280, 65535)

_RATE_RE = re.compile(r"^(\d+(?:\.\d+)?)(k|m|g)bit$")
_RATE_SCALE = {"k": 1e3, "m": 1e6, "g": 1e9}


class LayoutError(ValueError):
    """A request that cannot describe a cluster (bad node count, bad rate, ...)."""


def parse_link_rate(text: Optional[str]) -> Optional[float]:
    """'1gbit' -> 1e9 bit/s; 'none' or None -> None (no shaping). tc's units: k/m/g are powers of 10."""
    if text is None or text.strip().lower() == "none":
        return None
    match = _RATE_RE.match(text.strip().lower())
    if not match:
        raise LayoutError(f"bad --link-rate {text!r}: use e.g. 1gbit, 10gbit, 500mbit or none")
    value = float(match.group(1)) * _RATE_SCALE[match.group(2)]
    if value < 1e6:
        raise LayoutError(f"bad --link-rate {text!r}: below 1mbit the cluster daemons time out")
    return value


def tbf_burst_bytes(rate_bps: float) -> int:
    """Token bucket size for tc tbf: 0.5 ms worth of tokens, at least 64 KiB.

    Much smaller buckets lose tokens whenever the qdisc timer fires late (a busy 2-core machine) and
    the link delivers under its rate. Larger ones let a message that follows an idle gap cross partly
    at veth speed: a message of M bytes comes out at most M / (M - burst) faster than the rate, so
    the bucket stays far below the 2 MiB messages that measure the rate (see reframe/yeebench/checks/pt2pt/vcluster_pt2pt.py).
    """
    return max(64 * 1024, int(rate_bps * 0.5e-3 / 8))


def split_cpus(host_cpus: List[int], nodes: int, cpus_per_node: int) -> List[List[int]]:
    """CPU set of each node: disjoint consecutive blocks when the host has enough CPUs,
    otherwise blocks that wrap around (nodes share CPUs; the caller says so)."""
    if nodes < 1:
        raise LayoutError("need at least one node")
    if cpus_per_node < 1:
        raise LayoutError("--cpus-per-node must be at least 1")
    if not host_cpus:
        raise LayoutError("no usable host CPUs")
    if cpus_per_node > len(host_cpus):
        raise LayoutError(
            f"--cpus-per-node {cpus_per_node} exceeds the {len(host_cpus)} CPUs this process may use")
    total = len(host_cpus)
    return [sorted({host_cpus[(i * cpus_per_node + k) % total] for k in range(cpus_per_node)})
            for i in range(nodes)]


def default_cpus_per_node(host_cpu_count: int, nodes: int) -> int:
    """Two per node at least (intra-node pairs need two CPUs), else an even share of the host."""
    return max(2, host_cpu_count // max(nodes, 1)) if host_cpu_count >= 2 else 1


@dataclass
class Node:
    name: str
    addr: str
    netns: str
    veth_switch: str        # veth end inside the switch namespace (attached to the bridge)
    cpus: List[int]


@dataclass
class Layout:
    state_dir: str
    nodes: List[Node]
    cpus_per_node: int
    link_rate_bps: Optional[float]
    cpus_shared: bool = False
    memory_mb: int = 1024
    mtu: int = DEFAULT_MTU
    extra: dict = field(default_factory=dict)

    # Paths below the state directory; one place so up, down and tests agree.
    def path(self, *parts: str) -> str:
        return os.path.join(self.state_dir, *parts)

    @property
    def slurm_conf(self) -> str:
        return self.path("etc", "slurm.conf")

    @property
    def hosts_file(self) -> str:
        return self.path("etc", "hosts")

    @property
    def munge_socket(self) -> str:
        return self.path("munge", "munge.socket")

    @property
    def tmpfs_path(self) -> str:
        """The TmpFS path every node sees; inside a node's mount namespace it is that node's own dir."""
        return self.path("tmp")

    def node_dir(self, node: Node) -> str:
        return self.path("nodes", node.name)

    @property
    def node_names(self) -> List[str]:
        return [n.name for n in self.nodes]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Layout":
        nodes = [Node(**n) for n in data["nodes"]]
        rest = {k: v for k, v in data.items() if k != "nodes"}
        return cls(nodes=nodes, **rest)


def make_layout(nodes: int, cpus_per_node: Optional[int], link_rate: Optional[str],
                host_cpus: List[int], state_dir: str = DEFAULT_STATE_DIR,
                memory_mb: int = 1024, mtu: int = DEFAULT_MTU) -> Layout:
    if not isinstance(nodes, int) or nodes < 1 or nodes > MAX_NODES:
        raise LayoutError(f"--nodes must be between 1 and {MAX_NODES}, got {nodes}")
    if not MTU_RANGE[0] <= mtu <= MTU_RANGE[1]:
        raise LayoutError(f"--mtu must be between {MTU_RANGE[0]} and {MTU_RANGE[1]}, got {mtu}")
    rate = parse_link_rate(link_rate)
    cpn = cpus_per_node if cpus_per_node is not None else default_cpus_per_node(len(host_cpus), nodes)
    cpu_sets = split_cpus(host_cpus, nodes, cpn)
    node_list = [Node(name=f"{NODE_PREFIX}{i}", addr=f"10.77.0.{NODE_ADDR_BASE + i}",
                      netns=f"{NETNS_PREFIX}{NODE_PREFIX}{i}", veth_switch=f"ybvs{i}",
                      cpus=cpu_sets[i]) for i in range(nodes)]
    return Layout(state_dir=os.path.abspath(state_dir), nodes=node_list, cpus_per_node=cpn,
                  link_rate_bps=rate, cpus_shared=nodes * cpn > len(host_cpus), memory_mb=memory_mb,
                  mtu=mtu)


def node_range(names: List[str]) -> str:
    """vc0,vc1,vc2 -> vc[0-2] (Slurm hostlist syntax; names are always NODE_PREFIX + consecutive ints)."""
    if len(names) == 1:
        return names[0]
    return f"{NODE_PREFIX}[0-{len(names) - 1}]"


def slurm_conf_text(layout: Layout) -> str:
    """A private slurm.conf: root-run daemons, munge on our own socket, no accounting, no cgroup plugins
    (CPU sets come from the cgroup/affinity each slurmd is started in)."""
    p = layout.path
    cpn = layout.cpus_per_node
    lines = [
        "# Generated by `yeebench vcluster up`; removed by `yeebench vcluster down`.",
        f"ClusterName={CLUSTER_NAME}",
        f"SlurmctldHost={HEAD_NAME}({HEAD_ADDR})",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"SlurmctldPort={SLURMCTLD_PORT}",
        f"SlurmdPort={SLURMD_PORT}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={layout.munge_socket}",
        f"StateSaveLocation={p('ctld', 'state')}",
        f"SlurmctldPidFile={p('ctld', 'slurmctld.pid')}",
        f"SlurmctldLogFile={p('ctld', 'slurmctld.log')}",
        f"SlurmdSpoolDir={p('nodes', '%n', 'spool')}",
        f"SlurmdPidFile={p('nodes', '%n', 'slurmd.pid')}",
        f"SlurmdLogFile={p('nodes', '%n', 'slurmd.log')}",
        f"TmpFS={layout.tmpfs_path}",
        "ProctrackType=proctrack/linuxproc",
        # No Slurm binding: task/affinity maps a node's CPU 0 to host CPU 0 whatever CPU set the node's
        # slurmd runs in (vc1 on CPUs 2-3 fails to launch). Tasks inherit the node's CPU set, and
        # mpirun binds inside it; `srun --cpu-bind` is accepted and ignored.
        "TaskPlugin=task/none",
        "MpiDefault=none",
        "SwitchType=switch/none",
        "SchedulerType=sched/backfill",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        # The virtual nodes declare what we gave them, not what the hardware has.
        "SlurmdParameters=config_overrides",
        "ReturnToService=2",
        "AccountingStorageType=accounting_storage/none",
        "JobAcctGatherType=jobacct_gather/none",
        "JobCompType=jobcomp/none",
        "MailProg=/bin/true",
        "SlurmctldTimeout=30",
        "SlurmdTimeout=60",
        "MessageTimeout=20",
        "InactiveLimit=0",
        "KillWait=5",
        "MinJobAge=30",
        "Waittime=0",
        "SlurmctldDebug=info",
        "SlurmdDebug=info",
        f"NodeName={node_range(layout.node_names)} "
        f"NodeAddr={','.join(n.addr for n in layout.nodes)} "
        f"CPUs={cpn} Boards=1 SocketsPerBoard=1 CoresPerSocket={cpn} ThreadsPerCore=1 "
        f"RealMemory={layout.memory_mb} State=UNKNOWN",
        f"PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO",
    ]
    return "\n".join(lines) + "\n"


def hosts_text(layout: Layout, base_hosts: str) -> str:
    """/etc/hosts seen inside the cluster: the machine's own entries plus the virtual hosts."""
    extra = [f"{HEAD_ADDR}\t{HEAD_NAME}"] + [f"{n.addr}\t{n.name}" for n in layout.nodes]
    return base_hosts.rstrip("\n") + "\n# yeebench vcluster\n" + "\n".join(extra) + "\n"
