"""Cluster shape without touching the machine: CPU split, addresses, rates, slurm.conf text."""
import pytest

from yeebench.vcluster import layout as L


def test_disjoint_blocks_when_host_has_enough_cpus():
    assert L.split_cpus(list(range(8)), 3, 2) == [[0, 1], [2, 3], [4, 5]]


def test_wraps_around_and_flags_sharing_when_host_is_too_small():
    lay = L.make_layout(2, 2, "none", [0, 1], state_dir="/tmp/x")
    assert [n.cpus for n in lay.nodes] == [[0, 1], [0, 1]]
    assert lay.cpus_shared
    assert not L.make_layout(2, 2, "none", [0, 1, 2, 3], state_dir="/tmp/x").cpus_shared


def test_split_uses_the_cpus_this_process_may_use():
    # a process restricted to CPUs 4-7 must not hand out 0-3
    assert L.split_cpus([4, 5, 6, 7], 2, 2) == [[4, 5], [6, 7]]


@pytest.mark.parametrize("nodes,cpn,cpus", [(0, 1, [0]), (2, 0, [0, 1]), (2, 3, [0, 1]), (1, 1, [])])
def test_split_rejects_impossible_requests(nodes, cpn, cpus):
    with pytest.raises(L.LayoutError):
        L.split_cpus(cpus, nodes, cpn)


def test_default_cpus_per_node_gives_pairs_room():
    assert L.default_cpus_per_node(2, 2) == 2      # intra-node pairs need two CPUs
    assert L.default_cpus_per_node(16, 2) == 8
    assert L.default_cpus_per_node(1, 3) == 1


@pytest.mark.parametrize("text,bps", [("1gbit", 1e9), ("10gbit", 1e10), ("500mbit", 5e8),
                                      ("2.5Gbit", 2.5e9), ("none", None), (None, None)])
def test_link_rates(text, bps):
    assert L.parse_link_rate(text) == bps


@pytest.mark.parametrize("text", ["1gb", "fast", "1 gbit", "-1gbit", "100kbit", ""])
def test_bad_link_rates(text):
    with pytest.raises(L.LayoutError, match="link-rate"):
        L.parse_link_rate(text)


@pytest.mark.parametrize("nodes", [0, -1, L.MAX_NODES + 1])
def test_bad_node_counts(nodes):
    with pytest.raises(L.LayoutError, match="--nodes"):
        L.make_layout(nodes, 1, "none", list(range(4)))


def test_addresses_names_and_namespaces_stay_private():
    lay = L.make_layout(3, 1, "1gbit", list(range(4)), state_dir="/tmp/vc")
    assert [n.addr for n in lay.nodes] == ["10.77.0.11", "10.77.0.12", "10.77.0.13"]
    assert [n.name for n in lay.nodes] == ["vc0", "vc1", "vc2"]
    assert all(n.netns.startswith(L.NETNS_PREFIX) for n in lay.nodes)
    assert len({n.veth_switch for n in lay.nodes}) == 3
    assert all(len(n.veth_switch) <= 15 for n in lay.nodes)      # IFNAMSIZ
    assert lay.link_rate_bps == 1e9


def test_burst_is_small_next_to_the_messages_that_measure_the_rate():
    # bw_large uses messages >= 2 MiB: the bucket must stay a few percent of that
    assert L.tbf_burst_bytes(1e9) == 64 * 1024
    assert L.tbf_burst_bytes(1e8) == 64 * 1024
    assert L.tbf_burst_bytes(1e10) == 625000


def test_slurm_conf_describes_the_virtual_nodes():
    lay = L.make_layout(3, 2, "none", list(range(6)), state_dir="/run/yb")
    text = L.slurm_conf_text(lay)
    assert "SlurmctldHost=vc-head(10.77.0.1)" in text
    assert "NodeName=vc[0-2] NodeAddr=10.77.0.11,10.77.0.12,10.77.0.13 CPUs=2 " in text
    assert "AuthInfo=socket=/run/yb/munge/munge.socket" in text
    assert "AccountingStorageType=accounting_storage/none" in text
    assert "TaskPlugin=task/none" in text      # Slurm would bind outside the node's CPU set
    assert "TmpFS=/run/yb/tmp" in text
    assert "PartitionName=vc Nodes=ALL" in text
    for line in text.splitlines():
        assert line.startswith("#") or "=" in line


def test_single_node_range():
    assert L.node_range(["vc0"]) == "vc0"


def test_hosts_file_keeps_the_machines_entries():
    lay = L.make_layout(2, 1, "none", [0, 1], state_dir="/run/yb")
    text = L.hosts_text(lay, "127.0.0.1 localhost\n")
    assert text.startswith("127.0.0.1 localhost\n")
    assert "10.77.0.1\tvc-head" in text and "10.77.0.12\tvc1" in text


def test_layout_round_trips_through_its_dict():
    lay = L.make_layout(2, 1, "10gbit", [0, 1, 2], state_dir="/run/yb")
    again = L.Layout.from_dict(lay.to_dict())
    assert again == lay and again.slurm_conf == "/run/yb/etc/slurm.conf"


def test_mtu_default_and_limits():
    assert L.make_layout(1, 1, "none", [0]).mtu == 9000
    assert L.make_layout(1, 1, "none", [0], mtu=1500).mtu == 1500
    with pytest.raises(L.LayoutError, match="--mtu"):
        L.make_layout(1, 1, "none", [0], mtu=500)
