"""Per-node probe records: parsing the job output, IP stack verdicts, a live probe of this node."""
import json
import subprocess
import sys

import pytest

from yeebench.checks.acceptance import ipstack
from yeebench.checks.acceptance import nodecheck
from yeebench.checks.acceptance import nodeprobe


def iface(ipv4=("10.0.0.1",), ipv6=("fd00::1",), up=True, present=True, loopback=False, fail="", fail6=""):
    if not present:
        return {"present": False}
    return {"present": True, "up": up, "loopback": loopback, "ipv4": {a: fail for a in ipv4},
            "ipv6": {a: fail6 for a in ipv6}}


def line(host, interfaces=None, source="OMPI_MCA_btl_tcp_if_include"):
    stack = {"interfaces": {"eth0": iface()} if interfaces is None else interfaces, "source": source,
             "ipv6_kernel": True}
    return f"{nodeprobe.MARKER} " + json.dumps({"topology": {"host": host}, "settings": {}, "ipstack": stack})


def test_parse_ignores_launcher_noise_and_keys_by_host():
    text = "\n".join(["mpirun: warning", line("n1"), "", line("n2")])
    assert sorted(nodeprobe.parse(text)) == ["n1", "n2"]


def test_two_ranks_on_one_node_are_rejected():
    with pytest.raises(ValueError, match="host n1 reported twice"):
        nodeprobe.parse(line("n1") + "\n" + line("n1"))


def records(*lines, crossed=True):
    """The parsed records; `crossed`: as probes run with --peers that reached the next node's addresses."""
    recs = nodeprobe.parse("\n".join(lines))
    ring = ipstack.ring_peers(recs)
    for host, rec in recs.items() if crossed else ():
        rec["ipstack"]["fabric"] = ({"nodes": 1} if not ring else
                                    {"nodes": len(recs), "peer": ring[host], "ipv4": {"10.0.9.9": ""}, "ipv6": {}})
    return recs


def test_ipv4_and_ipv6_over_the_job_interface():
    verdict, reason, v6, details = nodecheck.ipstack_verdict(records(line("n1"), line("n2")))
    assert verdict == "PASS" and v6 and "over the job interface(s) on all 2 node(s)" in reason
    assert "OMPI_MCA_btl_tcp_if_include" in reason and "n1: eth0 10.0.0.1 (OMPI_MCA_btl_tcp_if_include)" in details


def test_ipv6_missing_is_not_measured_not_a_pass():
    verdict, reason, v6, _ = nodecheck.ipstack_verdict(records(line("n1"), line("n2", {"eth0": iface(ipv6=())})))
    assert verdict == "NOT MEASURED" and not v6
    assert "no global IPv6 address on the job interface(s) of n2" in reason and "waive" in reason


def test_ipv6_that_fails_tcp_fails():
    broken = {"eth0": iface(fail6="Network is unreachable")}
    verdict, reason, v6, _ = nodecheck.ipstack_verdict(records(line("n1"), line("n2", broken)))
    assert verdict == "FAIL" and not v6 and "n2: IPv6 TCP fails at fd00::1 (Network is unreachable)" in reason


@pytest.mark.parametrize("interface, message", [
    (iface(up=False), "n2: job interface eth0 is down"),
    (iface(present=False), "n2: job interface eth0 does not exist"),
    (iface(ipv4=()), "n2: job interface eth0 has no IPv4 address"),
    (iface(loopback=True, ipv4=("127.0.0.1",)), "n2: job interface eth0 is loopback"),
    (iface(fail="Connection refused"), "n2: job interface eth0 fails TCP at 10.0.0.1 (Connection refused)"),
])
def test_a_broken_job_interface_fails(interface, message):
    verdict, reason, _, _ = nodecheck.ipstack_verdict(records(line("n1"), line("n2", {"eth0": interface})))
    assert verdict == "FAIL" and message in reason
    assert nodecheck.ipstack_verdict({})[0] == "FAIL"


def test_no_interface_but_loopback_is_not_measured():
    verdict, reason, _, _ = nodecheck.ipstack_verdict(records(line("n1", {})))
    assert verdict == "NOT MEASURED" and "no interface other than loopback" in reason


def test_a_loopback_only_record_is_not_a_pass():
    old = f"{nodeprobe.MARKER} " + json.dumps({"topology": {"host": "n1"}, "settings": {},
                                               "ipstack": {"ipv4_loopback": True}})
    assert nodecheck.ipstack_verdict(records(old))[0] == "FAIL"


IP_JSON = json.dumps([
    {"ifname": "lo", "flags": ["LOOPBACK", "UP"], "operstate": "UNKNOWN",
     "addr_info": [{"family": "inet", "local": "127.0.0.1"}]},
    {"ifname": "eth0", "flags": ["UP", "LOWER_UP"], "operstate": "UP",
     "addr_info": [{"family": "inet", "local": "192.0.2.2"},
                   {"family": "inet6", "local": "fd00::2", "scope": "global"},
                   {"family": "inet6", "local": "fe80::1", "scope": "link"}]},
    {"ifname": "ib0", "flags": ["BROADCAST"], "operstate": "DOWN",
     "addr_info": [{"family": "inet", "local": "10.9.0.2"}]},
    {"ifname": "ifb0", "flags": ["BROADCAST"], "operstate": "DOWN", "addr_info": []}])


def test_job_interfaces_come_from_the_mpi_and_slurm_configuration(tmp_path):
    links = ipstack.interfaces(IP_JSON)
    assert links["eth0"]["ipv6"] == ["fd00::2"] and not links["ib0"]["up"]
    pick = lambda env, **kw: ipstack.job_interfaces(links, env, mca_files=(), **kw)  # noqa: E731
    assert pick({"OMPI_MCA_btl_tcp_if_include": "10.9.0.0/16"}) == (["ib0"], "OMPI_MCA_btl_tcp_if_include")
    assert pick({"OMPI_MCA_oob_tcp_if_include": "eth0,ib0"})[0] == ["eth0", "ib0"]
    assert pick({"UCX_NET_DEVICES": "mlx5_0:1,ib0"}) == (["ib0"], "UCX_NET_DEVICES")
    assert pick({}, node_addr="192.0.2.2") == (["eth0"], "Slurm NodeAddr 192.0.2.2")
    names, source = pick({}, node_addr="")
    assert names == ["eth0"] and "default" in source  # never lo; ib0 has an address but is down
    eth0_down = dict(links, eth0=dict(links["eth0"], up=False))
    assert ipstack.job_interfaces(eth0_down, {}, mca_files=(), node_addr="")[0] == ["eth0", "ib0"]
    conf = tmp_path / "mca-params.conf"
    conf.write_text("# site\nbtl_tcp_if_include = eth0\n")
    assert ipstack.job_interfaces(links, {}, mca_files=(str(conf),)) == (["eth0"], f"btl_tcp_if_include in {conf}")


def test_a_down_card_fails_even_though_loopback_works():
    links = ipstack.interfaces(IP_JSON)
    state = ipstack.probe(links, {"OMPI_MCA_btl_tcp_if_include": "ib0"})
    rec = f"{nodeprobe.MARKER} " + json.dumps({"topology": {"host": "n1"}, "settings": {}, "ipstack": state})
    verdict, reason, _, _ = nodecheck.ipstack_verdict(records(rec))
    assert verdict == "FAIL" and "job interface ib0 is down" in reason


def test_live_probe_of_this_node_prints_one_record():
    done = subprocess.run([sys.executable, "-m", "yeebench.checks.acceptance.nodeprobe"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0
    (host, rec), = nodeprobe.parse(done.stdout).items()
    assert rec["topology"]["cores"] >= 1 and "lo" not in rec["ipstack"]["interfaces"]
    assert "kernel.randomize_va_space" in rec["settings"]
