"""IP stack of this node on the interfaces a job would use (paper 003, test 14: dual stack).

Loopback says nothing about the network card, so the probe tests the
interfaces the MPI/Slurm configuration names: Open MPI's btl_tcp_if_include
(environment or mca-params.conf), UCX_NET_DEVICES, else the address Slurm has
for this node (NodeAddr), else what Open MPI uses by default: every
non-loopback interface with an address that is up (all of them when none is up, so that a
card that is down fails rather than vanishes).  For each: is it up, which IPv4/IPv6
addresses does it have, and does a TCP round trip to each address work.

Those round trips start and end on the node itself: the kernel never sends them through the card.
With `fabric` the probes of a job's nodes also meet through a folder of the stage directory (shared
by the nodes): each publishes the addresses it listens on, then connects to the next node's (sorted
by host, the last to the first), so every node sends and answers once across the network.  A job of
one node says so ('nodes': 1): the fabric was not measured.
"""
import ipaddress
import json
import os
import select
import shutil
import socket
import subprocess
import threading
import time

MCA_FILES = ("~/.openmpi/mca-params.conf", "/etc/openmpi/openmpi-mca-params.conf",
             "/etc/openmpi-mca-params.conf")


def _roundtrip(family, address):
    """'' when a TCP connection to `address` (bound to it, so over its interface) works, else the error."""
    try:
        with socket.socket(family, socket.SOCK_STREAM) as server:
            server.bind((address, 0))
            server.listen(1)
            port = server.getsockname()[1]
            with socket.create_connection((address, port), timeout=5) as client:
                conn, _ = server.accept()
                with conn:
                    client.sendall(b"yee")
                    return "" if conn.recv(3) == b"yee" else "wrong bytes back"
    except OSError as err:
        return err.strerror or str(err)


def interfaces(ip_json=None):
    """{name: {'up': bool, 'loopback': bool, 'ipv4': [...], 'ipv6': [...] (global scope)}}."""
    if ip_json is None:
        ip = shutil.which("ip") or ("/usr/sbin/ip" if os.path.exists("/usr/sbin/ip") else None)
        if not ip:
            raise OSError("ip (iproute2) not found")
        ip_json = subprocess.run([ip, "-j", "addr", "show"], capture_output=True, text=True,
                                 timeout=30, check=True).stdout
    out = {}
    for link in json.loads(ip_json or "[]"):
        flags = link.get("flags") or []
        addrs = link.get("addr_info") or []
        out[link["ifname"]] = {
            "up": "UP" in flags and link.get("operstate") in ("UP", "UNKNOWN"),
            "loopback": "LOOPBACK" in flags,
            "ipv4": [a["local"] for a in addrs if a.get("family") == "inet"],
            "ipv6": [a["local"] for a in addrs if a.get("family") == "inet6" and a.get("scope") == "global"]}
    return out


def _mca_param(name, env=os.environ, files=MCA_FILES):
    value = env.get(f"OMPI_MCA_{name}")
    if value:
        return value, f"OMPI_MCA_{name}"
    for path in files:
        path = os.path.expanduser(path)
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                for line in f:
                    key, _, val = line.partition("=")
                    if key.strip() == name and val.strip():
                        return val.strip(), f"{name} in {path}"
        except OSError:
            continue
    return None, None


def _slurm_node_addr(env=os.environ):
    node = env.get("SLURMD_NODENAME")
    scontrol = shutil.which("scontrol")
    if not node or not env.get("SLURM_JOB_ID") or not scontrol:
        return None
    try:
        text = subprocess.run([scontrol, "show", "node", node], capture_output=True, text=True,
                              timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for word in text.split():
        if word.startswith("NodeAddr="):
            return word.split("=", 1)[1]
    return None


def _select(spec, links):
    """Interfaces named by an if_include list: names or CIDR subnets."""
    chosen = []
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        try:
            net = ipaddress.ip_network(item, strict=False)
        except ValueError:
            chosen.append(item)  # an interface name (may not exist: reported as missing)
            continue
        chosen += [name for name, link in links.items()
                   if any(ipaddress.ip_address(a) in net for a in link["ipv4"] + link["ipv6"])]
    return list(dict.fromkeys(chosen))


def job_interfaces(links, env=os.environ, mca_files=MCA_FILES, node_addr=None):
    """(interface names, where the choice comes from) for the interfaces a job would use."""
    for param in ("btl_tcp_if_include", "oob_tcp_if_include"):
        spec, origin = _mca_param(param, env, mca_files)
        if spec:
            return _select(spec, links), origin
    ucx = env.get("UCX_NET_DEVICES", "")
    if ucx and ucx != "all":
        names = [d for d in ucx.split(",") if d and ":" not in d]  # 'mlx5_0:1' are RDMA ports
        if names:
            return names, "UCX_NET_DEVICES"
    addr = node_addr if node_addr is not None else _slurm_node_addr(env)
    if addr:
        try:
            address = socket.gethostbyname(addr)
        except OSError:
            address = addr
        names = [n for n, link in links.items() if address in link["ipv4"]]
        if names:
            return names, f"Slurm NodeAddr {addr}"
    configured = [n for n, link in links.items() if not link["loopback"] and (link["ipv4"] or link["ipv6"])]
    running = [n for n in configured if links[n]["up"]]
    # a bridge without carrier (docker0 with no containers) is no job's network; a node whose
    # only configured interfaces are all down is a failure to report, so they are kept then
    return running or configured, "Open MPI's default (every non-loopback interface with an address)"


def probe(links=None, env=os.environ):
    """IP stack of the job interfaces of this node as a dict (JSON-ready)."""
    try:
        links = interfaces() if links is None else links
    except (OSError, ValueError, subprocess.SubprocessError) as err:
        return {"error": f"cannot list interfaces: {err}", "interfaces": {}, "source": "",
                "ipv6_kernel": socket.has_ipv6}
    names, source = job_interfaces(links, env)
    result = {}
    for name in names:
        link = links.get(name)
        if link is None:
            result[name] = {"present": False}
            continue
        entry = {"present": True, "up": link["up"], "loopback": link["loopback"],
                 "ipv4": {a: _roundtrip(socket.AF_INET, a) for a in link["ipv4"]},
                 "ipv6": {a: _roundtrip(socket.AF_INET6, a) for a in link["ipv6"]} if socket.has_ipv6 else {}}
        result[name] = entry
    return {"interfaces": result, "source": source, "ipv6_kernel": socket.has_ipv6}


#: How long a node waits for the others to publish their addresses, and to finish (a shared file
#: system may show another node's file late).
PEERS_TIMEOUT = 90.0
#: The launcher's task count: one task per node, so the number of nodes the probes must meet.  The
#: step's own counts come before SLURM_NTASKS, which mpirun inside an salloc inherits from the allocation.
TASK_COUNT_VARS = ("SLURM_STEP_NUM_TASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS")
_FAMILIES = {"ipv4": socket.AF_INET, "ipv6": socket.AF_INET6}


def expected_nodes(env=os.environ):
    """Nodes of the job (one probe per node): the launcher's task count, 1 without one."""
    for var in TASK_COUNT_VARS:
        if env.get(var, "").isdigit() and int(env[var]) > 0:
            return int(env[var])
    return 1


def ring_peers(hosts):
    """{host: the host it connects to}: each to the next in sorted order, the last to the first;
    {} for one host (nothing crosses the network)."""
    hosts = sorted(set(hosts))
    if len(hosts) < 2:
        return {}
    return {h: hosts[(i + 1) % len(hosts)] for i, h in enumerate(hosts)}


def listen_addresses(state):
    """[(family name, address)] of the job interfaces whose own round trip worked (probe() output)."""
    return [(family, addr) for iface in state.get("interfaces", {}).values() if iface.get("present")
            for family in ("ipv4", "ipv6") for addr, why in sorted((iface.get(family) or {}).items()) if not why]


def _echo(servers, stop):
    while not stop.is_set():
        ready, _, _ = select.select(servers, [], [], 0.2)
        for server in ready:
            try:
                conn, _ = server.accept()
                with conn:
                    conn.settimeout(5)
                    conn.sendall(conn.recv(3))
            except OSError:
                continue


def _connect(family, address, port):
    try:
        with socket.socket(_FAMILIES[family], socket.SOCK_STREAM) as client:
            client.settimeout(5)
            client.connect((address, port))
            client.sendall(b"yee")
            return "" if client.recv(3) == b"yee" else "wrong bytes back"
    except OSError as err:
        return err.strerror or str(err)


def _publish(folder, name, data):
    tmp = os.path.join(folder, f".{name}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f)
    os.replace(tmp, os.path.join(folder, name))   # the others never read a half-written file


def _wait_for(folder, suffix, count, deadline):
    """{host: path} of the files ending in `suffix`, once `count` are there or at the deadline."""
    while True:
        found = {n[:-len(suffix)]: os.path.join(folder, n) for n in os.listdir(folder)
                 if n.endswith(suffix) and not n.startswith(".")}
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def fabric(folder, host, addresses, expected, timeout=PEERS_TIMEOUT):
    """Round trips from this node to the next node's addresses: {'nodes': n, 'peer': host,
    'ipv4': {address: '' or why}, 'ipv6': {...}}; {'nodes': 1} alone; with 'error' when the nodes
    did not meet.  `addresses`: [(family name, address)] this node listens on while it waits."""
    if expected <= 1:
        return {"nodes": 1}
    os.makedirs(folder, exist_ok=True)
    servers, listen, failed = [], [], {}
    for family, address in addresses:
        try:
            server = socket.socket(_FAMILIES[family], socket.SOCK_STREAM)
            server.bind((address, 0))
            server.listen(8)
        except OSError as err:
            failed[address] = err.strerror or str(err)
            continue
        servers.append(server)
        listen.append([family, address, server.getsockname()[1]])
    stop = threading.Event()
    answering = threading.Thread(target=_echo, args=(servers, stop), daemon=True)
    answering.start()
    try:
        _publish(folder, f"{host}.addr.json", {"host": host, "listen": listen})
        published = _wait_for(folder, ".addr.json", expected, time.monotonic() + timeout)
        if len(published) < expected:
            return {"nodes": expected, "error": f"{len(published)} of {expected} node(s) published their "
                                                f"addresses within {timeout:g} s ({', '.join(sorted(published))})"}
        peer = ring_peers(published)[host]
        with open(published[peer], encoding="utf-8") as f:
            theirs = json.load(f)["listen"]
        result = {"nodes": expected, "peer": peer, "ipv4": {}, "ipv6": {}}
        for family, address, port in theirs:
            result[family][address] = _connect(family, address, port)
        if failed:
            result["listen_failed"] = failed
        _publish(folder, f"{host}.done", {})
        # its own limit: a slow publish phase must not leave the finishing wait no time
        _wait_for(folder, ".done", expected, time.monotonic() + timeout)   # answer the node before us until it is done
        return result
    finally:
        stop.set()
        answering.join()
        for server in servers:
            server.close()
