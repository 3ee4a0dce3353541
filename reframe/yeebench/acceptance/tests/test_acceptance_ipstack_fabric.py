"""Paper 003 test 14 across the network: a round trip to a node's own address never leaves it, so the
probes of a job's nodes meet in a shared folder and each connects to the next node's addresses.  Node
lists are synthesised; the meeting itself runs between threads standing in for nodes on loopback."""
import json
import threading

from yeebench.checks.acceptance import ipstack, nodecheck, nodeprobe


def test_each_node_connects_to_the_next_and_one_node_to_none():
    assert ipstack.ring_peers(["n3", "n1", "n2"]) == {"n1": "n2", "n2": "n3", "n3": "n1"}
    assert ipstack.ring_peers(["a", "b"]) == {"a": "b", "b": "a"}
    assert ipstack.ring_peers(["only"]) == {} and ipstack.ring_peers([]) == {}


def test_the_node_count_is_the_launchers_task_count():
    assert ipstack.expected_nodes({"SLURM_NTASKS": "3"}) == 3
    assert ipstack.expected_nodes({"OMPI_COMM_WORLD_SIZE": "2"}) == 2
    assert ipstack.expected_nodes({"SLURM_NTASKS": "x"}) == 1 and ipstack.expected_nodes({}) == 1


def test_mpirun_inside_an_allocation_counts_its_own_tasks_not_the_allocations():
    # a one-node run under mpirun inside salloc inherits the allocation's SLURM_NTASKS
    assert ipstack.expected_nodes({"SLURM_NTASKS": "4", "OMPI_COMM_WORLD_SIZE": "1"}) == 1
    assert ipstack.expected_nodes({"SLURM_NTASKS": "4", "PMI_SIZE": "2"}) == 2
    assert ipstack.expected_nodes({"SLURM_NTASKS": "4", "SLURM_STEP_NUM_TASKS": "3",
                                   "OMPI_COMM_WORLD_SIZE": "1"}) == 3


def record(host, fabric, ipv6=("fd00::1",)):
    stack = {"interfaces": {"eth0": {"present": True, "up": True, "loopback": False, "ipv4": {"10.0.0.1": ""},
                                     "ipv6": {a: "" for a in ipv6}}},
             "source": "Open MPI's default", "ipv6_kernel": True}
    if fabric is not None:
        stack["fabric"] = fabric
    return f"{nodeprobe.MARKER} " + json.dumps({"topology": {"host": host}, "settings": {}, "ipstack": stack})


def verdict(*lines):
    return nodecheck.ipstack_verdict(nodeprobe.parse("\n".join(lines)))


def crossed(peer, n=2, v4="", v6=""):
    return {"nodes": n, "peer": peer, "ipv4": {"10.0.0.9": v4}, "ipv6": {"fd00::9": v6}}


def test_one_node_is_same_node_not_measured_for_the_fabric():
    word, reason, v6, _ = verdict(record("n1", {"nodes": 1}))
    assert word == "NOT MEASURED" and not v6
    assert "on the node itself (IPv6 too)" in reason and "same node: the job ran on n1 alone" in reason


def test_two_nodes_that_reach_each_other_pass_and_say_so():
    word, reason, v6, details = verdict(record("n1", crossed("n2")), record("n2", crossed("n1")))
    assert word == "PASS" and v6
    assert "across the network each node reached the next (n1 -> n2 -> n1)" in reason
    assert "n1 -> n2 across the network: IPv4 10.0.0.9, IPv6 fd00::9" in details


def test_a_round_trip_that_fails_across_the_network_fails_naming_both_nodes():
    word, reason, _, _ = verdict(record("n1", crossed("n2", n=3)), record("n2", crossed("n3", n=3, v4="timed out")),
                                 record("n3", crossed("n1", n=3, v6="Network is unreachable")))
    assert word == "FAIL"
    assert "n2 -> n3: IPv4 TCP to 10.0.0.9 fails (timed out)" in reason
    assert "n3 -> n1: IPv6 TCP to fd00::9 fails (Network is unreachable)" in reason


def test_probes_that_did_not_meet_or_did_not_try_are_not_a_pass():
    word, reason, _, _ = verdict(record("n1", {"nodes": 2, "error": "1 of 2 node(s) published their addresses "
                                                                    "within 90 s (n1)"}), record("n2", crossed("n1")))
    assert word == "FAIL" and "n1: no round trip across the network: 1 of 2 node(s) published" in reason
    word, reason, _, _ = verdict(record("n1", None), record("n2", None))
    assert word == "NOT MEASURED" and "stayed on the node (the probe ran without --peers)" in reason
    word, reason, _, _ = verdict(record("n1", crossed("n9")), record("n2", crossed("n1")))
    assert word == "FAIL" and "n1: met 2 node(s) and reached n9, but the job's nodes are n1, n2" in reason


def test_two_probes_meet_in_a_folder_and_cross_to_each_other(tmp_path):
    results = {}

    def node(host):
        results[host] = ipstack.fabric(str(tmp_path), host, [("ipv4", "127.0.0.1")], expected=2, timeout=20)

    threads = [threading.Thread(target=node, args=(h,)) for h in ("nodeA", "nodeB")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results["nodeA"] == {"nodes": 2, "peer": "nodeB", "ipv4": {"127.0.0.1": ""}, "ipv6": {}}
    assert results["nodeB"]["peer"] == "nodeA" and results["nodeB"]["ipv4"] == {"127.0.0.1": ""}
    published = json.loads((tmp_path / "nodeB.addr.json").read_text())["listen"]
    mine = json.loads((tmp_path / "nodeA.addr.json").read_text())["listen"]
    assert published[0][2] != mine[0][2]      # each node listened on its own port: A really reached B's


def test_a_node_alone_in_a_job_of_two_gives_up_at_the_time_limit(tmp_path):
    found = ipstack.fabric(str(tmp_path), "nodeA", [("ipv4", "127.0.0.1")], expected=2, timeout=0.5)
    assert found == {"nodes": 2, "error": "1 of 2 node(s) published their addresses within 0.5 s (nodeA)"}
    assert ipstack.fabric(str(tmp_path / "unused"), "nodeA", [], expected=1) == {"nodes": 1}
    assert not (tmp_path / "unused").exists()


def test_the_wait_for_the_others_to_finish_has_its_own_time_limit(tmp_path, monkeypatch):
    # the peer published already; a publish wait that used up the whole limit must not
    # leave the finishing wait with no time
    (tmp_path / "nodeB.addr.json").write_text(json.dumps({"host": "nodeB", "listen": []}))
    clock = [1000.0]
    waits = []
    monkeypatch.setattr(ipstack.time, "monotonic", lambda: clock[0])

    def wait_for(folder, suffix, count, deadline):
        waits.append((suffix, deadline - clock[0]))
        clock[0] += 30.0       # each wait takes the whole limit
        return {"nodeA": "a", "nodeB": str(tmp_path / "nodeB.addr.json")}

    monkeypatch.setattr(ipstack, "_wait_for", wait_for)
    ipstack.fabric(str(tmp_path), "nodeA", [], expected=2, timeout=30)
    assert waits == [(".addr.json", 30.0), (".done", 30.0)]
