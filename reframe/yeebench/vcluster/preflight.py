"""Can this machine host a virtual cluster? Each failed check is one sentence the user can act on."""
import os
import shutil
from typing import List, Optional

from .sysrun import SystemError_, run

REQUIRED_COMMANDS = {
    "ip": "iproute2", "tc": "iproute2", "nsenter": "util-linux", "unshare": "util-linux",
    "taskset": "util-linux", "munged": "munge", "slurmctld": "slurmctld (slurm-wlm)",
    "slurmd": "slurmd (slurm-wlm)", "sinfo": "slurm-client (slurm-wlm)", "scontrol": "slurm-client",
    "srun": "slurm-client", "sbatch": "slurm-client", "squeue": "slurm-client",
}
PROBE_NS = "ybvp-probe"   # outside NETNS_PREFIX: a running preflight never looks like a cluster


def missing_commands() -> List[str]:
    return [f"{cmd} (Debian package {pkg})" for cmd, pkg in REQUIRED_COMMANDS.items() if not shutil.which(cmd)]


def check(shaping: bool = True) -> Optional[str]:
    """None when everything needed is there, else the reason it is not."""
    if os.geteuid() != 0:
        return "needs root: it creates network namespaces, mounts and cgroups (run with sudo)"
    missing = missing_commands()
    if missing:
        return "missing commands: " + ", ".join(missing)
    if not os.path.exists("/proc/self/ns/net"):
        return "the kernel has no network namespaces (CONFIG_NET_NS)"
    try:
        run(["unshare", "--mount", "--uts", "--propagation", "private", "true"])
    except SystemError_ as err:
        return f"cannot create mount/UTS namespaces: {err}"
    run(["ip", "netns", "delete", PROBE_NS], check=False)
    try:
        run(["ip", "netns", "add", PROBE_NS])
        ns = ["ip", "-n", PROBE_NS]
        run(ns + ["link", "add", "ybprobe0", "type", "bridge"])
        run(ns + ["link", "add", "ybprobe1", "type", "veth", "peer", "name", "ybprobe2"])
        run(ns + ["link", "set", "ybprobe1", "master", "ybprobe0"])
        if shaping:
            tc = ["tc", "-n", PROBE_NS]
            try:
                run(ns + ["link", "add", "ybprobe3", "type", "ifb"])
                run(tc + ["qdisc", "add", "dev", "ybprobe3", "root", "tbf",
                          "rate", "1gbit", "burst", "64kb", "latency", "100ms"])
                run(tc + ["qdisc", "add", "dev", "ybprobe1", "ingress"])
                run(tc + ["filter", "add", "dev", "ybprobe1", "parent", "ffff:", "protocol", "all", "u32",
                          "match", "u32", "0", "0", "action", "mirred", "egress", "redirect",
                          "dev", "ybprobe3"])
                run(tc + ["qdisc", "add", "dev", "ybprobe1", "root", "handle", "1:", "htb"])
            except SystemError_ as err:
                return ("the kernel cannot rate-shape links (needs ifb, sch_tbf, sch_ingress, sch_htb, "
                        f"cls_u32, act_mirred; or use --link-rate none): {err}")
    except SystemError_ as err:
        return f"the kernel cannot provide network namespaces with veth and bridge links: {err}"
    finally:
        run(["ip", "netns", "delete", PROBE_NS], check=False)
    return None
