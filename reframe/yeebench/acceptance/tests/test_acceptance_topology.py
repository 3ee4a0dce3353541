"""Expected-topology files: validation, comparison, node homogeneity, verdicts."""
import os

import pytest
import yaml

from yeebench.checks.acceptance import nodecheck
from yeebench import node_topology as topology
from yeebench.parsers.numactl import parse_hardware

DATA = os.path.join(os.path.dirname(__file__), "data")
REPO_TOPOLOGY = os.path.join(os.path.dirname(__file__), "..", "..", "..", "config", "topology")


def numactl(name):
    with open(os.path.join(DATA, name)) as f:
        return parse_hardware(f.read())


def thufir_node(host="c001", cores=24, distances=None):
    return {"host": host, "sockets": 2, "cores": cores, "pus": cores, "numa_nodes": 4,
            "numa_distances": distances or numactl("numactl_thufir_compute.txt")["distances"]}


def test_example_file_is_valid_and_matches_a_thufir_node():
    expected = topology.load_expected(os.path.join(REPO_TOPOLOGY, "example-thufir-compute.yaml"))
    assert topology.compare(expected, thufir_node()) == []


def test_node_booted_with_fewer_cores_is_a_mismatch():
    expected = topology.load_expected(os.path.join(REPO_TOPOLOGY, "example-thufir-compute.yaml"))
    problems = topology.compare(expected, thufir_node(cores=12))
    assert problems == ["cores: expected 24, observed 12", "pus: expected 24, observed 12"]


def test_gpu_node_distances_differ_from_compute_node():
    expected = topology.load_expected(os.path.join(REPO_TOPOLOGY, "example-thufir-compute.yaml"))
    gpu = thufir_node(distances=numactl("numactl_thufir_gpu.txt")["distances"])
    assert [p.split(":")[0] for p in topology.compare(expected, gpu)] == ["numa_distances"]


def test_distance_notes_give_remote_cost():
    notes = topology.distance_notes(numactl("numactl_thufir_gpu.txt")["distances"])
    assert notes == ["NUMA remote distances 20 (~100% over local); local 10"]
    assert topology.distance_notes([[10]]) == []


def test_record_then_load_round_trip(tmp_path):
    observed = topology.observe()
    assert observed["cores"] and observed["cores"] >= 1
    doc = topology.to_expected(observed, "testsys", "p1")
    path = tmp_path / "testsys-p1.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert topology.expected_path(str(tmp_path), "testsys", "p1") == str(path)
    assert topology.expected_path(str(tmp_path), "other", "p1") is None
    assert topology.compare(topology.load_expected(str(path)), observed) == []


@pytest.mark.parametrize("doc, message", [
    ([1, 2], "not a mapping"),
    ({"schema": "other", "cores": 2}, "schema is 'other'"),
    ({"schema": "yeebench-topology"}, "none of sockets"),
    ({"schema": "yeebench-topology", "cores": 0}, "cores must be a positive integer"),
    ({"schema": "yeebench-topology", "cores": True}, "cores must be a positive integer"),
    ({"schema": "yeebench-topology", "cores": "24"}, "cores must be a positive integer"),
    ({"schema": "yeebench-topology", "cores": 2, "numa_distances": [[10, 20]]}, "square matrix"),
    ({"schema": "yeebench-topology", "cores": 2, "numa_distances": [[10, 0], [0, 10]]}, "square matrix"),
    ({"schema": "yeebench-topology", "numa_nodes": 2, "numa_distances": [[10]]}, "but numa_nodes is 2"),
])
def test_bad_expected_documents(doc, message):
    with pytest.raises(topology.TopologyError, match=message):
        topology.validate_expected(doc)


def test_unreadable_and_non_yaml_files(tmp_path):
    with pytest.raises(topology.TopologyError, match="cannot read"):
        topology.load_expected(str(tmp_path / "absent.yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("cores: [1, 2\n")
    with pytest.raises(topology.TopologyError, match="not valid YAML"):
        topology.load_expected(str(bad))


def record(topo):
    return {"topology": topo, "settings": {}, "ipstack": {}}


def test_verdict_fails_on_odd_node_without_expected_file():
    records = {h: record(thufir_node(h)) for h in ("c001", "c002", "c003")}
    records["c002"] = record(thufir_node("c002", cores=12))
    verdict, reason, _ = nodecheck.topology_verdict(records)
    assert verdict == "FAIL" and "c002 differs from the other nodes: cores 12 (most nodes: 24)" in reason


def test_verdict_without_file_is_not_measured_and_says_how_to_record_one():
    records = {h: record(thufir_node(h)) for h in ("c001", "c002")}
    how = nodecheck.RECORD_TOPOLOGY.format(system="thufir", partition=" --partition compute",
                                           dir="reframe/config/topology", dash_partition="-compute")
    verdict, reason, details = nodecheck.topology_verdict(records, how_to_record=how)
    assert verdict == "NOT MEASURED" and "no expected-topology file" in reason
    assert "yeebench acceptance topology --record --system thufir --partition compute" in reason
    assert "reframe/config/topology/thufir-compute.yaml" in reason
    assert any("16 (~60% over local)" in d for d in details)
    verdict, reason, _ = nodecheck.topology_verdict(records, expect_nodes=3)
    assert verdict == "FAIL" and "2 node(s) reported, the job spanned 3" in reason
    assert nodecheck.topology_verdict({})[0] == "FAIL"


def test_verdict_against_expected_file_names_node_and_file():
    expected = topology.load_expected(os.path.join(REPO_TOPOLOGY, "example-thufir-compute.yaml"))
    records = {"c001": record(thufir_node("c001")), "c002": record(thufir_node("c002"))}
    verdict, reason, _ = nodecheck.topology_verdict(records, expected, "thufir.yaml", expect_nodes=2)
    assert verdict == "PASS" and reason == "2 node(s) match thufir.yaml"
    records["c002"]["topology"]["numa_nodes"] = 2
    verdict, reason, _ = nodecheck.topology_verdict(records, expected, "thufir.yaml")
    assert verdict == "FAIL" and "c002: numa_nodes: expected 4, observed 2" in reason
    assert reason.endswith("(expected: thufir.yaml)")
