"""The papers' mapping: one data file, the per-paper pages agree with it, the report links to them."""
import shutil
import subprocess
import sys
from pathlib import Path

from yeebench.results import paper_figures as pf

REFRAME = Path(__file__).resolve().parents[3]
PAGES = REFRAME / "papers"


def test_every_page_table_equals_the_data():
    assert pf.main([str(PAGES), "--check"]) == 0


def test_a_page_row_that_disagrees_with_the_data_fails(tmp_path, capsys):
    pages = tmp_path / "papers"
    shutil.copytree(PAGES, pages)
    page = pages / "000.md"
    page.write_text(page.read_text().replace("5300 Mcells/s", "5301 Mcells/s", 1))
    assert pf.main([str(pages), "--check"]) == 1
    assert "000.md" in capsys.readouterr().err
    assert pf.main([str(pages), "--write"]) == 0 and pf.main([str(pages), "--check"]) == 0


def test_a_page_without_markers_is_a_clean_error(tmp_path, capsys):
    pages = tmp_path / "papers"
    shutil.copytree(PAGES, pages)
    (pages / "002.md").write_text("# no table here\n")
    assert pf.main([str(pages), "--check"]) == 2
    assert "002.md has no mapping markers" in capsys.readouterr().err


def test_readme_commands_run_as_written():
    for line in (PAGES / "README.md").read_text().splitlines():
        if line.startswith("    cd reframe && "):
            command = line.strip().split("#")[0].replace("cd reframe && python3", sys.executable)
            done = subprocess.run(command.split(), cwd=REFRAME, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, (command, done.stderr)


def test_every_experiment_is_well_formed():
    assert set(pf.papers()) == {"000", "001", "002", "003", "004"}
    for exp in pf.EXPERIMENTS:
        assert exp.status in pf.STATUSES, exp
        if exp.status in ("like for like", "instead"):
            assert exp.check, f"{exp.paper} {exp.item}: a measured row names its check"
        else:
            assert exp.how, f"{exp.paper} {exp.item}: an unmeasured row says why"
        for pub in exp.published:
            assert pub.value > 0 and pub.unit and pub.what
    items = [(e.paper, e.item) for e in pf.EXPERIMENTS]
    assert len(items) == len(set(items))
    assert len({(e.paper, pf.anchor(e.item)) for e in pf.EXPERIMENTS}) == len(items)


def test_paper_003_lists_all_17_tests():
    items = {e.item for e in pf.EXPERIMENTS if e.paper == "003"}
    assert {f"test {i}" for i in range(1, 18)} <= items


def test_out_of_reach_experiments_are_stated():
    text = " ".join(f"{e.title} {e.how}" for e in pf.EXPERIMENTS if e.status in ("not reproducible", "instead"))
    for name in ("FCA", "Core-Direct", "switch multicast", "MXM", "LS-DYNA", "GEMS", "antenna",
                 "particles", "EMANE", "VM"):
        assert name in text, name


def _covered(items):
    """{('Fig'|'Table', n)} named by items such as 'Fig. 6 (per node)', 'Figs. 8-10', 'Table 1 (latency)'."""
    import re
    out = set()
    for item in items:
        m = re.match(r"(Figs?|Table)\.? (\d+)(?:-(\d+))?", item)
        if m:
            kind = "Table" if m.group(1) == "Table" else "Fig"
            out |= {(kind, n) for n in range(int(m.group(2)), int(m.group(3) or m.group(2)) + 1)}
    return out


def test_every_table_and_figure_of_the_papers_has_a_row():
    import re
    seeds = REFRAME.parent.parent / "shared" / "seeds"
    if not seeds.is_dir():
        import pytest
        pytest.skip("the papers are not beside this checkout (../shared/seeds)")
    for paper in pf.papers():
        text = next(seeds.glob(f"{paper}_*.txt")).read_text()
        captions = {("Table" if kind == "Table" else "Fig", int(n))
                    for kind, n in re.findall(r"^(Fig\.|Figure|Table) ?(\d+)", text, re.M)}
        missing = captions - _covered(e.item for e in pf.EXPERIMENTS if e.paper == paper)
        assert not missing, f"paper {paper}: no row for {sorted(missing)}"


def _shown(figures):
    return [f.value for f in figures if f.value is not None]


def test_for_row_gives_the_published_value_and_its_page():
    row = {"check": "FdtdBindingSweep", "metric": "per_core_mcells_per_s_18_nodes", "parameters": {}}
    (fig,) = pf.for_row(row)
    assert (fig.paper, fig.value, fig.unit, fig.page, fig.anchor) == (
        "000", 2700, "Mcells/s", "reframe/papers/000.md", "fig-6-per-core")
    assert pf.for_row(dict(row, metric="halo_share")) == []
    # a published value belongs to its case: paper 002's 8-process bytes only beside ranks=8
    stats = {"check": "FdtdMessageStats", "metric": "halo_bytes_per_rank_per_step_max", "parameters": {"ranks": 8}}
    assert _shown(pf.for_row(stats)) == [196244]
    assert pf.for_row(dict(stats, parameters={"ranks": 4})) == []
    # the sum over ranks is not the paper's per-process figure: nothing beside it
    assert pf.for_row(dict(stats, metric="halo_bytes_per_step")) == []


def test_a_figure_the_run_cannot_match_says_what_it_needs():
    one_node = {"check": "FdtdBindingSweep", "metric": "per_core_mcells_per_s",
                "parameters": {"num_tasks": 2, "num_tasks_per_node": 2}}
    (fig,) = pf.for_row(one_node)
    assert fig.value is None and (fig.needs, fig.have) == ("18 nodes, one rank per core", "1 node")


def test_paper_001s_16_rank_finding_and_one_sixth_only_beside_the_hardware_they_need():
    finding = {"check": "IoOutputPaper", "metric": "hdf5_zlib_over_binary", "parameters": {}}
    one_node = {"sockets_per_node": 1, "numa_nodes_per_node": 1, "nodes": 1, "ranks": 2}
    assert _shown(pf.for_row(finding, one_node)) == [] and _shown(pf.for_row(finding)) == []
    assert [f.have for f in pf.for_row(finding, one_node)] == ["2 ranks"]
    assert _shown(pf.for_row(finding, dict(one_node, ranks=16))) == [1.0]
    share = {"check": "IoOutputPaper", "metric": "halo_over_compute", "parameters": {}}
    assert _shown(pf.for_row(share, one_node)) == []
    assert [round(v, 4) for v in _shown(pf.for_row(share, dict(one_node, nodes=2)))] == [0.1667]


def test_report_links_the_published_figure_to_its_page(tmp_path):
    from results_testutil import run_cli, synthetic_run
    run = synthetic_run(tmp_path, "r1", {"mcells_per_s": [2000, 2100, 2050]}, check="FdtdNumaSweep",
                        params={"placement": "per-socket"}, directions={"mcells_per_s": "higher"},
                        units={"mcells_per_s": "Mcells/s"})
    out = tmp_path / "report.html"
    proc = run_cli("results", "report", run, "-o", out)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    link = '<a href="reframe/papers/000.md#fig-7-with-numa">paper 000, Fig. 7 (with NUMA)</a>: <b>5400</b>'
    assert link not in text
    two_numa = {"sockets_per_node": 2, "numa_nodes_per_node": 2, "nodes": 18}
    for name, hardware, shown in (("r2", two_numa, True), ("r3", dict(two_numa, numa_nodes_per_node=1), False),
                                  ("r4", dict(two_numa, nodes=1), False), ("r5", None, False)):
        # Fig. 7 needs 18 nodes of 2 NUMA nodes: elsewhere (or with no record) the published value is never shown
        run = synthetic_run(tmp_path, name, {"localalloc_mcells_per_s": [2000, 2100]}, check="FdtdNumaSweep",
                            params={"placement": "per-socket"}, directions={"localalloc_mcells_per_s": "higher"},
                            units={"localalloc_mcells_per_s": "Mcells/s"}, hardware=hardware)
        proc = run_cli("results", "report", run, "-o", out)
        assert proc.returncode == 0, proc.stderr
        text = out.read_text()
        assert (link in text) is shown, name
        assert ("5400" in text) is shown, name
        if shown:
            assert "here localalloc_mcells_per_s <b>2050</b> Mcells/s" in text
        else:
            assert "needs 18 nodes, 2 NUMA nodes per node or more" in text, name
            assert ("(this run: 1 node)" in text) is (name == "r4"), name


def test_a_comparison_that_cannot_differ_has_no_published_figure():
    one = {"sockets_per_node": 1, "numa_nodes_per_node": 1, "nodes": 1}
    two = {"sockets_per_node": 2, "numa_nodes_per_node": 2, "nodes": 18}
    for check, metric in (("FdtdBindingSweep", "per_socket_mcells_per_s"), ("FdtdBindingSweep", "per_socket_over_per_node"),
                          ("FdtdBindingSweep", "per_node_mcells_per_s"), ("FdtdNumaSweep", "localalloc_over_unpinned"),
                          ("FdtdNodeScaling", "efficiency_vs_4_nodes")):
        row = {"check": check, "metric": metric, "parameters": {"placement": "per-socket"}}
        assert _shown(pf.for_row(row, one)) == [] and _shown(pf.for_row(row)) == [], (check, metric)
        assert _shown(pf.for_row(row, two)), (check, metric)
    unstated = [f"{e.paper} {e.item}" for e in pf.EXPERIMENTS if e.published and "beside" not in pf._how(e)]
    assert not unstated, unstated


def test_every_named_check_exists_in_the_check_files():
    import re
    defined = set()
    for path in (REFRAME / "yeebench" / "checks").glob("*/*.py"):
        defined |= set(re.findall(r"^class (\w+)\(", path.read_text(), re.M))
    # a row may name a command instead (`yeebench acceptance availability`)
    missing = sorted({e.check for e in pf.EXPERIMENTS if e.check and " " not in e.check} - defined)
    assert not missing, f"rows name checks that reframe/yeebench/checks does not define: {missing}"


def _osu_latency_row():
    return {"check": "OsuPt2Pt", "metric": "latency_1B", "value": 0.45, "unit": "us", "testcase": "t",
            "parameters": {"benchmark": "osu_latency", "locality": "inter", "buffers": "host", "transport": "ucx",
                           "num_tasks": 2, "num_tasks_per_node": 1}}


def test_a_row_is_held_only_against_its_own_checks_rows(monkeypatch):
    looked_at, selects = [], pf._selects

    def counting(exp, row):
        looked_at.append(exp.check)
        return selects(exp, row)

    monkeypatch.setattr(pf, "_selects", counting)
    found = pf.for_row(_osu_latency_row())
    assert [(p.paper, p.value) for p in found] == [("002", 3.19)]
    assert looked_at and set(looked_at) == {"OsuPt2Pt"}


def test_a_check_pattern_and_a_replaced_table_still_select_in_table_order(monkeypatch):
    base = next(e for e in pf.EXPERIMENTS if e.check == "OsuPt2Pt" and e.metric == "latency_1B")
    wild = base._replace(item="Fig. 99", check="Osu*2Pt")
    monkeypatch.setattr(pf, "EXPERIMENTS", (wild,) + pf.EXPERIMENTS)
    assert [p.item for p in pf.for_row(_osu_latency_row())] == ["Fig. 99", base.item]
    monkeypatch.setattr(pf, "EXPERIMENTS", pf.EXPERIMENTS[1:])
    assert [p.item for p in pf.for_row(_osu_latency_row())] == [base.item]
