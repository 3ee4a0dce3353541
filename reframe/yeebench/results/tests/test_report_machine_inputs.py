"""A machine's run with the faults a machine's run has: a pair matrix with pairs missing, a node list of
100,000 names, node names holding shell and HTML characters, a report larger than the memory at hand.
Each ends in a partial figure that says what is missing, or one line: never a traceback, never a hole
drawn as a value, nothing of a name executed or taken as markup."""
import csv
import html
import json
import random
import re
from pathlib import Path

import pytest

from results_testutil import import_scale_report, ingested, run_cli
from yeebench.results import pair_matrix

REPO = Path(__file__).resolve().parents[4]
HOSTILE_NODE = "n$(touch${IFS}PWNED)<b>&'\"`id`;x"


@pytest.fixture(scope="module")
def scale_report():
    return import_scale_report()


def _network(scale_report, base, nodes, missing=(), nodelist=None):
    template = next(c for c in base["runs"][0]["testcases"] if c["display_name"] == "AcceptanceMulticast")
    case = scale_report.network_case(template, "local", "default", nodes, random.Random(1), set(missing))
    if nodelist is not None:
        case["job_nodelist"] = nodelist
    return case


def _report_of(tmp_path, report, name="report.html"):
    source = tmp_path / "run.json"
    source.write_text(json.dumps(report))
    out = tmp_path / name
    run = ingested(tmp_path, source)
    proc = run_cli("results", "report", run, "-o", out)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return out, html.unescape(re.sub(r"<wbr>", "", out.read_text())), run


def test_missing_pairs_are_said_and_drawn_as_holes(tmp_path, scale_report):
    base = json.loads(scale_report.SOURCE.read_text())
    missing = {("node0001", "node0003"), ("node0002", "node0005")}
    base["runs"][0]["testcases"].append(_network(scale_report, base, list(range(5)), missing))
    out, text, _ = _report_of(tmp_path, base)
    assert "AcceptanceNetwork default: 2 of 10 pairs not measured: node0001-node0003, node0002-node0005" in text
    assert "AcceptanceNetwork: every node pair" in text        # the pairs there are still drawn
    lines = [f"pair {scale_report.node_name(a)} - {scale_report.node_name(b)}: 1.0 us, 100 MB/s"
             for a in range(4) for b in range(a + 1, 4)]
    matrix = pair_matrix.matrix_of({"details": lines[1:], "nodelist": [f"node{i:04d}" for i in range(1, 5)]}, "p")
    assert matrix.missing == [("node0001", "node0002")] and len(matrix.latency) == 5


def test_a_node_list_of_100000_names_is_said_not_drawn(tmp_path, scale_report):
    base = json.loads(scale_report.SOURCE.read_text())
    names = [scale_report.node_name(i) for i in range(100_000)]
    base["runs"][0]["testcases"].append(_network(scale_report, base, list(range(5)), nodelist=names))
    out, text, _ = _report_of(tmp_path, base)
    assert "AcceptanceNetwork default: 100000 nodes, more than the 400 a heatmap shows" in text
    assert out.stat().st_size < 2_000_000                      # no list of 100,000 names in the page
    assert "4999950000" in text or "not measured" in text       # the pairs the matrix lacks are counted


def test_node_names_with_shell_and_html_characters_stay_names(tmp_path, scale_report):
    report = scale_report.scaled_report(scale=6, partitions=2)
    slow = scale_report.node_name(scale_report.SLOW_AT)        # slow: its name is written on the chart

    def rename(text):
        return text.replace(slow, HOSTILE_NODE) if isinstance(text, str) else text
    for case in report["runs"][0]["testcases"]:
        case["job_nodelist"] = [rename(n) for n in case.get("job_nodelist") or []]
        case["acceptance_details"] = [rename(d) for d in case.get("acceptance_details") or []]
    out, text, run = _report_of(tmp_path, report)
    assert HOSTILE_NODE in text and "<b>&" not in out.read_text()   # shown, escaped
    assert not list(tmp_path.rglob("PWNED")) and not Path("PWNED").exists()
    with open(out.with_name("report.figures.csv"), newline="") as fp:
        assert any(HOSTILE_NODE in row["nodes"].split() for row in csv.DictReader(fp))
    assert re.search(re.escape(HOSTILE_NODE) + r" \(part01, \+\d+%\)", text)   # named as the outlier it is
    proc = run_cli("results", "plot", run, "-o", tmp_path / "png")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


def test_a_report_larger_than_the_memory_at_hand_is_one_line(tmp_path, scale_report, monkeypatch):
    monkeypatch.setenv("YEEBENCH_SIMULATE_HW", "mem=1Mi")
    proc = run_cli("results", "ingest", scale_report.SOURCE, "--results-dir", tmp_path / "results")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "of memory and 1.0 MiB is available here" in proc.stderr and "split the run" in proc.stderr
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").rglob("rows.jsonl"))


def _lines(worse_node=None, factor=1.0):
    """Pair lines of 5 nodes; the pairs of `worse_node` `factor` times slower in latency."""
    out = []
    for a in range(5):
        for b in range(a + 1, 5):
            slow = factor if worse_node in (a, b) else 1.0
            out.append(f"pair node{a:04d} - node{b:04d}: {1.0 * slow} us, 100 MB/s")
    return out


@pytest.mark.parametrize("recorded, named", [(None, True), (0.5, True), (1.0, False), (3.0, False)])
def test_the_figure_judges_by_the_tolerance_the_check_ran_with(recorded, named):
    # node0002's median latency over its pairs is 1.6x the median node's: an outlier at the default 50 %,
    # not for a check run with tolerance 1.0 (the virtual cluster's), whose verdict the figure must not contradict
    case = {"details": _lines(2, 1.6), **({} if recorded is None else {"tolerance": recorded})}
    matrix = pair_matrix.matrix_of(case, "p")
    assert matrix.tolerance == (pair_matrix.TOLERANCE if recorded is None else recorded)
    assert ("node0002" in matrix.outliers) == named


@pytest.mark.parametrize("hostile", ["1.0", -1, 0, 1e400, float("nan"), True, [1], 10 ** 400])
def test_a_recorded_tolerance_that_is_no_fraction_falls_back_to_the_default(hostile):
    matrix = pair_matrix.matrix_of({"details": _lines(2, 1.6), "tolerance": hostile}, "p")
    assert matrix.tolerance == pair_matrix.TOLERANCE and "node0002" in matrix.outliers


def test_ingest_keeps_the_checks_tolerance_beside_its_pair_lines(tmp_path, scale_report):
    base = json.loads(scale_report.SOURCE.read_text())
    network = _network(scale_report, base, list(range(5)))
    network["tolerance"] = 1.0
    base["runs"][0]["testcases"].append(network)
    _, text, _ = _report_of(tmp_path, base)
    assert "worse than the median node by more than 100% in latency or bandwidth" in text
