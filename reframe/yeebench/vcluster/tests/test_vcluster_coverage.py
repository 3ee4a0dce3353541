"""The smoke run's node-curve coverage: every count of each multi-node check's curve must be recorded."""
import json

import pytest

from yeebench.vcluster import coverage


def case(name, partition="mpirun", result="pass", figures=(), skip_reason=None):
    c = {"name": name, "partition": partition, "result": result,
         "perfvalues": {f"vcluster:{partition}:host:{f}": [1.0, 0, None, None, "x"] for f in figures}}
    if skip_reason:
        c["observations"] = {"skip_reason": skip_reason}
    return c


def write(tmp_path, cases):
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"runs": [{"testcases": cases}]}))
    return str(path)


def complete(nodes, partition="mpirun"):
    return [case(check, partition, figures=figures) for check, figures in coverage.expected_figures(nodes).items()]


@pytest.mark.parametrize("nodes, counts", [(2, [1, 2]), (3, [1, 2, 3]), (5, [1, 2, 4, 5]), (7, [1, 2, 4, 7]),
                                           (16, [1, 2, 4, 8, 16]), (17, [1, 2, 4, 8, 16, 17])])
def test_the_counts_are_the_checks_counts(nodes, counts):
    assert coverage.node_counts(nodes) == counts
    assert f"over_tuned_{nodes}_nodes" in coverage.expected_figures(nodes)["OsuCollectiveNodeCurve"]


def test_from_five_nodes_the_papers_baseline_of_four_is_required():
    assert "efficiency_vs_4_nodes" in coverage.expected_figures(5)["FdtdNodeScaling"]
    assert "efficiency_vs_1_nodes" in coverage.expected_figures(4)["FdtdNodeScaling"]


@pytest.mark.parametrize("nodes", [2, 3, 5, 16])
def test_a_run_with_every_figure_passes(tmp_path, nodes):
    ok, lines = coverage.check(write(tmp_path, complete(nodes) + complete(nodes, "srun")), nodes)
    assert ok, lines
    assert len(lines) == 2 * len(coverage.expected_figures(nodes))


def test_one_count_missing_fails_naming_it(tmp_path):
    cases = complete(5)
    cases[0]["perfvalues"] = {k: v for k, v in cases[0]["perfvalues"].items() if not k.endswith("_4_nodes")}
    ok, lines = coverage.check(write(tmp_path, cases), 5)
    assert not ok
    assert any(line.startswith("FAIL OsuCollectiveNodeCurve@mpirun") and "over_tuned_4_nodes" in line for line in lines)


def test_a_run_on_fewer_nodes_than_the_cluster_fails(tmp_path):
    ok, lines = coverage.check(write(tmp_path, complete(4)), 5)
    assert not ok and any("efficiency_vs_4_nodes" in line for line in lines)


def test_a_skip_with_its_reason_is_accepted_and_printed(tmp_path):
    cases = complete(5)[1:] + [case("OsuCollectiveNodeCurve", result="skip", skip_reason="osu_allreduce not found")]
    ok, lines = coverage.check(write(tmp_path, cases), 5)
    assert ok
    assert "skip OsuCollectiveNodeCurve@mpirun: osu_allreduce not found" in lines


@pytest.mark.parametrize("result", ["fail", "error"])
def test_a_failed_case_fails(tmp_path, result):
    cases = complete(5)
    cases[-1]["result"] = result
    assert not coverage.check(write(tmp_path, cases), 5)[0]


def test_a_check_absent_from_the_report_fails(tmp_path):
    ok, lines = coverage.check(write(tmp_path, complete(5)[1:]), 5)
    assert not ok and "FAIL OsuCollectiveNodeCurve: no case in the report" in lines


@pytest.mark.parametrize("text", ["", "{", "[]", '{"runs": [{"testcases": [1, "x", null]}]}'])
def test_a_broken_report_is_one_line_never_a_traceback(tmp_path, text):
    path = tmp_path / "report.json"
    path.write_text(text)
    ok, lines = coverage.check(str(path), 5)
    assert not ok and len(lines) >= 1 and all(line.startswith("FAIL") for line in lines)


def test_one_node_has_no_curve():
    assert coverage.check("/nonexistent/report.json", 1)[0]
