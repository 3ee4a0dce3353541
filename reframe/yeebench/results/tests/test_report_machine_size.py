"""The report of a machine's run: the recorded smoke run on 100 nodes of 16 partitions in 4
environments with each partition's all-pairs network matrix (results/scale_report.py, 2,716 test
cases, 17,580 figures), as one page a reader can take in: one chart per experiment, each
experiment's key figure per node with the outlier nodes named, the pair matrices as heatmaps, the
tables pooled per experiment and collapsed, the complete table beside the page as CSV and JSON; laid
out in headless Chromium at 1280 and 800 px."""
import csv
import html
import json
import re
from pathlib import Path

import pytest

from results_testutil import import_scale_report, ingested, run_cli
from test_results_report import check_layout

REPO = Path(__file__).resolve().parents[4]
SCALE = 100
SLOW_NODES = ("node0006", "node0043", "node0080")  # scale_report.is_slow at x100


@pytest.fixture(scope="module")
def machine_page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("machine")
    report = tmp / "machine_run.json"
    cases = import_scale_report().write_scaled_report(report, SCALE)
    out = tmp / "out" / "report.html"
    proc = run_cli("results", "report", ingested(tmp, report), "-o", out)
    assert proc.returncode == 0, proc.stderr
    return out, cases


def test_a_machine_run_reads_as_one_page(machine_page):
    page, cases = machine_page
    assert cases == 27 * SCALE + 16
    text = page.read_text()
    assert page.stat().st_size <= 5_000_000
    assert text.count("<tr") < 1000                       # not 11,280 rows inlined
    charts, spread = text.split("<h3>Across the machine</h3>")
    spread = spread.split('<section id="tables">')[0]
    # one chart per experiment, not per partition: no check's chart twice
    names = re.findall(r'<img alt="([^"]+)"', charts)
    assert len(names) == len(set(names)) and 5 <= len(names) <= 20
    # every experiment measured per node has its distribution, the network its heatmap
    assert spread.count("<figure") >= 15
    assert "AcceptanceNetwork: every node pair" in html.unescape(spread)
    plain = html.unescape(re.sub(r"<wbr>", "", spread))
    for node in SLOW_NODES:
        assert f"{node} (part" in plain                   # the slow nodes are named, with their partition
    assert plain.count("outlier node(s)") >= 15


def test_the_complete_table_is_beside_the_page_and_linked(machine_page):
    page, _ = machine_page
    text = page.read_text()
    csv_file, json_file = page.with_name("report.figures.csv"), page.with_name("report.figures.json")
    assert f'href="{csv_file.name}"' in text and f'href="{json_file.name}"' in text
    with open(csv_file, newline="") as fp:
        table = list(csv.DictReader(fp))
    doc = json.loads(json_file.read_text())
    # one line per figure of each partition and environment: 175 figures x 16 partitions x 4 environments
    # and the network's 5 per partition
    assert len(table) == len(doc["figures"]) == 175 * 64 + 5 * 16
    assert {row["partition"] for row in table} == {f"part{p:02d}" for p in range(16)}
    slow = [row for row in table if "node0006" in row["nodes"].split()]
    assert len(slow) >= 175 and all(row["partition"] == "part05" for row in slow)


@pytest.mark.parametrize("width", [1280, 800])
def test_layout_of_a_machine_sized_run(machine_page, tmp_path, width):
    check_layout(machine_page[0], tmp_path, width, "machine-run")
