"""IP stack of this node on the interfaces a job would use (paper 003, test 14: dual stack).

Loopback says nothing about the network card, so the probe tests the
interfaces the MPI/Slurm configuration names: Open MPI's btl_tcp_if_include
(environment or mca-params.conf), UCX_NET_DEVICES, else the address Slurm has
for this node (NodeAddr), else what Open MPI uses by default: every
non-loopback interface with an address that is up (all of them when none is up, so that a
card that is down fails rather than vanishes).  For each: is it up, which IPv4/IPv6
addresses does it have, and does a TCP round trip to each address work.
"""
import ipaddress
import json
import os
import shutil
import socket
import subprocess

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
