"""Bring a virtual cluster up, tear it down, describe it."""
import os
import shutil
import subprocess
import time
from typing import List

from . import cpusets, daemons, degrade, netns, owner, state
from .layout import HEAD_NAME, SWITCH_NETNS, Layout, hosts_text, slurm_conf_text
from .sysrun import SystemError_, run

READY_TIMEOUT_S = 90


class ClusterError(RuntimeError):
    """Bringing the cluster up failed; everything already started has been removed again."""


class AlreadyUp(ClusterError):
    """A cluster (or the remains of one) exists; `up` left it alone."""


class NotOwner(ClusterError):
    """The running cluster was started from another state directory; `down` left it alone."""


def _claim_is_stale(held: dict) -> bool:
    """A claim whose cluster is gone: no state file in its directory and its `up` no longer runs."""
    return (not os.path.exists(os.path.join(held["state_dir"], state.STATE_FILE))
            and not daemons.alive(int(held.get("pid", 0) or 0)))


def _cluster_is_dead(held: dict) -> bool:
    """The claimed cluster's `up` no longer runs and nothing of it does either (no recorded daemon, by PID
    and command line, and no process in the namespaces): a session killed as a whole leaves this."""
    if daemons.alive(int(held.get("pid", 0) or 0)):
        return False
    record = state.load(held["state_dir"])
    if record is None and os.path.exists(os.path.join(held["state_dir"], state.STATE_FILE)):
        return False                    # a record it cannot read: which daemons it had is unknown
    for name, pid in (record or {}).get("daemons", {}).items():
        if daemons.alive(pid) and name.split("@")[0] in daemons.cmdline(pid):
            return False
    return not any(netns.namespace_pids(ns) for ns in netns.existing_namespaces())


def host_cpus() -> List[int]:
    return sorted(os.sched_getaffinity(0))


def head_command(layout: Layout, argv: List[str]) -> List[str]:
    """argv as run on the head ("login") node: inside the switch namespace, host name vc-head,
    with the cluster's hosts file."""
    return daemons.wrap_in_namespaces(layout, SWITCH_NETNS, HEAD_NAME, argv)


def _prepare_dirs(layout: Layout) -> None:
    os.makedirs(layout.state_dir, mode=0o755, exist_ok=True)
    os.chmod(layout.state_dir, 0o755)   # munged refuses group/world-writable parents
    for sub in ("etc", "munge", "ctld/state", "tmp"):
        os.makedirs(layout.path(sub), mode=0o755, exist_ok=True)
    os.chmod(layout.path("munge"), 0o700)
    for node in layout.nodes:
        for sub in ("spool", "tmp"):
            os.makedirs(os.path.join(layout.node_dir(node), sub), exist_ok=True)
        os.chmod(os.path.join(layout.node_dir(node), "tmp"), 0o1777)
    with open("/etc/hosts") as f:
        base_hosts = f.read()
    state.write_atomic(layout.slurm_conf, slurm_conf_text(layout))
    state.write_atomic(layout.hosts_file, hosts_text(layout, base_hosts))


def node_states(layout: Layout) -> dict:
    """{node: state} from sinfo (e.g. idle, alloc, down*, unk*); {} when the controller does not answer."""
    proc = run(head_command(layout, ["sinfo", "-h", "-N", "-o", "%N %t"]), check=False, timeout=30,
               env=daemons.client_env(layout))
    if proc.returncode != 0:
        return {}
    return dict(line.split(None, 1) for line in proc.stdout.splitlines() if len(line.split()) == 2)


def _wait_ready(layout: Layout, pids: dict, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last = {}
    while time.monotonic() < deadline:
        for name, pid in pids.items():
            if not daemons.alive(pid):
                raise ClusterError(f"{name} exited during start-up (logs in {layout.state_dir})")
        last = node_states(layout)
        if last and all(last.get(n) == "idle" for n in layout.node_names):
            return
        time.sleep(0.5)
    raise ClusterError(f"nodes not idle after {timeout:.0f} s (sinfo: {last or 'no answer'}; "
                       f"logs in {layout.state_dir})")


def up(layout: Layout, log=print) -> float:
    """Start everything; returns seconds taken. On failure, tears down what it started and raises."""
    t0 = time.monotonic()
    if os.path.exists(os.path.join(layout.state_dir, state.STATE_FILE)):
        raise AlreadyUp("a virtual cluster is already up (or left over): run `yeebench vcluster down` first")
    held = owner.read()
    if held is not None and held["state_dir"] != layout.state_dir and _cluster_is_dead(held):
        log(f"vcluster: nothing of {owner.describe(held)} runs any more; clearing what it left")
        down(held["state_dir"], log=log)
    try:
        owner.claim(layout.state_dir, stale=_claim_is_stale)
    except owner.Claimed as err:
        raise AlreadyUp(str(err))
    leftovers = netns.existing_namespaces()
    if leftovers:
        owner.release(layout.state_dir)
        raise AlreadyUp(f"namespaces {', '.join(leftovers)} exist with no owner record (left by a crash, or "
                        f"a cluster started by an older yeebench): once nothing runs there, remove them "
                        f"with `yeebench vcluster down`")
    pids = {}
    cgroup_parent = cpusets.detect_root()
    remove_state_tree(layout.state_dir)      # logs a failed earlier `up` left for reading
    try:
        _prepare_dirs(layout)
        state.save(layout, pids, cgroup_parent, "starting")
        netns.create(layout)
        cgroup_paths = {}
        if cgroup_parent:
            try:
                for node in layout.nodes:
                    cgroup_paths[node.name] = cpusets.create(cgroup_parent, node.name, node.cpus)
            except OSError as err:
                log(f"vcluster: cpuset cgroups unavailable ({err}); pinning slurmd with taskset only")
                cpusets.remove_all(cgroup_parent)
                cgroup_parent, cgroup_paths = None, {}
        pids["munged"] = daemons.start_munge(layout)
        state.save(layout, pids, cgroup_parent, "starting")
        pids["slurmctld"] = daemons.start_slurmctld(layout)
        state.save(layout, pids, cgroup_parent, "starting")
        for node in layout.nodes:
            pids[f"slurmd@{node.name}"] = daemons.start_slurmd(layout, node, cgroup_paths.get(node.name))
            state.save(layout, pids, cgroup_parent, "starting")
        _wait_ready(layout, pids, READY_TIMEOUT_S)
        state.save(layout, pids, cgroup_parent, "up")
    except (ClusterError, SystemError_, OSError) as err:
        reason = str(err)
        down(layout.state_dir, log=lambda *_: None, keep_logs=True)
        raise ClusterError(reason)
    except KeyboardInterrupt:          # Ctrl-C half-way: leave nothing behind
        down(layout.state_dir, log=lambda *_: None)
        raise
    return time.monotonic() - t0


STATE_ENTRIES = ("etc", "munge", "ctld", "nodes", "tmp", state.STATE_FILE)


def remove_state_tree(state_dir: str, keep_logs: bool = False) -> None:
    """Remove only the entries `up` creates, then the directory if that leaves it empty, so a
    --state-dir pointing at a shared directory never loses anything else."""
    entries = (state.STATE_FILE,) if keep_logs else STATE_ENTRIES
    for name in entries:
        path = os.path.join(state_dir, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.remove(path)
    if not keep_logs:
        try:
            os.rmdir(state_dir)
        except OSError:
            pass


def down(state_dir: str, log=print, keep_logs: bool = False) -> float:
    """Stop and remove everything a previous `up` may have left, whether it finished or crashed.
    Safe to run any number of times. Returns seconds taken."""
    t0 = time.monotonic()
    if not owner.owns(state_dir):
        raise NotOwner(f"{owner.describe(owner.read())} is not the one of {state_dir}: left it alone")
    record = state.load(state_dir)
    daemon_pids = record["daemons"] if record else {}
    cgroup_parent = record["cgroup_parent"] if record else None
    # 1. Everything living in our namespaces: slurmd, slurmctld, job steps and the ranks they started.
    ours = netns.existing_namespaces()
    in_namespaces = sorted({pid for ns in ours for pid in netns.namespace_pids(ns)})
    stopped = daemons.stop_pids(in_namespaces)
    # 2. Recorded daemons outside the namespaces (munged), only if the PID still runs that program
    #    with this cluster's files (its command line names the state directory).
    for name, pid in daemon_pids.items():
        stopped += daemons.stop_pids([pid], expect_in_cmdline=[name.split("@")[0], state_dir])
    # 3. Leftovers still in our cgroups, then the cgroups themselves.
    stopped += daemons.stop_pids(cpusets.cgroup_pids(cgroup_parent), grace=2)
    cpusets.remove_all(cgroup_parent)
    degrade.remove_caps()           # a node made slow on purpose (its CPU limit's cgroup, v1)
    # 4. Namespaces (their veths and the bridge go with them).
    for ns in ours:
        netns.delete(ns)
    # 5. What we wrote in the state directory (logs are kept when a failed `up` wants them read).
    remove_state_tree(state_dir, keep_logs)
    owner.release(state_dir)
    log(f"vcluster down: stopped {len(set(stopped))} processes, removed {len(ours)} namespaces"
        f"{', cgroups' if cgroup_parent else ''} and {state_dir} in {time.monotonic() - t0:.1f} s")
    return time.monotonic() - t0


def status(state_dir: str) -> dict:
    record = state.load(state_dir)
    result = {"up": False, "state_dir": state_dir, "namespaces": netns.existing_namespaces(),
              "owner": owner.read()}
    if not record:
        return result
    layout = record["layout"]
    result.update({
        "up": True, "phase": record["phase"],
        "daemons": {name: {"pid": pid, "alive": daemons.alive(pid)} for name, pid in record["daemons"].items()},
        "nodes": {n.name: {"addr": n.addr, "cpus": n.cpus, "state": None} for n in layout.nodes},
        "link_rate_bps": layout.link_rate_bps, "cpus_shared": layout.cpus_shared,
        "slurm_conf": layout.slurm_conf, "cgroup_parent": record["cgroup_parent"],
    })
    for name, st in node_states(layout).items():
        if name in result["nodes"]:
            result["nodes"][name]["state"] = st
    return result


def exec_on_head(state_dir: str, argv: List[str]) -> int:
    record = state.load(state_dir)
    if not record:
        raise ClusterError(f"no virtual cluster is up (no state in {state_dir}); run `yeebench vcluster up`")
    layout = record["layout"]
    env = daemons.client_env(layout)
    env["YEEBENCH_VCLUSTER_DIR"] = layout.state_dir
    return subprocess.call(head_command(layout, argv), env=env)
