"""Verdicts from the mcast probe's output (paper 003, test 13)."""
import pytest

from yeebench.checks.acceptance import multicast

THREE_NODES = """round receivers 1 remote 1 sent 2000 delivered_min 2000 delivered_mean 2000.0 mbps_min 410.2
round receivers 2 remote 2 sent 2000 delivered_min 1996 delivered_mean 1998.0 mbps_min 380.0
mcast: ranks 3 remote_receivers 2 group 239.255.7.9:23456 iface 10.77.0.2 VALID
"""


def test_three_nodes_pass_and_give_the_figures():
    summary, rounds = multicast.parse(THREE_NODES)
    assert [r.receivers for r in rounds] == [1, 2] and rounds[1].delivered_min == 1996
    status, reason = multicast.verdict(summary, rounds, 0.99)
    assert status == "pass" and "2 remote node(s)" in reason
    foms = dict((n, v) for n, v, _, _ in multicast.foms(rounds))
    assert foms["multicast_delivered"] == pytest.approx(99.8)
    assert foms["multicast_scaling"] == pytest.approx(380.0 / 410.2)


def test_losses_below_the_floor_fail_naming_the_round():
    summary, rounds = multicast.parse(THREE_NODES.replace("delivered_min 1996", "delivered_min 1500"))
    status, reason = multicast.verdict(summary, rounds, 0.99)
    assert status == "fail" and reason.startswith("with 2 receiver(s) one got 1500 of 2000")


def test_one_node_and_refused_multicast_are_not_measured():
    one_node = THREE_NODES.replace("remote 1 ", "remote 0 ").replace("remote 2 ", "remote 0 ")
    assert multicast.verdict(*multicast.parse(one_node), 0.99)[0] == "not measured"
    status, reason = multicast.verdict(*multicast.parse("mcast: SKIP no IPv4 address on interface x\n"), 0.99)
    assert (status, reason) == ("not measured", "multicast not measured: no IPv4 address on interface x")
    assert multicast.verdict(*multicast.parse(THREE_NODES.replace(" VALID", " INVALID")), 0.99)[0] == "fail"
    with pytest.raises(multicast.McastOutputError):
        multicast.parse("round receivers 1 remote 1 sent 1 delivered_min 1 delivered_mean 1 mbps_min 1\n")


def test_datagrams_lost_only_to_a_busy_receivers_full_buffer_are_not_a_network_failure():
    busy = THREE_NODES.replace("delivered_min 1996 delivered_mean 1998.0 mbps_min 380.0",
                               "delivered_min 1500 delivered_mean 1700.0 mbps_min 380.0 reached_min 2000")
    status, reason = multicast.verdict(*multicast.parse(busy), 0.99)
    assert status == "not measured" and "one got 1500 of 2000" in reason and "RcvbufErrors" in reason
    # the network lost some too (reached 1900 of 2000), or the node's counter said nothing (-1): a failure
    for reached in ("1900", "-1"):
        status, _ = multicast.verdict(*multicast.parse(busy.replace("reached_min 2000", f"reached_min {reached}")), 0.99)
        assert status == "fail", reached
    summary, rounds = multicast.parse(busy.replace("reached_min 2000", "reached_min -1"))
    assert rounds[1].reached_min is None and rounds[0].reached_min is None   # an older probe prints none
