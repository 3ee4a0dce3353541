"""Starting and stopping the cluster's daemons: munged (host), slurmctld (switch/head namespace),
one slurmd per node namespace. Every daemon runs in the foreground under a recorded PID."""
import os
import shlex
import signal
import subprocess
import time
from typing import List, Optional

from ..processes import alive
from .layout import HEAD_NAME, SWITCH_NETNS, Layout, Node
from .netns import netns_path
from .sysrun import SystemError_


def client_env(layout: Layout) -> dict:
    env = dict(os.environ)
    env["SLURM_CONF"] = layout.slurm_conf
    return env


def wrap_in_namespaces(layout: Layout, netns: str, hostname: Optional[str], argv: List[str],
                       binds: Optional[List[tuple]] = None, cgroup_procs: Optional[str] = None,
                       cpus: Optional[List[int]] = None) -> List[str]:
    """argv run inside network namespace `netns`, in a private mount (and UTS) namespace where the
    cluster's hosts file is /etc/hosts and `binds` (src, dst) are mounted; optionally joined to a
    cgroup and pinned to `cpus`. Ends in exec, so the PID of the returned command is argv's PID."""
    script = []
    if cgroup_procs:
        script.append(f"echo $$ > {shlex.quote(cgroup_procs)}")
    if hostname:
        script.append(f"hostname {shlex.quote(hostname)}")
    for src, dst in [(layout.hosts_file, "/etc/hosts")] + list(binds or []):
        script.append(f"mount --bind {shlex.quote(src)} {shlex.quote(dst)}")
    prefix = ["taskset", "-c", ",".join(map(str, cpus))] if cpus else []
    script.append("exec " + " ".join(shlex.quote(a) for a in prefix + argv))
    unshare = ["unshare", "--mount", "--propagation", "private"] + (["--uts"] if hostname else [])
    return ["nsenter", f"--net={netns_path(netns)}", "--"] + unshare + ["--", "sh", "-ec", "; ".join(script)]


def _spawn(cmd: List[str], log_path: str, env: Optional[dict] = None) -> int:
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True, close_fds=True)
    return proc.pid


def start_munge(layout: Layout) -> int:
    d = layout.path("munge")
    key = os.path.join(d, "munge.key")
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
    with os.fdopen(fd, "wb") as f:
        f.write(os.urandom(1024))
    cmd = ["munged", "--foreground", "--force", f"--socket={layout.munge_socket}", f"--key-file={key}",
           f"--pid-file={os.path.join(d, 'munged.pid')}", f"--log-file={os.path.join(d, 'munged.log')}",
           f"--seed-file={os.path.join(d, 'munged.seed')}"]
    pid = _spawn(cmd, os.path.join(d, "munged.out"))
    _wait_for(lambda: os.path.exists(layout.munge_socket), 10, "munged did not create its socket",
              pid, os.path.join(d, "munged.log"))
    return pid


def start_slurmctld(layout: Layout) -> int:
    argv = ["slurmctld", "-D", "-i", "-f", layout.slurm_conf]
    cmd = wrap_in_namespaces(layout, SWITCH_NETNS, HEAD_NAME, argv)
    return _spawn(cmd, layout.path("ctld", "slurmctld.out"), env=client_env(layout))


def start_slurmd(layout: Layout, node: Node, cgroup_path: Optional[str]) -> int:
    node_dir = layout.node_dir(node)
    argv = ["slurmd", "-D", "-N", node.name, "-f", layout.slurm_conf]
    cmd = wrap_in_namespaces(layout, node.netns, node.name, argv,
                             binds=[(os.path.join(node_dir, "tmp"), layout.tmpfs_path)],
                             cgroup_procs=os.path.join(cgroup_path, "cgroup.procs") if cgroup_path else None,
                             cpus=node.cpus)
    return _spawn(cmd, os.path.join(node_dir, "slurmd.out"), env=client_env(layout))


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def stop_pids(pids: List[int], expect_in_cmdline: Optional[List[str]] = None, grace: float = 5.0) -> List[int]:
    """SIGTERM, wait up to `grace` s, then SIGKILL. With `expect_in_cmdline`, a PID whose command line
    lacks any of those strings is left alone (the PID was reused by something else, or belongs to
    another run's daemon). Returns PIDs signalled."""
    targets = [p for p in pids if p > 1 and p != os.getpid() and alive(p)
               and all(word in cmdline(p) for word in expect_in_cmdline or [])]
    for pid in targets:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(alive(p) for p in targets):
        _reap()
        time.sleep(0.1)
    for pid in targets:
        if alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 2.0      # SIGKILL is not instant: wait until they are gone
    while time.monotonic() < deadline and any(alive(p) for p in targets):
        _reap()
        time.sleep(0.02)
    _reap()
    return targets


def _reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def _wait_for(predicate, timeout: float, what: str, pid: int, log: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if not alive(pid):
            break
        time.sleep(0.1)
    raise SystemError_(f"{what} (see {log})")
