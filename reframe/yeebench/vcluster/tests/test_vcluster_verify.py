"""The smoke run's assertions, on synthetic results (both input forms)."""
import json

import pytest

from yeebench.vcluster import verify as V


def rows(inter_bw=117.0, intra_bw=5000.0, inter_lat=30.0, intra_lat=0.5, check="VclusterNetPIPE",
         bw_metric="bw_large", status="pass"):
    out = []
    for loc, bw, lat in (("intra", intra_bw, intra_lat), ("inter", inter_bw, inter_lat)):
        out.append(V.Row(check, "srun", loc, bw_metric, bw, "MB/s", status))
        out.append(V.Row(check, "srun", loc, "latency_1B", lat, "us", status))
    return out


def test_all_properties_hold():
    ok, lines = V.verify(rows(), 1e9, 0.15)
    assert ok and len(lines) == 3 and "94% of the 1 Gbit/s link" in lines[2]


@pytest.mark.parametrize("kwargs,what", [
    (dict(inter_bw=100.0), "80% of the 1 Gbit/s"),          # too slow: chain dishonest or starved
    (dict(inter_bw=150.0), "120% of the 1 Gbit/s"),         # too fast: shaping not applied
    (dict(inter_lat=0.3), "latency intra"),
    (dict(intra_bw=100.0), "bw_large intra"),
])
def test_each_property_can_fail(kwargs, what):
    ok, lines = V.verify(rows(**kwargs), 1e9, 0.15)
    assert not ok
    assert any(line.startswith("FAIL") and what in line for line in lines)


def test_peak_bandwidth_is_never_taken_as_the_link_rate():
    ok, lines = V.verify(rows(check="NetPIPEPt2Pt", bw_metric="peak_bw", inter_bw=400.0), 1e9, 0.15)
    assert not ok and "no large-message inter-node bandwidth" in lines[-1]
    ok, _ = V.verify(rows(check="NetPIPEPt2Pt", bw_metric="peak_bw", inter_bw=400.0), None, 0.15)
    assert ok                                                # without a rate: locality only


def test_failed_testcases_do_not_count():
    ok, lines = V.verify(rows(status="fail"), 1e9, 0.15)
    assert not ok and "no intra/inter pair" in lines[0]


def test_reads_ingested_rows_and_reframe_reports(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    with open(run / "rows.jsonl", "w") as f:
        for r in rows():
            f.write(json.dumps({"check": r.check, "partition": r.partition, "metric": r.metric,
                                "value": r.value, "unit": r.unit, "status": r.status,
                                "parameters": {"locality": r.locality}}) + "\n")
    assert V.verify(V.load_rows(str(run)), 1e9, 0.15)[0]
    report = {"runs": [{"testcases": [
        {"name": f"VclusterNetPIPE %locality={loc}", "locality": loc, "partition": "srun", "result": "pass",
         "perfvalues": {"vcluster:srun:bw_large": [bw, 0, None, None, "MB/s", "pass"],
                        "vcluster:srun:latency_1B": [lat, 0, None, None, "us", "pass"]}}
        for loc, bw, lat in (("intra", 5000.0, 0.5), ("inter", 118.0, 30.0))]}]}
    (tmp_path / "report.json").write_text(json.dumps(report))
    ok, lines = V.verify(V.load_rows(str(tmp_path / "report.json")), 1e9, 0.15)
    assert ok, lines


def test_unreadable_input(tmp_path):
    (tmp_path / "bad.json").write_text("not json")
    with pytest.raises(V.VerifyError):
        V.load_rows(str(tmp_path / "bad.json"))


def test_each_figure_is_the_best_of_its_runs():
    # a busy machine only slows a measurement: a run measured again counts with its best figure
    ok, lines = V.verify(rows(inter_bw=100.0) + rows(inter_bw=117.0), 1e9, 0.15)
    assert ok and "94% of the 1 Gbit/s link" in lines[2]
    assert V.verify(rows(intra_lat=40.0) + rows(), 1e9, 0.15)[0]
    assert not V.verify(rows(inter_bw=150.0) + rows(), 1e9, 0.15)[0]     # the best is above the rate


def test_only_failures_a_busy_machine_can_cause_are_measured_again():
    assert V.noise_suspects(rows(), 1e9, 0.15) == []
    assert V.noise_suspects(rows(inter_bw=100.0), 1e9, 0.15) == ["VclusterNetPIPE"]
    assert V.noise_suspects(rows(inter_lat=0.3), 1e9, 0.15) == ["VclusterNetPIPE"]
    assert V.noise_suspects(rows(intra_bw=100.0, check="NetPIPEPt2Pt"), 1e9, 0.15) == ["NetPIPEPt2Pt"]
    assert V.noise_suspects(rows(inter_bw=150.0), 1e9, 0.15) == []        # above the rate: never noise
    mixed = rows(inter_bw=150.0) + rows(inter_lat=0.3, check="NetPIPEPt2Pt", bw_metric="peak_bw")
    assert V.noise_suspects(mixed, 1e9, 0.15) == []


def _report(path, inter_bw):
    cases = [{"name": f"VclusterNetPIPE %locality={loc}", "locality": loc, "partition": "srun", "result": "pass",
              "perfvalues": {"vcluster:srun:bw_large": [bw, 0, None, None, "MB/s", "pass"],
                             "vcluster:srun:latency_1B": [lat, 0, None, None, "us", "pass"]}}
             for loc, bw, lat in (("intra", 5000.0, 0.5), ("inter", inter_bw, 30.0))]
    with open(path, "w") as f:
        json.dump({"runs": [{"testcases": cases}]}, f)


@pytest.mark.parametrize("inter_bw, runs, rc", [
    ([100.0, 118.0], 2, 0),           # short once, at the rate when measured again: passes
    ([100.0, 99.0, 101.0], 3, 1),     # short every time: fails after the reruns
    ([150.0], 1, 1),                  # above the rate: a defect, not measured again
])
def test_smoke_measures_again_what_a_busy_machine_can_fail(tmp_path, monkeypatch, capsys, inter_bw, runs, rc):
    from yeebench.vcluster import cluster, preflight, smoke
    monkeypatch.setattr(preflight, "check", lambda shaping=True: None)
    monkeypatch.setattr(cluster, "up", lambda layout: 0.1)
    monkeypatch.setattr(cluster, "down", lambda *a, **k: 0.0)
    monkeypatch.setattr(cluster, "head_command", lambda layout, argv: argv)
    monkeypatch.setattr(smoke, "ingest", lambda report, results: None)
    monkeypatch.setattr(smoke.coverage, "check", lambda report, nodes: (True, []))   # pt2pt only here
    calls = []

    def fake_reframe(argv, **kwargs):
        calls.append(argv)
        _report(argv[argv.index("--report-file") + 1], inter_bw[len(calls) - 1])
        return 0
    monkeypatch.setattr(smoke.subprocess, "call", fake_reframe)
    assert smoke.run_smoke(2, "1gbit", str(tmp_path / "out"), "vcluster", True, 0.15, str(tmp_path / "vc"), True) == rc
    assert len(calls) == runs
    for again in calls[1:]:   # a rerun runs the failing check only
        assert "^VclusterNetPIPE" in again and str(smoke.REPO_ROOT / smoke.SUITE_PT2PT) not in again
    assert ("measuring again" in capsys.readouterr().out) == (runs > 1)


def test_smoke_fails_when_a_node_curve_stops_short(tmp_path, monkeypatch, capsys):
    """Link rate and locality hold, but the papers' node curves did not reach every count: the stage fails."""
    from yeebench.vcluster import cluster, preflight, smoke
    monkeypatch.setattr(preflight, "check", lambda shaping=True: None)
    monkeypatch.setattr(cluster, "up", lambda layout: 0.1)
    monkeypatch.setattr(cluster, "down", lambda *a, **k: 0.0)
    monkeypatch.setattr(cluster, "head_command", lambda layout, argv: argv)
    monkeypatch.setattr(smoke, "ingest", lambda report, results: None)
    monkeypatch.setattr(smoke.subprocess, "call",
                        lambda argv, **kw: _report(argv[argv.index("--report-file") + 1], 118.0) or 0)
    assert smoke.run_smoke(5, "1gbit", str(tmp_path / "out"), "vcluster", True, 0.15, str(tmp_path / "vc"), True) == 1
    out = capsys.readouterr().out
    assert "FAIL FdtdNodeScaling: no case in the report" in out and "vcluster smoke: FAILED" in out
