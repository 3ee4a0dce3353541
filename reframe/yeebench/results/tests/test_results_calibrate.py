"""`yeebench results calibrate`: references from recorded runs (median, MAD-scaled tolerance with a
floor, on the worse side), refusals naming the figures with too few runs, and ReFrame itself then
failing a figure made worse on purpose while passing one within the noise."""
import json
import statistics

import pytest

from reframe_probe import PARTITION, REFRAME, SYSTEM, run_probe, write_config
from results_testutil import run_cli, synthetic_run
from yeebench import references
from yeebench.results import store
from yeebench.results.ingest import ingest

VALUES = [[100.0, 101.0, 99.0], [102.0, 98.0, 100.5], [97.0, 100.0, 103.0], [100.0, 99.5, 101.5],
          [96.0, 100.0, 104.0]]


def _synthetic_history(tmp_path, runs=5, **kwargs):
    for i in range(runs):
        synthetic_run(tmp_path, f"2026010{i + 1}T000000Z-synth{i}", {"mcells_per_s": VALUES[i], "time_s": [2.0 + i / 100]},
                      directions={"mcells_per_s": "higher", "time_s": "lower"},
                      units={"mcells_per_s": "Mcells/s", "time_s": "s"}, **kwargs)
    return tmp_path / "results"


def _calibrate(results, out, *argv):
    return run_cli("results", "calibrate", "--system", "synth", "--results-dir", results, "-o", out, *argv)


def test_reference_is_median_and_robust_spread_on_the_worse_side(tmp_path):
    results = _synthetic_history(tmp_path)
    out = tmp_path / "synth.json"
    proc = _calibrate(results, out, "--min-tolerance", "1%")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out) and "2 figure(s) of synth from 5 run(s)" in proc.stderr
    refs = references.lookup(json.loads(out.read_text()), "default", ["SynthCheck"])
    pooled = [v for run in VALUES for v in run]
    median = statistics.median(pooled)
    tolerance = 3 * 1.4826 * statistics.median(abs(v - median) for v in pooled) / median
    value, lower, upper, unit = refs["mcells_per_s"]
    assert value == pytest.approx(median) and unit == "Mcells/s"
    assert lower == pytest.approx(-tolerance, rel=1e-3) and upper is None      # higher is better: only a floor
    t_value, t_lower, t_upper, _ = refs["time_s"]
    times = [2.0 + i / 100 for i in range(5)]
    assert t_value == pytest.approx(2.02) and t_lower is None                # lower is better: only a ceiling
    assert t_upper == pytest.approx(3 * 1.4826 * statistics.median(abs(t - 2.02) for t in times) / 2.02, rel=1e-3)


def test_minimum_tolerance_applies_to_a_quiet_figure(tmp_path):
    results = _synthetic_history(tmp_path)
    out = tmp_path / "synth.json"
    assert _calibrate(results, out).returncode == 0
    refs = references.lookup(json.loads(out.read_text()), "default", ["SynthCheck"])
    assert refs["time_s"][2] == 0.05 and refs["mcells_per_s"][1] == -0.05     # default 5 % beats 3 sigma here


def test_too_few_runs_are_refused_naming_the_figures(tmp_path):
    results = _synthetic_history(tmp_path, runs=3)
    out = tmp_path / "synth.json"
    proc = _calibrate(results, out)
    assert proc.returncode == 2 and not out.exists() and proc.stderr.count("\n") == 1
    assert "2 figure(s) of synth have fewer than --min-runs 5" in proc.stderr
    assert "SynthCheck mcells_per_s on default (3 runs)" in proc.stderr


def test_partial_calibrates_the_figures_with_enough_runs(tmp_path):
    results = _synthetic_history(tmp_path)
    synthetic_run(tmp_path, "20260109T000000Z-new", {"mcells_per_s": [100.0], "new_s": [1.0]},
                  directions={"mcells_per_s": "higher", "new_s": "lower"}, units={"mcells_per_s": "Mcells/s"})
    out = tmp_path / "synth.json"
    refused = _calibrate(results, out)
    assert refused.returncode == 2 and "new_s on default (1 run)" in refused.stderr
    proc = _calibrate(results, out, "--partial")
    assert proc.returncode == 0 and "with fewer than 5 runs left out: SynthCheck new_s" in proc.stderr
    refs = references.lookup(json.loads(out.read_text()), "default", ["SynthCheck"])
    assert set(refs) == {"mcells_per_s", "time_s"}


def test_other_entries_of_the_file_are_kept(tmp_path):
    results = _synthetic_history(tmp_path)
    out = tmp_path / "synth.json"
    out.write_text(json.dumps({"_about": "hand-written", "partitions": {"*": {"Fdtd*": {"x": [1, -1, None, "%"]}}}}))
    assert _calibrate(results, out).returncode == 0
    data = json.loads(out.read_text())
    assert data["_about"] == "hand-written" and data["partitions"]["*"]["Fdtd*"]["x"] == [1, -1, None, "%"]
    assert data["_calibrated"]["figures"] == 2 and len(data["_calibrated"]["runs"]) == 5


@pytest.mark.parametrize("argv, says", [(["--system", "nosuch"], "no recorded runs of system nosuch"),
                                        (["--system", "../x"], "not a plain name")])
def test_bad_input(tmp_path, argv, says):
    results = _synthetic_history(tmp_path)
    proc = run_cli("results", "calibrate", "--results-dir", results, "-o", tmp_path / "o.json", *argv)
    assert proc.returncode == 2 and says in proc.stderr


# -- ReFrame judges a run against the calibrated file ---------------------------------------------------

NOISE = (-0.02, -0.01, 0.0, 0.01, 0.02)


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    """A probe run recorded once, then four more copies of it with up to 2 % noise (recorded runs as
    the history has them), calibrated into a references folder for the probe's system."""
    if not REFRAME.exists():
        pytest.skip(f"no ReFrame at {REFRAME}")
    folder = tmp_path_factory.mktemp("calibrate")
    config = write_config(folder)
    proc = run_probe(folder, config, "--report-file", folder / "report.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first = store.load_run(ingest(folder / "report.json", folder / "results"))
    report_text = (first.path / store.REPORT_FILE).read_text()
    for i, noise in enumerate(NOISE[1:]):
        run_id = f"{first.run_id}-copy{i}"
        rows = [dict(row, run_id=run_id, value=row["value"] * (1 + noise * (1 if row["repeat"] % 2 else -1)))
                for row in first.rows]
        store.write_run(first.path.parent / run_id, rows, dict(first.provenance, run_id=run_id), report_text)
    refs = folder / "references"
    proc = run_cli("results", "calibrate", "--system", SYSTEM, "--results-dir", folder / "results",
                   "-o", refs / f"{SYSTEM}.json")
    assert proc.returncode == 0, proc.stderr
    return folder, config, refs


def _report_cases(path):
    return [case for run in json.loads(path.read_text())["runs"] for case in run["testcases"]]


def test_calibrated_file_is_keyed_by_display_name_in_the_checks_unit(calibrated):
    _, _, refs = calibrated
    data = json.loads((refs / f"{SYSTEM}.json").read_text())
    found = references.lookup(data, PARTITION, ["PerflogProbe %size=64"])
    assert found["bandwidth"][0] == pytest.approx(123.5) and found["bandwidth"][2] is None
    assert found["throughput"][3] == "MiB/s" and found["throughput"][0] == pytest.approx(100.0)  # not MB/s
    assert found["latency"][1] is None and found["latency"][2] == 0.05


def test_reframe_passes_a_run_within_the_noise(calibrated, tmp_path):
    folder, config, refs = calibrated
    proc = run_probe(tmp_path, config, "-S", "PerflogProbe.bandwidth=120.8", "-S", "PerflogProbe.latency=2.56",
                     "--report-file", tmp_path / "r.json", references=refs)
    assert proc.returncode == 0, proc.stdout
    cases = _report_cases(tmp_path / "r.json")
    assert [c["result"] for c in cases] == ["pass", "pass"]
    # the references were applied: ReFrame reports each figure's reference value
    assert all(c["perfvalues"][f"{SYSTEM}:{PARTITION}:bandwidth"][1] == pytest.approx(123.5) for c in cases)


def test_reframe_fails_a_figure_made_worse_on_purpose(calibrated, tmp_path):
    folder, config, refs = calibrated
    proc = run_probe(tmp_path, config, "-S", "PerflogProbe.bandwidth=98.8",     # 20 % below
                     "--report-file", tmp_path / "r.json", references=refs)
    assert proc.returncode != 0
    cases = _report_cases(tmp_path / "r.json")
    assert [c["result"] for c in cases] == ["fail", "fail"]
    assert all(c["fail_phase"] == "performance" and "bandwidth" in c["fail_reason"] for c in cases)
    assert all("latency" not in c["fail_reason"] and "throughput" not in c["fail_reason"] for c in cases)
    # a faster run is no failure: only the worse side is bounded
    faster = run_probe(tmp_path, config, "-S", "PerflogProbe.bandwidth=200", "-S", "PerflogProbe.latency=1",
                       references=refs)
    assert faster.returncode == 0, faster.stdout
