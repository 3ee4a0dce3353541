"""plot and report: figure families chosen from the rows, a self-contained HTML report
rendered in headless Chromium."""
import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from results_testutil import FIXTURES, REPORT_B, ingested, run_cli, synthetic_run
from yeebench.results import plots, sources, store
from yeebench.results.report import CSS_FILE

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _rows(run_id, entries):
    rows = []
    for check, params, metric, unit, direction, values in entries:
        for repeat, value in enumerate(values):
            rows.append({"schema": "yeebench-row", "schema_version": 1, "run_id": run_id,
                         "timestamp": "2026-01-01T00:00:00Z", "system": "synth", "partition": "p", "environ": "e",
                         "check": check, "parameters": params, "metric": metric, "value": float(value),
                         "unit": unit, "direction": direction, "direction_source": "declared", "repeat": repeat})
    return rows


def _suite_like_source():
    entries = []
    for placement, scale in (("intra-node", 1), ("inter-node", 3)):
        for size in (1, 1024, 1048576):
            entries.append(("OSUPt2pt", {"transport": "ucx", "placement": placement}, f"latency_{size}B", "us",
                            "lower", [scale * (1 + size / 1e4)] * 3))
            entries.append(("OSUPt2pt", {"transport": "ucx", "placement": placement}, f"bandwidth_{size}B", "MB/s",
                            "higher", [size / (scale * (1 + size / 1e4))] * 3))
    for impl in ("tuned", "han"):
        for size in (8, 4096):
            entries.append(("OSUCollectives", {"implementation": impl, "num_tasks": 4, "collective": "allreduce"},
                            f"latency_{size}B", "us", "lower", [3 + size / 500] * 3))
    for ranks in (1, 2, 4):
        for binding in ("core", "socket"):
            entries.append(("FDTDScaling", {"binding": binding, "policy": "local", "ranks": ranks}, "mcells_per_s",
                            "Mcells/s", "higher", [100 * ranks * (0.9 if binding == "core" else 1)] * 2))
    for policy in ("local", "interleave", "remote"):
        entries.append(("NumaBandwidth", {"policy": policy}, "triad_gbs", "GB/s", "higher", [10, 11]))
        entries.append(("NumaBandwidth", {"policy": policy}, "copy_gbs", "GB/s", "higher", [9, 9.5]))
    entries.append(("SomethingNew", {"x": 1}, "widgets", "", "unknown", [5, 6]))
    entries.append(("SomethingNew", {"x": 2}, "widgets", "", "unknown", [7, 8]))
    entries.append(("Lonely", {"x": 1}, "gadgets", "", "unknown", [5, 6]))
    return sources.RowSource("synthetic", _rows("synthetic", entries), [])


def test_figure_families_from_rows(tmp_path):
    written = plots.write_plots([_suite_like_source()], tmp_path)
    names = sorted(p.name for p in written)
    assert "pt2pt_OSUPt2pt_latency.png" in names and "pt2pt_OSUPt2pt_bandwidth.png" in names
    assert "collective_OSUCollectives_allreduce_latency.png" in names
    assert "solver_FDTDScaling_mcells_per_s_vs_ranks.png" in names
    assert "scaling_FDTDScaling_mcells_per_s_efficiency.png" in names
    assert "NumaBandwidth_policy.png" in names  # the experiment's own figure
    assert "metric_SomethingNew_widgets.png" in names  # unknown checks still get a chart
    assert not any("Lonely" in n for n in names)        # but never a single-bar chart
    for path in written:
        data = path.read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5000


def test_message_size_detection():
    row = {"metric": "latency_4KiB", "parameters": {}}
    assert plots.message_size(row) == 4096
    assert plots.message_size({"metric": "latency", "parameters": {"size": "64"}}) == 64
    assert plots.message_size({"metric": "mcells_per_s", "parameters": {"size": 8}}) is None


def test_alpha_beta_from_pt2pt_rows():
    alpha, beta = plots._alpha_beta(_suite_like_source().rows)
    assert alpha == pytest.approx(1.0001)  # smallest-message intra-node latency, us
    assert beta > 0


def test_plot_cli_with_baseline(tmp_path):
    run = ingested(tmp_path)
    base = ingested(tmp_path, REPORT_B)
    proc = run_cli("results", "plot", run, "--baseline", base, "-o", tmp_path / "png")
    assert proc.returncode == 0, proc.stderr
    paths = proc.stdout.split()
    assert any("pt2pt_FixturePt2pt_latency" in p for p in paths)
    assert any("solver_FixtureSolver_mcells_per_s" in p for p in paths)
    assert all(open(p, "rb").read(8) == PNG_MAGIC for p in paths)


def test_plot_bad_input(tmp_path):
    proc = run_cli("results", "plot", tmp_path / "missing")
    assert proc.returncode == 2 and "no such run" in proc.stderr


def _report(tmp_path):
    run = ingested(tmp_path)
    base = ingested(tmp_path, REPORT_B)
    out = tmp_path / "out" / "report.html"
    proc = run_cli("results", "report", run, "--baseline", base, "-o", out)
    assert proc.returncode == 0, proc.stderr
    return out


def test_report_is_self_contained(tmp_path):
    text = _report(tmp_path).read_text()
    assert "<h2>Summary</h2>" in text and text.index("<h2>Summary</h2>") < text.index("<h2>All figures</h2>")
    assert text.count('src="data:image/png;base64,') >= 4
    assert not re.search(r"""(src|href)=['"]?(https?:|//|file:)""", text)  # nothing fetched from elsewhere
    assert "<script" not in text
    for metric in ("latency_1B", "bandwidth_peak", "mcells_per_s", "elapsed_s"):
        assert metric in text
    assert "FixtureFailing" in text  # failed cases are listed under provenance
    assert "Mcells/s" in text and ">us<" in text  # units in the tables
    assert "<details>" in text  # full tables collapsed
    assert CSS_FILE.read_text() in text  # the style sheet as written: an escaped quote breaks its rules


def test_report_escapes_what_it_is_given(tmp_path):
    run = synthetic_run(tmp_path, "x", {"t": [1, 2]}, check="<script>alert(1)</script>")
    out = tmp_path / "r.html"
    assert run_cli("results", "report", run, "-o", out).returncode == 0
    text = out.read_text()
    assert "<script>alert" not in text
    # long names carry line-break opportunities (<wbr>) between their escaped pieces
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text.replace("<wbr>", "")


def test_summary_puts_the_papers_figure_beside_ours():
    from yeebench.results import report
    # the paper's figure is between two nodes, host buffers over its InfiniBand path (UCX here): only the
    # inter-node osu_latency case over ucx carries it; the tcp case gets what the figure needs instead
    inter = {"benchmark": "osu_latency", "locality": "inter", "buffers": "host", "num_tasks": 2, "num_tasks_per_node": 1}
    rows = _rows("r", [("OsuPt2Pt", dict(inter, transport="ucx"), "latency_1B", "us", "lower", [0.4, 0.5]),
                       ("OsuPt2Pt", dict(inter, transport="ob1-tcp"), "latency_1B", "us", "lower", [9, 10]),
                       ("OsuPt2Pt", dict(inter, transport="ucx"), "peak_bw", "MB/s", "higher", [9000])])
    (line,) = report._summary(sources.RowSource("r", rows, []), {})
    assert line["metric"] == "latency_1B" and line["value"] == "0.45" and "transport=ucx" in line["case"]
    assert [(p["paper"], p["value"], p["ours"]) for p in line["papers"]] == [("002", "3.19", "0.45")]
    (line,) = report._summary(sources.RowSource("r", [r for r in rows if r["parameters"]["transport"] != "ucx"], []), {})
    (needs,) = line["papers"]
    assert (needs["item"], needs["have"]) == ("Fig. 1", "transport ob1-tcp") and "3.19" not in str(needs)


def test_summary_reads_the_runs_hardware_once_for_all_its_checks(monkeypatch):
    from yeebench.results import report
    calls, hardware = [], report._hardware_by_testcase
    monkeypatch.setattr(report, "_hardware_by_testcase", lambda run: calls.append(run) or hardware(run))
    rows = _rows("r", [("OsuPt2Pt", {"benchmark": "osu_latency"}, "latency_1B", "us", "lower", [0.4]),
                       ("StreamTriad", {"threads": 1}, "triad_bw", "GB/s", "higher", [90]),
                       ("FdtdScaling", {"ranks": 4}, "mcells_per_s", "Mcells/s", "higher", [1600])])
    lines = report._summary(sources.RowSource("r", rows, []), {})
    assert len(lines) == 3 and len(calls) == 1


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


# Run inside the page by the browser's layout engine: text clipped by its box, boxes wider than the
# page, and labels or plots that overlap their neighbours. The result lands in <pre id="layout">.
LAYOUT_PROBE = r"""<script>
window.addEventListener('load', () => {
  const problems = [];
  const name = el => el.tagName + (el.className ? '.' + el.className : '') + ' "' + el.textContent.trim().slice(0, 40) + '"';
  const height = document.documentElement.scrollHeight;  // as the reader first sees it: tables collapsed
  document.querySelectorAll('details').forEach(d => d.open = true);
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > width + 1) problems.push('page scrolls sideways');
  document.querySelectorAll('h1,h2,h3,th,td,dt,dd,figcaption,summary,li,p').forEach(el => {
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflow !== 'visible') problems.push('clipped ' + name(el));
    const r = el.getBoundingClientRect();
    if (r.width > 0 && (r.right > width + 1 || r.left < -1)) problems.push('outside the page ' + name(el));
  });
  // a header or term broken inside a word ("verd / ict"): reads as two words
  document.querySelectorAll('th,dt,summary,h1,h2,h3,table.summary td:first-child,table.signoff td:first-child')
      .forEach(el => {
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      for (const m of node.data.matchAll(/\S+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        if (new Set([...range.getClientRects()].map(r => Math.round(r.top))).size > 1)
          problems.push('word broken ' + name(el) + ' at "' + m[0] + '"');
      }
    }
  });
  // a chart of one bar or one point says less than the table's row
  document.querySelectorAll('figure').forEach(f => {
    if (!(Number(f.dataset.marks) >= 2)) problems.push('chart of ' + (f.dataset.marks || 'unknown') + ' mark(s) ' + name(f));
  });
  const overlap = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const groups = [...document.querySelectorAll('tr')].map(tr => [...tr.children])
      .concat([[...document.querySelectorAll('figure')]], [[...document.querySelectorAll('dt, dd')]]);
  groups.forEach(items => {
    const rects = items.map(el => el.getBoundingClientRect());
    for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++)
      if (overlap(rects[i], rects[j])) problems.push('overlap ' + name(items[i]) + ' / ' + name(items[j]));
  });
  const out = document.createElement('pre');
  out.id = 'layout';
  out.textContent = JSON.stringify({checked: document.querySelectorAll('td,th,figure').length, problems,
                                    height});
  document.body.appendChild(out);
});
</script>"""

def _probe(browser, page, tmp_path, width):
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={width},1600"]
    dom = subprocess.run(flags + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="layout">(.*?)</pre>', dom.stdout, re.S)
    assert found, "the layout probe did not run"
    return flags, dom.stdout, json.loads(html.unescape(found.group(1)))


def test_layout_probe_sees_clipping_and_overlap(tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (Debian package 'chromium')")
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><table><tr><td style='max-width:30px;overflow:hidden;white-space:nowrap'>"
                   "a long parameter label that does not fit</td></tr></table>"
                   "<figure style='width:300px;height:100px'>a</figure>"
                   "<figure style='width:300px;height:100px;margin-top:-80px'>b</figure>"
                   + LAYOUT_PROBE + "</body></html>")
    _, _, layout = _probe(browser, bad, tmp_path, 800)
    assert any(p.startswith("clipped TD") for p in layout["problems"])
    assert any(p.startswith("overlap FIGURE") for p in layout["problems"])


SCREENSHOTS = Path(__file__).resolve().parents[4] / "build" / "report-screenshots"
SMOKE_RUN = FIXTURES / "reports" / "suite_smoke_run.json"


def _page_height(dom):
    found = re.search(r'"height":(\d+)', dom)
    return min(int(found.group(1)) + 40, 16000) if found else 1600


def check_layout(report, tmp_path, width, shot_name):
    """The report in headless Chromium at `width`: no layout problem, every section, a screenshot kept."""
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (Debian package 'chromium'); cannot render the report")
    probed = tmp_path / "probed.html"
    probed.write_text(report.read_text().replace("</body>", LAYOUT_PROBE + "</body>"))
    flags, dom, layout = _probe(browser, probed, tmp_path, width)
    assert layout["checked"] > 50 and layout["problems"] == [], layout["problems"][:10]
    for heading in ("Summary", "Plots", "All figures", "Provenance"):
        assert re.search(rf"<h2>{heading}</h2>", dom), heading
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOTS / f"{shot_name}-{width}px.png"
    # the whole page (a window as tall as the report), so that every figure is in the picture
    tall = [f for f in flags if not f.startswith("--window-size")] + [f"--window-size={width},{_page_height(dom)}"]
    subprocess.run(tall + [f"--screenshot={shot}", report.as_uri()], capture_output=True, text=True, timeout=180)
    data = shot.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 50_000  # a blank page compresses to a few kB


@pytest.mark.parametrize("width", [1280, 800])
def test_report_layout_in_headless_chromium(tmp_path, width):
    check_layout(_report(tmp_path), tmp_path, width, "report")


def report_of(reframe_report, tmp_path):
    run = ingested(tmp_path, reframe_report)
    out = tmp_path / "report.html"
    proc = run_cli("results", "report", run, "-o", out)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.mark.parametrize("width", [1280, 800])
def test_layout_of_a_recorded_smoke_run(tmp_path, width):
    """`make run` on a 2-core machine (ReFrame 4.10): the charts real runs give, not only the fixtures'."""
    check_layout(report_of(SMOKE_RUN, tmp_path), tmp_path, width, "smoke-run-recorded")


@pytest.mark.parametrize("width", [1280, 800])
def test_layout_of_this_checkouts_smoke_run(tmp_path, width):
    """The report of the smoke run the `test-suite` stage just made (make test-suite-report)."""
    report = os.environ.get("YEEBENCH_SUITE_REPORT")
    if not report:
        pytest.skip("YEEBENCH_SUITE_REPORT is not set: `make test-suite-report` sets it after `make test-suite`")
    assert Path(report).is_file(), f"{report}: the test-suite stage wrote no report"
    assert _chromium(), "chromium is not installed (Debian package 'chromium', in `make deps-test`)"
    check_layout(report_of(Path(report), tmp_path), tmp_path, width, "smoke-run")


def test_report_refuses_unreadable_run(tmp_path):
    run = ingested(tmp_path)
    (run / "provenance.json").write_text("{")
    proc = run_cli("results", "report", run, "-o", tmp_path / "r.html")
    assert proc.returncode == 2 and "provenance" in proc.stderr and not (tmp_path / "r.html").exists()


def test_suite_report_fixture_gives_solver_scaling_and_numa_figures(tmp_path):
    """A real smoke run of the suite's fdtd and numa checks (reframe -C reframe/config/settings.py --tag smoke)."""
    from results_testutil import FIXTURES
    run = ingested(tmp_path, FIXTURES / "reports" / "suite_smoke_fdtd_numa.json")
    rows = store.read_rows(run / "rows.jsonl")
    assert {r["direction_source"] for r in rows} == {"declared"}
    weak = [r for r in rows if r["check"] == "FdtdWeakScaling" and r["metric"] == "mcells_per_s"]
    assert sorted(r["parameters"]["cores_used"] for r in weak) == [1, 2]
    paths, notes = plots.write_figures([sources.load_source(run)], tmp_path / "png")
    # the check's own parallel_efficiency against cores; bandwidth per policy
    assert {"FdtdWeakScaling_efficiency.png", "NumaBandwidth_policy.png"} <= {p.name for p in paths}
    # one NUMA policy measured: a number in the table and a line saying so, not a chart of one bar
    assert not any("NumaSolver" in p.name for p in paths)
    assert "NumaSolver: one case measured (policy=localalloc): its mcells_per_s is in the table" in notes


def test_covarying_parameters_do_not_split_scaling_lines():
    rows = _rows("w", [("Weak", {"cores_used": 1, "grid": 48, "t": 1}, "mcells_per_s", "Mcells/s", "higher", [10]),
                       ("Weak", {"cores_used": 2, "grid": 60, "t": 1}, "mcells_per_s", "Mcells/s", "higher", [19])])
    assert plots._covarying([(0, r) for r in rows]) == {"cores_used", "grid"}


def test_collective_names():
    assert plots.collective_name({"parameters": {"case": "bcast:tuned"}, "check": "OsuCollective"}) == "bcast"
    assert plots.collective_name({"parameters": {}, "check": "OsuAllreduce"}) == "allreduce"
    assert plots.collective_name({"parameters": {}, "check": "Pt2Pt"}) == ""


def test_report_to_a_directory_is_a_clean_error(tmp_path):
    run = ingested(tmp_path)
    target = tmp_path / "a-directory"
    target.mkdir()
    proc = run_cli("results", "report", run, "-o", target)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("yeebench results report: error:") and str(target) in proc.stderr
