"""The bad-node test's judgement: a verdict names exactly the node made bad, or the test fails saying why;
and `degrade` refuses what it cannot do with one line (no cluster, no such node, a rate not slower)."""
import json

import pytest

from yeebench.vcluster import bad_node, degrade, state
from yeebench.vcluster.layout import make_layout

REASON = ("outlier node(s): vc2: bandwidth 11.8 MB/s vs median 1.9e+03 MB/s (16000% worse); "
          "vc2: latency 310 us vs median 41 us (656% worse)")


def test_the_named_outliers_are_read_from_the_verdict():
    assert bad_node.named_outliers(REASON) == {"vc2"}
    assert bad_node.named_outliers(REASON.replace("vc2: latency", "vc4: latency")) == {"vc2", "vc4"}
    assert bad_node.named_outliers("outlier node(s): vc3/1: latency 9 us vs median 3 us (200% worse); "
                                   "pair vc0 - vc1 latency above the required 3 us") == {"vc3"}
    assert bad_node.named_outliers("20 pair(s) of 5 nodes measured, collectives correct") == set()


FIGURE = ("AcceptanceNetwork: every node pair&#39;s latency (red names: outlier nodes, worse than the median node by "
          "more than 50% in latency or bandwidth). srun: vc<wbr>2 bandwidth 49 MB/s vs median 337 MB/s (588% worse)")


def _run(tmp_path, result, reason, page_text, figure=FIGURE):
    out = tmp_path / "link"
    out.mkdir(parents=True)
    report = {"runs": [{"testcases": [{"name": "AcceptanceNetwork %x=1", "result": result, "fail_reason": reason}]}]}
    (out / "report.json").write_text(json.dumps(report))
    (out / "acceptance.html").write_text(page_text)
    if figure is not None:
        (out / "results.html").write_text(f"<figure><img alt='x'><figcaption>{figure}</figcaption></figure>")
    return str(out)


def test_only_a_failure_naming_exactly_the_node_passes(tmp_path, capsys):
    assert bad_node.judge("link", "vc2", _run(tmp_path / "a", "fail", REASON, "<td>vc2</td>"))
    assert not bad_node.judge("link", "vc2", _run(tmp_path / "b", "pass", "no node worse", "vc2"))
    assert not bad_node.judge("link", "vc2", _run(tmp_path / "c", "fail", REASON.replace("vc2: latency", "vc0: latency"),
                                                  "vc2"))
    assert not bad_node.judge("link", "vc2", _run(tmp_path / "d", "fail", REASON, "no node named"))
    out = capsys.readouterr().out
    assert "it passed" in out and "not only vc2" in out and "does not name vc2" in out


def test_the_results_page_figure_must_name_the_node_and_only_it(tmp_path, capsys):
    two = FIGURE + "; vc0 latency 90 us vs median 41 us (120% worse)"
    assert not bad_node.judge("link", "vc2", _run(tmp_path / "a", "fail", REASON, "vc2", figure=two))
    assert not bad_node.judge("link", "vc2", _run(tmp_path / "b", "fail", REASON, "vc2", figure=None))
    healthy = FIGURE.split(" srun:")[0] + " no outlier in 1 partition(s)"
    assert not bad_node.judge("link", "vc2", _run(tmp_path / "c", "fail", REASON, "vc2", figure=healthy))
    out = capsys.readouterr().out
    assert "names ['vc0', 'vc2'], not only vc2" in out and "has no AcceptanceNetwork node-pair figure" in out
    assert "names no node, not only vc2" in out


@pytest.fixture
def cluster_record(tmp_path):
    layout = make_layout(5, 1, None, [0, 1], state_dir=str(tmp_path))
    state.save(layout, {}, None, "up")
    return str(tmp_path)


def test_degrade_refuses_with_one_line(tmp_path, cluster_record):
    with pytest.raises(degrade.DegradeError, match="no virtual cluster is up"):
        degrade.slow_link(str(tmp_path / "none"), "vc2", "100mbit")
    with pytest.raises(degrade.DegradeError, match=r"no node 'vc9' in the cluster \(nodes: vc0, vc1, vc2, vc3, vc4\)"):
        degrade.slow_link(cluster_record, "vc9", "100mbit")
    with pytest.raises(degrade.DegradeError, match="needs a rate"):
        degrade.slow_link(cluster_record, "vc2", "none")
    with pytest.raises(degrade.DegradeError, match="between 0 and 100"):
        degrade.cap_cpu(cluster_record, "vc2", 150)


def test_a_shaped_cluster_only_gets_slower(tmp_path):
    layout = make_layout(3, 1, "1gbit", [0, 1], state_dir=str(tmp_path))
    state.save(layout, {}, None, "up")
    with pytest.raises(degrade.DegradeError, match="not slower"):
        degrade.slow_link(str(tmp_path), "vc1", "10gbit")


def test_a_damaged_report_is_a_failure_with_one_line(tmp_path, capsys):
    out = tmp_path / "cpu"
    out.mkdir()
    for text in ("{not json", '{"runs": 5}', '[1, 2]'):
        (out / "report.json").write_text(text)
        assert not bad_node.judge("cpu", "vc2", str(out))
    lines = [line for line in capsys.readouterr().out.splitlines() if line]
    assert len(lines) == 3 and all(line.startswith("bad-node cpu: FAILED: ") for line in lines)
