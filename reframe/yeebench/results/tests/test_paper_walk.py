"""Every paper row with a published value, walked against recorded rows on 1, 2, 4, 16 and 18 nodes: the
report prints the paper's number only where the run meets the figure's conditions, and otherwise says
what the figure needs. The rows are the smoke fixture's (suite_smoke_run.json), their node counts changed."""
import json
import sys
from pathlib import Path

import pytest

from yeebench.results import ingest, paper_conditions, report
from yeebench.results import paper_figures as pf

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixtures" / "reports" / "suite_smoke_run.json"
NODES = (1, 2, 4, 16, 18)
#: A machine of 2 sockets and 2 NUMA nodes per node at distance 16, host buffers over UCX, the offloading
#: collective component: every condition but the node count (and those no run of ours can meet) is met.
SITE = {"transport": "ucx", "buffers": "host"}
TABLE_16 = [[10, 16], [16, 10]]
ALL = set(NODES)
#: (paper, item): {node count: the published value printed there}; every other count: a `needs` line.
EXPECTED = {
    ("000", "Table 2"): {n: 33462.93 * pf.MBPS for n in ALL},
    ("000", "Table 2 (between nodes)"): {2: 8822.02 * pf.MBPS},
    ("000", "Fig. 6"): {18: 5300}, ("000", "Fig. 6 (per node)"): {18: 4900}, ("000", "Fig. 6 (per core)"): {18: 2700},
    ("000", "Fig. 6 (ratio)"): {18: 5300 / 2700}, ("000", "Fig. 6 (socket over node)"): {18: 5300 / 4900},
    ("000", "Fig. 6 (rankfile ratio)"): {18: 5300 / 2700}, ("000", "Fig. 7"): {18: 5400 / 3400},
    ("000", "Fig. 7 (with NUMA)"): {18: 5400}, ("000", "Fig. 7 (without)"): {18: 3400},
    ("000", "Fig. 11"): {4: 1.5}, ("000", "Fig. 12"): {18: 90},
    ("001", "Fig. 1"): {n: 8 for n in (4, 16, 18)},            # 8 ranks or more: 2 a node on 4 nodes
    ("001", "finding"): {n: 1.0 for n in (16, 18)},            # 16 ranks or more
    ("001", "text"): {n: 1 / 6 for n in (2, 4, 16, 18)},
    ("001", "text (spread)"): {n: 10 for n in ALL},           # 2 ranks or more: 2 a node
    ("002", "Fig. 1"): {2: 3.19}, ("002", "Fig. 1 (4 KB)"): {2: 11.75}, ("002", "Fig. 2"): {2: 1019},
    ("002", "Fig. 3"): {n: 1.3 for n in ALL},                 # 64 ranks on nodes of 2 cores: full packing spans nodes
    ("002", "Table 1 (8 bytes)"): {n: 196244 for n in ALL}, ("002", "Table 1 (16 bytes)"): {n: 194136 for n in ALL},
    ("002", "Table 1 (64 bytes)"): {n: 192436 for n in ALL},
    ("002", "Table 1 (8 latency)"): {n: 7.4 for n in ALL}, ("002", "Table 1 (16 latency)"): {n: 6.4 for n in ALL},
    ("002", "Table 1 (64 latency)"): {n: 4.5 for n in ALL},   # 2 ranks a node, as the paper's table
    ("002", "Table 1 (8 run time)"): {}, ("002", "Table 1 (16 run time)"): {}, ("002", "Table 1 (64 run time)"): {},
    ("002", "text (MPI calls)"): {n: 8 for n in (4, 16, 18)},
    ("003", "NUMA distances"): {n: 60 for n in ALL}, ("003", "NUMA distances (measured)"): {n: 60 for n in ALL},
    ("003", "requirement (bandwidth)"): {n: 125 for n in ALL - {1}},   # between nodes: 2 or more
    ("003", "requirement (latency)"): {n: 3 for n in ALL - {1}}, ("003", "switch latency"): {n: 0.546 for n in ALL - {1}},
    ("004", "Fig. 5"): {2: 1.0, 4: 1.0, 16: 1.15}, ("004", "text (32 nodes)"): {},   # 32 nodes: no walked count
    ("004", "Fig. 6 (Allreduce)"): {16: 0.9}, ("004", "Fig. 6 (Bcast)"): {16: 0.9},
}


def _fixture_rows():
    rows, _ = ingest.build_rows(json.loads(FIXTURE.read_text()), "walk")
    return {row["check"]: row for row in rows}


def _concrete(pattern):
    return pattern.replace("*", "ucc")   # a name the pattern stands for (an implementation, a case)


def _row(exp, fixture, nodes):
    """The fixture's row of the experiment's check (a sweep's where the fixture has none) on `nodes` nodes."""
    base = fixture.get(exp.check) or dict(fixture["FdtdBindingSweep"], check=exp.check)
    params = dict(base["parameters"])
    for key, value in exp.params.items():
        params[key] = int(value) if value.isdigit() else _concrete(value.replace("allreduce:*", "allreduce:ucc"))
    params.update({k: v for k, v in SITE.items() if k in params or exp.check.startswith("Osu")})
    per_node = params.get("num_tasks_per_node") or 1
    params.update(num_tasks=nodes * per_node, num_tasks_per_node=per_node)
    return dict(base, parameters=params, metric=_concrete(exp.metric), testcase=f"{exp.check}-{nodes}")


def _hardware(row, nodes):
    return {row["testcase"]: {"nodes": nodes, "sockets_per_node": 2, "numa_nodes_per_node": 2,
                              "ranks": row["parameters"]["num_tasks"]},
            report.RUN_FACTS: {"numa_distances": TABLE_16}}


def _lines(exp, fixture, nodes):
    row = _row(exp, fixture, nodes)
    return [p for p in report._published([(None, [row])], _hardware(row, nodes))
            if (p["paper"], p["item"]) == (exp.paper, exp.item)]


def test_every_published_value_appears_only_where_the_run_meets_its_figure():
    fixture = _fixture_rows()
    walked = [e for e in pf.EXPERIMENTS if e.published and " " not in e.check]
    assert {(e.paper, e.item) for e in walked} == set(EXPECTED), "a row with a published value is not walked"
    wrong = []
    for exp in walked:
        for nodes in NODES:
            lines = _lines(exp, fixture, nodes)
            want = EXPECTED[(exp.paper, exp.item)].get(nodes)
            shown = [float(p["value"]) for p in lines if "needs" not in p]
            needs = [p for p in lines if "needs" in p]
            if want is None and (shown or len(needs) != 1):
                wrong.append(f"{exp.paper} {exp.item} on {nodes} nodes: shows {shown}, {len(needs)} needs line(s)")
            elif want is not None and (shown != [float(pf._fmt(want))] or needs):
                wrong.append(f"{exp.paper} {exp.item} on {nodes} nodes: shows {shown}, wanted {want:.4g}")
            if exp.status == "instead" and any(not p["instead"] for p in lines):
                wrong.append(f"{exp.paper} {exp.item}: an instead pair printed without its reason")
    assert not wrong, "\n".join(wrong)


def test_a_needs_line_names_what_the_run_lacked():
    fixture = _fixture_rows()
    fig6 = next(e for e in pf.EXPERIMENTS if e.item == "Fig. 6 (per core)")
    (line,) = _lines(fig6, fixture, 1)
    assert (line["needs"], line["have"]) == ("18 nodes, one rank per core", "1 node")
    fig5 = next(e for e in pf.EXPERIMENTS if (e.paper, e.item) == ("004", "Fig. 5"))
    (line,) = _lines(fig5, fixture, 8 + 1)
    assert line["needs"].endswith("2 to 4 nodes or 8 nodes or 16 nodes") and line["have"] == "9 nodes"
    fig3 = next(e for e in pf.EXPERIMENTS if (e.paper, e.item) == ("002", "Fig. 3"))
    row = _row(fig3, fixture, 2)
    wide = dict(row, parameters=dict(row["parameters"], num_tasks=128, num_tasks_per_node=64))  # 64-core nodes
    (line,) = report._published([(None, [wide])], _hardware(wide, 2))
    assert (line["needs"], line["have"]) == ("2 nodes under full packing or more", "1 node under full packing")
    run_time = next(e for e in pf.EXPERIMENTS if e.item == "Table 1 (8 run time)")
    (line,) = _lines(run_time, fixture, 4)
    assert line["have"] == "a fields-only solver run of 20 steps" and "61 min" not in json.dumps(line)


def test_paper_004_offload_only_beside_ucc_or_hcoll_and_paper_002_latency_only_beside_host_buffers():
    fixture = _fixture_rows()
    fig5 = next(e for e in pf.EXPERIMENTS if (e.paper, e.item) == ("004", "Fig. 5"))
    row = dict(_row(fig5, fixture, 16), metric="han_over_tuned")

    def fig5_lines(row):   # the same figure also stands beside the paper's 32-node expectation (its own row)
        return [p for p in report._published([(None, [row])], _hardware(row, 16)) if p["item"] == "Fig. 5"]
    (line,) = fig5_lines(row)
    assert "value" not in line and line["have"] == "implementation han"
    curve = dict(row, metric="hcoll_over_tuned_8_nodes")   # a node-curve point: its own count
    assert [p["value"] for p in fig5_lines(curve)] == ["1.05"]
    far = dict(row, metric="ucc_over_tuned_32_nodes")
    assert [(p["item"], p["value"]) for p in report._published([(None, [far])], _hardware(far, 32))
            if "value" in p] == [("text (32 nodes)", "1.2")]
    fig1 = next(e for e in pf.EXPERIMENTS if (e.paper, e.item) == ("002", "Fig. 1"))
    row = _row(fig1, fixture, 2)
    device = dict(row, parameters=dict(row["parameters"], buffers="device"))
    (line,) = report._published([(None, [device])], _hardware(device, 2))
    assert line["have"] == "device buffers" and "3.19" not in json.dumps(line)


def test_paper_003_distance_table_stands_as_its_own_figure():
    row = {"check": "AcceptanceNUMACosts", "metric": "remote_cost_max", "parameters": {}, "value": 35.0,
           "unit": "%", "testcase": "numa"}
    far = report._published([(None, [row])], {"numa": {"numa_distances": [[10, 20], [20, 10]]}})
    table = next(p for p in far if p["item"] == "NUMA distances")
    measured = next(p for p in far if p["item"] == "NUMA distances (measured)")
    assert (table["value"], table["ours"], table["metric"], table["instead"]) == (
        "100", "100", "the compute node's NUMA distance table", "")
    assert (measured["value"], measured["ours"]) == ("100", "35") and "triad" in measured["instead"]
    unrecorded = report._published([(None, [row])], {})
    assert [p["have"] for p in unrecorded] == ["no NUMA distance table recorded"] * 2


def test_paper_003_distance_table_of_the_ingest_host_is_labelled_so():
    # provenance.topology is the machine that ran ingest: its table is printed as that, never as the node's
    row = {"check": "AcceptanceNUMACosts", "metric": "remote_cost_max", "parameters": {}, "value": 35.0,
           "unit": "%", "testcase": "numa"}
    ingest_host = {report.RUN_FACTS: {"numa_distances": [[10, 20], [20, 10]]}}
    (table,) = [p for p in report._published([(None, [row])], ingest_host) if p["item"] == "NUMA distances"]
    assert table["metric"] == "the ingest host's NUMA distance table (not the compute node's)"
    # the check's own record of the node's table wins over the ingest host's
    both = dict(ingest_host, numa={"numa_distances": [[10, 16], [16, 10]]})
    (table,) = [p for p in report._published([(None, [row])], both) if p["item"] == "NUMA distances"]
    assert (table["value"], table["ours"], table["metric"]) == ("60", "60", "the compute node's NUMA distance table")


def test_a_row_whose_condition_names_an_unknown_fact_fails_naming_the_row(capsys, monkeypatch):
    bad = pf._e("000", "Fig. 99", "x", "like for like", "FdtdBindingSweep", {}, "per_core_mcells_per_s",
                (pf.P(1, "x", "x"),), when=(paper_conditions.exactly("nodez", 18),))
    assert pf.declaration_problems(pf.EXPERIMENTS) == []
    (problem,) = pf.declaration_problems([bad])
    assert "000 Fig. 99" in problem and "nodez" in problem
    undeclared = bad._replace(when=None)
    assert "000 Fig. 99" in pf.declaration_problems([undeclared])[0]
    monkeypatch.setattr(pf, "EXPERIMENTS", pf.EXPERIMENTS + (bad,))
    assert pf.main([str(HERE.parents[2] / "papers"), "--check"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "000 Fig. 99" in err and "nodez" in err


def test_a_row_whose_metric_no_check_emits_fails_naming_the_row():
    sys.path.insert(0, str(HERE.parents[1] / "tests"))
    try:
        import test_paper_rows_name_real_figures as figures   # the checks' emitted names, read from their sources
    except ImportError as err:
        pytest.skip(f"the check-source scanner is not in this tree: {err}")
    finally:
        sys.path.pop(0)
    foms = figures.emitted()
    assert figures.unfillable([e for e in pf.EXPERIMENTS if e.published], foms) == []
    gone = pf._e("002", "Table 1 (8 bytes)", "x", "instead", "FdtdMessageStats", {"ranks": "8"},
                 "halo_bytes_per_process", (pf.P(1, "B", "x"),), when=())
    (problem,) = figures.unfillable([gone], foms)
    assert problem.startswith("002 Table 1 (8 bytes)")


@pytest.mark.parametrize("table", [[["10", "20"], ["20", "10"]], [[10, 20], [20, "x"]], [[0, 20], [20, 0]],
                                   [[10, -20], [-20, 10]], [[True, 20], [20, 10]], [[10, None], [None, 10]]])
def test_a_distance_table_of_anything_but_positive_numbers_is_no_table(table):
    assert paper_conditions.distance_cost({"numa_distances": table}) is None
    assert paper_conditions.facts_of({"metric": "remote_cost_max"}, {"numa_distances": table})["numa_distance"] is None
