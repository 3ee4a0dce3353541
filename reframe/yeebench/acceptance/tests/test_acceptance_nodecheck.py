"""Per-node probe records: parsing the job output, IP stack verdicts, a live probe of this node."""
import json
import subprocess
import sys

import pytest

from yeebench.acceptance import ipstack, nodecheck, nodeprobe


def line(host, **ip):
    stack = {"ipv4_loopback": True, "ipv6_kernel": True, "ipv6_loopback": True,
             "ipv6_global_addresses": ["eth0 fd00::2"], **ip}
    return f"{nodeprobe.MARKER} " + json.dumps({"topology": {"host": host}, "settings": {}, "ipstack": stack})


def test_parse_ignores_launcher_noise_and_keys_by_host():
    text = "\n".join(["mpirun: warning", line("n1"), "", line("n2")])
    assert sorted(nodeprobe.parse(text)) == ["n1", "n2"]


def test_two_ranks_on_one_node_are_rejected():
    with pytest.raises(ValueError, match="host n1 reported twice"):
        nodeprobe.parse(line("n1") + "\n" + line("n1"))


def records(*lines):
    return nodeprobe.parse("\n".join(lines))


def test_ipv6_everywhere():
    ok, reason, v6 = nodecheck.ipstack_verdict(records(line("n1"), line("n2")))
    assert ok and v6 and reason == "IPv4 and IPv6 loopback work on all 2 node(s)"


def test_ipv6_missing_is_reported_not_failed():
    ok, reason, v6 = nodecheck.ipstack_verdict(records(line("n1"), line("n2", ipv6_loopback=False)))
    assert ok and not v6 and "IPv6 unavailable on n2" in reason


def test_ipv6_without_global_address_is_named():
    ok, reason, v6 = nodecheck.ipstack_verdict(records(line("n1", ipv6_global_addresses=[])))
    assert ok and not v6 and "no global IPv6 address on n1" in reason


def test_ipv4_failure_fails():
    ok, reason, _ = nodecheck.ipstack_verdict(records(line("n1"), line("n2", ipv4_loopback=False)))
    assert not ok and reason == "IPv4 loopback TCP fails on n2"
    assert nodecheck.ipstack_verdict({})[0] is False


def test_global_addresses_from_a_recorded_if_inet6(tmp_path):
    table = tmp_path / "if_inet6"
    table.write_text("00000000000000000000000000000001 01 80 10 80       lo\n"
                     "fd000000000000000000000000000002 04 40 00 80     eth0\n"
                     "fe8000000000000000fc00fffe000001 04 40 20 80     eth0\n")
    assert ipstack._ipv6_global_addresses(str(table)) == ["eth0 fd00::2"]
    assert ipstack._ipv6_global_addresses(str(tmp_path / "absent")) == []


def test_live_probe_of_this_node_prints_one_record():
    done = subprocess.run([sys.executable, "-m", "yeebench.acceptance.nodeprobe"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0
    (host, rec), = nodeprobe.parse(done.stdout).items()
    assert rec["topology"]["cores"] >= 1 and rec["ipstack"]["ipv4_loopback"] is True
    assert "kernel.randomize_va_space" in rec["settings"]
