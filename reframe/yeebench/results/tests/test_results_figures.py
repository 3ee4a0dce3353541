"""One figure per experiment: what each draws, what it leaves to the table (with a line saying why),
the summary's key figure chosen by the experiment, and skips listed with the check's reason."""
import copy
import json

import matplotlib.pyplot as plt

from results_testutil import REPORT_A, ingested, run_cli
from test_results_report import _rows, check_layout
from yeebench.results import figures, plots, report, sources


def _source(entries):
    return sources.RowSource("r", _rows("r", entries), [])


def test_marks_count_bars_and_distinct_points_not_reference_lines():
    fig, ax = plt.subplots()
    ax.bar([0], [3.0])
    assert figures.common.marks(fig) == 1
    ax.bar([1], [4.0])
    assert figures.common.marks(fig) == 2
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [1, 2, 3])
    ax.axhline(1.0)
    assert figures.common.marks(fig) == 3
    plt.close("all")


def _binding_sweep():
    rates = {"per_node": 250, "per_socket": 350, "per_core": 640}
    entries = [("FdtdBindingSweep", {"nodes": 0}, f"{case}_mcells_per_s", "Mcells/s", "higher", [v])
               for case, v in rates.items()]
    entries += [("FdtdBindingSweep", {"nodes": 0}, f"{case}_over_per_core", "x", "higher", [v / 640])
                for case, v in rates.items() if case != "per_core"]
    return entries


def test_binding_sweep_is_one_chart_of_its_placements(tmp_path):
    paths, notes = plots.write_figures([_source(_binding_sweep())], tmp_path)
    assert [p.name for p in paths] == ["FdtdBindingSweep_placement.png"] and notes == []


def test_an_experiment_whose_parameters_do_not_vary_is_a_line_not_a_chart(tmp_path):
    src = _source([("FdtdJobBalance", {"load": 1.0}, "mcells_per_s", "Mcells/s", "higher", [200, 210])])
    paths, notes = plots.write_figures([src], tmp_path)
    assert paths == []
    assert notes == ["FdtdJobBalance: one point measured (load=1.0); the figure needs two or more: see the table"]


def test_job_balance_draws_rate_against_processes_per_core(tmp_path):
    src = _source([("FdtdJobBalance", {"load": load, "num_tasks": int(4 * load)}, "mcells_per_s", "Mcells/s",
                    "higher", [100 * load]) for load in (0.5, 1.0, 2.0)])
    paths, notes = plots.write_figures([src], tmp_path)
    assert [p.name for p in paths] == ["FdtdJobBalance_load.png"] and notes == []


def test_summary_shows_the_comparison_ratio_of_a_sweep():
    (line,) = report._summary(_source(_binding_sweep()), {})
    assert line["metric"] == "per_socket_over_per_core" and line["value"] == "0.5469"


def test_summary_shows_scaling_efficiency_at_the_most_cores_not_the_trivial_best():
    entries = [("FdtdStrongScaling", {"cores_used": c, "num_tasks": c}, "parallel_efficiency", "%", "higher", [e])
               for c, e in ((1, 100.0), (2, 80.0), (4, 60.0))]
    (line,) = report._summary(_source(entries), {})
    assert line["metric"] == "parallel_efficiency" and line["value"] == "60"
    assert line["case"] == "at cores_used=4, the largest of 3"


def test_key_figure_verdict_is_its_own_not_the_worst_of_the_check():
    rows = _binding_sweep()
    src = _source(rows)
    keys = {k[5]: k for k in report.compare.group_rows(src.rows)}
    verdicts = {keys["per_socket_over_per_core"]: {"verdict": "improved"},
                keys["per_node_mcells_per_s"]: {"verdict": "regressed"}}
    (line,) = report._summary(src, verdicts)
    assert line["verdict"] == "improved" and line["detail"] == "other figures: 1 regressed"


def test_skips_and_cases_left_out_are_listed_with_the_checks_reason(tmp_path):
    data = json.loads(REPORT_A.read_text())
    cases = data["runs"][0]["testcases"]
    skipped = copy.deepcopy(cases[-1])
    skipped.update(result="skip", fail_reason=None, fail_phase=None, perfvalues={}, unique_name="FixtureNodes_0",
                   display_name="FixtureNodes %ranks=2",
                   observations={"skip_reason": "node scaling needs 2 nodes or more; local:default has 1"})
    cases.append(skipped)
    cases[0]["observations"] = {"skipped_cases": {"ucc": "this Open MPI has no coll/ucc component (ompi_info)"}}
    path = tmp_path / "with-skips.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "r.html"
    assert run_cli("results", "report", ingested(tmp_path, path), "-o", out).returncode == 0
    text = out.read_text()
    assert "<b>FixtureNodes</b>: node scaling needs 2 nodes or more; local:default has 1" in text
    assert "<b>FixturePt2pt, case ucc</b>: this Open MPI has no coll/ucc component (ompi_info)" in text
    assert "no reason" not in text


def test_registry_names_a_key_figure_for_every_check_it_draws():
    for check, module in figures.REGISTRY.items():
        assert figures.key_patterns(check), check
        assert callable(module.draw)


def test_acceptance_checks_are_the_sign_off_table_not_charts(tmp_path):
    data = json.loads(REPORT_A.read_text())
    cases = data["runs"][0]["testcases"]
    for case in cases:
        if case["display_name"].startswith("FixtureSolver"):
            case["display_name"] = case["display_name"].replace("FixtureSolver", "AcceptanceScaling")
        if case["display_name"].startswith("FixtureFailing"):
            case["display_name"] = "AcceptanceStorage"
            case["fail_reason"] = "storage bandwidth 12 MB/s, below the required 100 MB/s\nmore"
    cases[0].update(display_name="AcceptanceMulticast", acceptance_verdict="NOT MEASURED",
                    acceptance_reason="every receiver ran on the sender's node; run on 2 or more nodes")
    path = tmp_path / "acceptance.json"
    path.write_text(json.dumps(data))
    run = ingested(tmp_path, path)
    paths, _ = plots.write_figures([sources.load_source(run)], tmp_path / "png")
    assert not any("Acceptance" in p.name for p in paths)
    out = tmp_path / "r.html"
    assert run_cli("results", "report", run, "-o", out).returncode == 0
    text = out.read_text()
    assert "<h2>Acceptance sign-off</h2>" in text
    assert "<td>FAIL</td>" in text and "storage bandwidth 12 MB/s, below the required 100 MB/s</td>" in text
    assert "<td>PASS</td>" in text and "mcells_per_s" in text
    assert ("<td>NOT MEASURED</td>\n        <td>every receiver ran on the sender&#39;s node; run on 2 or more nodes</td>"
            in text)  # passed, but measured nothing: not a PASS
    check_layout(out, tmp_path, 800, "acceptance-fixture")


def _texts_and_labels(monkeypatch, src, tmp_path):
    """Draw the sources and keep what the saved figure says: texts on the axes, legend entries."""
    seen = {}

    def keep(fig, axes, title, path):
        seen["texts"] = [t.get_text() for ax in fig.axes for t in ax.texts]
        seen["legend"] = [name for ax in fig.axes for name in ax.get_legend_handles_labels()[1]]
        seen["xlabels"] = [ax.get_xlabel() for ax in fig.axes]
        seen["ylabels"] = [ax.get_ylabel() for ax in fig.axes]
        figures.common.close(fig)
        return path

    monkeypatch.setattr(figures.common, "save", keep)
    plots.write_figures([src], tmp_path)
    return seen


def test_the_ratio_on_a_bar_is_the_checks_own(monkeypatch, tmp_path):
    entries = [e if e[2] != "per_socket_over_per_core" else e[:5] + ([0.5],) for e in _binding_sweep()]
    seen = _texts_and_labels(monkeypatch, _source(entries), tmp_path)
    assert "x0.50" in seen["texts"] and "base" in seen["texts"]   # 350/640 would read x0.55
    assert all("[" in y for y in seen["ylabels"])                  # a unit on the value axis


def test_pt2pt_lines_are_named_by_locality_and_transport(monkeypatch, tmp_path):
    entries = []
    for locality, alpha in (("intra", 0.4), ("inter", 3.0)):
        params = {"locality": locality, "transport": "ob1-tcp", "num_tasks_per_node": 2 if locality == "intra" else 1}
        entries += [("NetPIPEPt2Pt", params, "hockney_alpha", "us", "lower", [alpha]),
                    ("NetPIPEPt2Pt", params, "hockney_beta", "ns/B", "lower", [0.2]),
                    ("NetPIPEPt2Pt", params, "latency_1B", "us", "lower", [alpha]),
                    ("NetPIPEPt2Pt", params, "peak_bw", "MB/s", "higher", [4000])]
    seen = _texts_and_labels(monkeypatch, _source(entries), tmp_path)
    # named by what differs between the lines, not by what only follows from it (tasks per node)
    assert any(t.startswith("locality=inter: fit 3 us") for t in seen["legend"])
    assert any(t.startswith("locality=intra: fit 0.4 us") for t in seen["legend"])
    assert not any("num_tasks_per_node" in t for t in seen["legend"])
    assert seen["xlabels"] == ["message size [B]"] * 2


def test_a_baseline_is_drawn_beside_the_run_and_named(monkeypatch, tmp_path):
    seen = {}

    def keep(fig, axes, title, path):
        seen[path.name] = [name for ax in fig.axes for name in ax.get_legend_handles_labels()[1]]
        figures.common.close(fig)
        return path

    monkeypatch.setattr(figures.common, "save", keep)
    run, base = _source(_binding_sweep()), sources.RowSource("b", _rows("b", _binding_sweep()), [])
    plots.write_figures([run], tmp_path, baseline=base)
    assert seen["FdtdBindingSweep_placement.png"] == ["--map-by [r]", "--map-by [baseline b]"]


def test_a_sweep_over_node_counts_adds_its_ratios_against_the_node_count(tmp_path):
    entries = _binding_sweep()
    for n, scale in ((1, 1.2), (2, 1.1), (4, 1.0)):
        entries += [("FdtdBindingSweep", {"nodes": 0}, f"{case}_over_per_core_{n}_nodes", "x", "higher", [v * scale / 640])
                    for case, v in (("per_node", 250), ("per_socket", 350))]
    paths, notes = plots.write_figures([_source(entries)], tmp_path)
    assert sorted(p.name for p in paths) == ["FdtdBindingSweep_placement.png", "FdtdBindingSweep_placement_nodes.png"]
    assert notes == []


def test_the_osu_node_curve_draws_each_implementations_time_over_tuned_against_the_node_count(tmp_path):
    entries = [("OsuCollectiveNodeCurve", {"case": case}, f"over_tuned_{n}_nodes", "x", "lower", [v])
               for case, values in (("allreduce:han", (1.0, 0.95, 0.9)), ("allreduce:basic", (1.1, 1.3, 1.6)))
               for n, v in zip((1, 2, 4), values)]
    paths, notes = plots.write_figures([_source(entries)], tmp_path)
    assert [p.name for p in paths] == ["OsuCollectiveNodeCurve_nodes.png"] and notes == []
    one = [e for e in entries if e[2] == "over_tuned_1_nodes"]
    paths, notes = plots.write_figures([_source(one)], tmp_path / "one")
    assert paths == [] and notes == ["OsuCollectiveNodeCurve: one node count measured, no curve over node counts: see the table"]
