"""compare: statistics, verdicts, exit codes, formats and baselines."""
import csv
import io
import json
import random

import pytest

from results_testutil import ingested, run_cli, synthetic_run
from yeebench import stats
from yeebench.results import compare, formats
from yeebench.results.cli import parse_threshold


def test_median_and_mad():
    assert stats.median([3, 1, 2]) == 2
    assert stats.median([4, 1, 2, 3]) == 2.5
    assert stats.mad([1, 2, 3, 4, 100]) == 1
    assert stats.robust_relative_sigma([10.0]) == 0.0
    assert stats.robust_relative_sigma([9, 10, 11]) == pytest.approx(1.4826 / 10, rel=1e-4)


def test_mad_agrees_with_scipy():
    from scipy.stats import median_abs_deviation
    rng = random.Random(5)
    for n in (2, 3, 7, 50):
        data = [rng.lognormvariate(0, 0.1) for _ in range(n)]
        assert stats.mad(data) == pytest.approx(median_abs_deviation(data))
        expected = median_abs_deviation(data, scale="normal") / stats.median(data)
        assert stats.robust_relative_sigma(data) == pytest.approx(expected)


def test_mann_whitney_exact_and_approximate():
    assert stats.mann_whitney_greater([5, 6, 7], [1, 2, 3]) == pytest.approx(1 / 20)
    assert stats.mann_whitney_greater([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]) == pytest.approx(1 / 252)
    assert stats.mann_whitney_greater([1, 2, 3], [5, 6, 7]) == 1.0
    assert stats.mann_whitney_greater([1, 1, 1], [1, 1, 1]) == 1.0
    # interleaved samples: no evidence either way
    assert 0.3 < stats.mann_whitney_greater([1, 3, 5, 7], [2, 4, 6, 8]) < 0.8
    # ties use the normal approximation; a clear shift is still significant
    assert stats.mann_whitney_greater([5, 5, 6, 6, 7, 7], [1, 1, 2, 2, 3, 3]) < 0.01


def test_synthetic_regression_is_flagged():
    base = [1.00, 1.01, 0.99, 1.00, 1.02]
    slow = [v * 1.20 for v in base]
    result = compare.compare_values(base, slow, "lower")
    assert result["verdict"] == "regressed" and result["change"] == pytest.approx(0.20)
    faster = [v / 1.2 for v in base]
    assert compare.compare_values(base, faster, "lower")["verdict"] == "improved"
    # the same slowdown seen as a throughput is also a regression
    rates = [1 / v for v in base]
    assert compare.compare_values(rates, [r / 1.2 for r in rates], "higher")["verdict"] == "regressed"


def test_identical_runs_are_not_flagged():
    rng = random.Random(7)
    for _ in range(50):
        base = [1 + rng.gauss(0, 0.02) for _ in range(5)]
        assert compare.compare_values(base, list(base), "lower")["verdict"] == "unchanged"
        assert compare.compare_values(base, list(base), "higher")["verdict"] == "unchanged"


def test_change_within_noise_is_not_flagged():
    base = [1.0, 1.4, 0.8, 1.2, 0.7]
    cand = [v * 1.10 for v in base]  # +10 % but spread is ±30 %
    assert compare.compare_values(base, cand, "lower")["verdict"] == "unchanged"


def test_change_below_threshold_is_not_flagged():
    base = [1.000, 1.001, 0.999, 1.000, 1.000]
    cand = [v * 1.03 for v in base]  # significant but below 5 %
    result = compare.compare_values(base, cand, "lower")
    assert result["p_worse"] < 0.01 and result["verdict"] == "unchanged"
    assert compare.compare_values(base, cand, "lower", threshold=0.02)["verdict"] == "regressed"


def test_single_repeats_without_history_are_insufficient_data():
    result = compare.compare_values([1.0], [1.2], "lower")
    assert result["verdict"] == "insufficient" and result["noise"] is None  # never 'regressed' on n = 1
    assert compare.compare_values([1.0], [1.02], "lower")["verdict"] == "unchanged"  # within the threshold
    # the history's run-to-run noise decides instead
    assert compare.compare_values([1.0], [1.2], "lower", history_band=0.06)["verdict"] == "regressed"
    assert compare.compare_values([1.0], [1.2], "lower", history_band=0.5)["verdict"] == "unchanged"


def test_history_noise_widens_a_too_narrow_band():
    base = [1.00, 1.001, 0.999, 1.0, 1.0]
    cand = [v * 1.1 for v in base]
    assert compare.compare_values(base, cand, "lower")["verdict"] == "regressed"
    wide = compare.compare_values(base, cand, "lower", history_band=0.15, statistic="median")
    assert wide["verdict"] == "unchanged" and wide["noise_source"] == "repeats+history"
    assert compare.compare_values(base, cand, "lower", history_band=0.15)["verdict"] == "unchanged"


# 2-rank solver repeats (Mcells/s) recorded by the README-workflow gate benchmark on the development VM
SLOWER_BY_20_PERCENT = [1282, 1293, 1289, 1254, 1271]   # yee built with a 20 % injected slowdown
DISTURBED_REPEATS = [1316, 1095, 1042, 1638, 1548]     # unchanged code; the best repeat is undisturbed
DISTURBED_RUN = [1247, 1034, 732, 681, 1237]           # unchanged code, the whole run slowed by the host
QUIET_RUN = [1599, 1629, 1632, 1528, 1635]


def test_the_best_repeat_is_judged_by_the_history_of_the_best():
    # the repeats' spread (29 % noise) and their ranks say nothing about the best of them
    assert compare.compare_values(DISTURBED_REPEATS, SLOWER_BY_20_PERCENT, "higher")["verdict"] == "unchanged"
    judged = compare.compare_values(DISTURBED_REPEATS, SLOWER_BY_20_PERCENT, "higher", history_band=0.06)
    assert judged["verdict"] == "regressed" and judged["noise_source"] == "history"
    assert judged["p_worse"] is None and judged["noise"] == pytest.approx(0.06)


def test_a_slower_best_that_its_own_repeats_do_not_repeat_is_not_a_verdict():
    disturbed = compare.compare_values(QUIET_RUN, DISTURBED_RUN, "higher", history_band=0.06)
    assert disturbed["verdict"] == "insufficient" and disturbed["reason"] == "the candidate's repeats disagree"
    assert formats.verdict_text(disturbed) == "insufficient data (the candidate's repeats disagree)"
    # the same on the other side: a disturbed baseline does not make an improvement
    back = compare.compare_values(DISTURBED_RUN, QUIET_RUN, "higher", history_band=0.06)
    assert back["verdict"] == "insufficient" and back["reason"] == "the baseline's repeats disagree"
    assert compare.compare_values(QUIET_RUN, SLOWER_BY_20_PERCENT, "higher",
                                  history_band=0.06)["verdict"] == "regressed"
    # one repeat cannot disagree with itself; two must agree
    assert compare.corroborated([5.0], "lower", 0.05)
    assert not compare.corroborated([5.0, 7.0], "lower", 0.05)
    assert compare.corroborated([5.0, 5.1, 9.0, 9.5], "lower", 0.05) is False
    assert compare.corroborated([5.0, 5.1, 5.2, 9.5], "lower", 0.05)


def test_exact_p_values_with_ties():
    # every split of the pooled sample enumerated: 1 of C(12, 6) = 924 is as extreme
    assert stats.mann_whitney_greater([5, 5, 6, 6, 7, 7], [1, 1, 2, 2, 3, 3]) == pytest.approx(1 / 924)
    assert stats.mann_whitney_greater([2, 2, 2], [1, 1, 1]) == pytest.approx(1 / 20)


def test_false_alarm_rate_on_simulated_noise():
    """Null hypothesis, 5 repeats each, 3 % lognormal noise: the gate fires well under 5 % of the time."""
    rng = random.Random(11)
    alarms = 0
    trials = 400
    for _ in range(trials):
        base = [rng.lognormvariate(0, 0.03) for _ in range(5)]
        cand = [rng.lognormvariate(0, 0.03) for _ in range(5)]
        alarms += compare.compare_values(base, cand, "lower")["verdict"] == "regressed"
    assert alarms / trials <= 0.05


def test_unknown_direction_never_fails():
    result = compare.compare_values([1, 1, 1], [3, 3, 3.1], "unknown")
    assert result["verdict"] == "changed"


@pytest.mark.parametrize("text,value", [("5%", 0.05), ("0.05", 0.05), ("12.5%", 0.125), ("0", 0.0)])
def test_threshold_parsing(text, value):
    assert parse_threshold(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["five", "-3%", "%", "1e9"])
def test_bad_threshold_is_a_usage_error(tmp_path, text):
    run = synthetic_run(tmp_path, "a", {"t": [1, 1, 1]})
    proc = run_cli("results", "compare", "--baseline", run, "--candidate", run, "--threshold", text)
    assert proc.returncode == 2 and "threshold" in proc.stderr and "Traceback" not in proc.stderr


def _runs(tmp_path, factor):
    base = synthetic_run(tmp_path, "base", {"time_s": [1.00, 1.01, 0.99, 1.00, 1.02], "rate": [100, 101, 99, 100, 100]},
                         directions={"rate": "higher"}, units={"rate": "GB/s"})
    cand = synthetic_run(tmp_path, "cand", {"time_s": [v * factor for v in (1.00, 1.01, 0.99, 1.00, 1.02)],
                                            "rate": [100, 101, 99, 100, 100]},
                         directions={"rate": "higher"}, units={"rate": "GB/s"})
    return base, cand


def test_cli_exit_code_on_regression(tmp_path):
    base, cand = _runs(tmp_path, 1.25)
    proc = run_cli("results", "compare", "--baseline", base, "--candidate", cand)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "regressed" in proc.stdout and "summary: 1 regressed, 1 unchanged" in proc.stdout


def test_cli_passes_identical_runs(tmp_path):
    base, cand = _runs(tmp_path, 1.0)
    proc = run_cli("results", "compare", "--baseline", base, "--candidate", cand)
    assert proc.returncode == 0 and "2 unchanged" in proc.stdout


def test_recorded_run_against_itself_passes(tmp_path):
    run = ingested(tmp_path)
    proc = run_cli("results", "compare", "--baseline", run, "--candidate", run, "--format", "json")
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    assert doc["summary"]["unchanged"] == len(doc["results"]) == 12


def test_formats(tmp_path):
    base, cand = _runs(tmp_path, 1.25)
    doc = json.loads(run_cli("results", "compare", "--baseline", base, "--candidate", cand, "--format", "json").stdout)
    verdicts = {r["metric"]: r["verdict"] for r in doc["results"]}
    assert verdicts == {"time_s": "regressed", "rate": "unchanged"}
    assert doc["settings"]["threshold"] == 0.05
    out = run_cli("results", "compare", "--baseline", base, "--candidate", cand, "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["metric"]: r["verdict"] for r in rows} == verdicts
    md = run_cli("results", "compare", "--baseline", base, "--candidate", cand, "--format", "markdown").stdout
    assert "| check |" in md and "| regressed |" in md
    target = tmp_path / "cmp.md"
    proc = run_cli("results", "compare", "--baseline", base, "--candidate", cand, "--format", "markdown", "-o", target)
    assert proc.returncode == 1 and target.read_text() == md


def test_missing_metrics(tmp_path):
    base = synthetic_run(tmp_path, "base", {"a": [1, 1, 1], "b": [2, 2, 2]})
    cand = synthetic_run(tmp_path, "cand", {"a": [1, 1, 1], "c": [3, 3, 3]})
    doc = json.loads(run_cli("results", "compare", "--baseline", base, "--candidate", cand, "--format", "json").stdout)
    missing = {r["metric"]: r["missing_in"] for r in doc["results"] if r["verdict"] == "missing"}
    assert missing == {"b": "candidate", "c": "baseline"}
    proc = run_cli("results", "compare", "--baseline", base, "--candidate", cand)
    assert proc.returncode == 1 and "1 figure(s) of the baseline have no counterpart" in proc.stderr
    assert run_cli("results", "compare", "--baseline", base, "--candidate", cand, "--allow-missing").returncode == 0
    assert run_cli("results", "compare", "--baseline", base, "--candidate", cand, "--allow-missing",
                   "--fail-on-missing").returncode == 1
    # a figure only the candidate has is news, not a hole in the gate
    grown = synthetic_run(tmp_path, "grown", {"a": [1, 1, 1], "b": [2, 2, 2], "c": [3, 3, 3]})
    assert run_cli("results", "compare", "--baseline", base, "--candidate", grown).returncode == 0
    disjoint = synthetic_run(tmp_path, "disjoint", {"z": [1, 1, 1]}, check="Other")
    proc = run_cli("results", "compare", "--baseline", base, "--candidate", disjoint)
    assert proc.returncode == 1 and "2 figure(s)" in proc.stderr


def test_ignore_and_metric_selection(tmp_path):
    core = synthetic_run(tmp_path, "core", {"t": [1, 1.01, 0.99]}, params={"binding": "core"})
    sock = synthetic_run(tmp_path, "sock", {"t": [2, 2.01, 1.99], "u": [1, 1, 1]}, params={"binding": "socket"})
    doc = json.loads(run_cli("results", "compare", "--baseline", core, "--candidate", sock, "--format", "json",
                             "--allow-missing").stdout)
    assert {r["verdict"] for r in doc["results"]} == {"missing"}  # different bindings never match by default
    proc = run_cli("results", "compare", "--baseline", core, "--candidate", sock, "--ignore", "parameters.binding",
                   "--metric", "t", "--format", "json")
    doc = json.loads(proc.stdout)
    assert [r["verdict"] for r in doc["results"]] == ["regressed"] and proc.returncode == 1


def test_folder_of_runs_pools_repeats(tmp_path):
    synthetic_run(tmp_path / "pool", "r1", {"t": [1.0, 1.01]})
    synthetic_run(tmp_path / "pool", "r2", {"t": [0.99, 1.0]})
    cand = synthetic_run(tmp_path, "cand", {"t": [1.0, 1.0, 1.01]})
    doc = json.loads(run_cli("results", "compare", "--baseline", tmp_path / "pool", "--candidate", cand,
                             "--format", "json").stdout)
    assert doc["results"][0]["baseline_n"] == 4 and doc["results"][0]["verdict"] == "unchanged"


def test_baseline_promotion_and_use(tmp_path):
    base, cand = _runs(tmp_path, 1.25)
    baselines = tmp_path / "baselines"
    proc = run_cli("results", "baseline", base, "--baselines-dir", baselines)
    assert proc.returncode == 0, proc.stderr
    stored = baselines / "synth.json"
    assert proc.stdout.strip() == str(stored) and json.loads(stored.read_text())["schema"] == "yeebench-baseline"
    assert run_cli("results", "compare", "--baseline", stored, "--candidate", cand).returncode == 1
    assert run_cli("results", "compare", "--baseline", stored, "--candidate", base).returncode == 0
    again = run_cli("results", "baseline", cand, "--baselines-dir", baselines)
    assert again.returncode == 0 and "replaced" in again.stderr


@pytest.mark.parametrize("content", ["{not json", json.dumps({"schema": "other"}),
                                     json.dumps({"schema": "yeebench-baseline", "schema_version": 99, "rows": []})])
def test_bad_baseline_file(tmp_path, content):
    bad = tmp_path / "baseline.json"
    bad.write_text(content)
    run = synthetic_run(tmp_path, "a", {"t": [1, 1, 1]})
    proc = run_cli("results", "compare", "--baseline", bad, "--candidate", run)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_missing_run_and_corrupt_rows(tmp_path):
    proc = run_cli("results", "compare", "--baseline", tmp_path / "nope", "--candidate", tmp_path / "nope")
    assert proc.returncode == 2 and "no such run" in proc.stderr
    run = synthetic_run(tmp_path, "a", {"t": [1, 1, 1]})
    (run / "rows.jsonl").write_text('{"schema": "yeebench-row", "trunc')
    proc = run_cli("results", "compare", "--baseline", run, "--candidate", run)
    assert proc.returncode == 2 and "corrupt or truncated" in proc.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_cli("results", "compare", "--baseline", empty, "--candidate", empty)
    assert proc.returncode == 2 and "no recorded runs" in proc.stderr


def test_zero_baseline_gives_strict_json(tmp_path):
    base = synthetic_run(tmp_path, "base", {"t": [0, 0, 0]})
    cand = synthetic_run(tmp_path, "cand", {"t": [1, 1, 1]})
    proc = run_cli("results", "compare", "--baseline", base, "--candidate", cand, "--format", "json")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert doc["results"][0]["verdict"] == "regressed" and doc["results"][0]["change"] is None


def test_best_statistic_is_not_fooled_by_interference():
    base = [1.00, 1.00, 1.01, 1.01, 1.02]
    disturbed = [1.00, 1.12, 1.13, 1.14, 1.15]  # four repeats slowed by other jobs, one clean
    assert compare.compare_values(base, disturbed, "lower", statistic="median")["verdict"] == "regressed"
    assert compare.compare_values(base, disturbed, "lower", statistic="best")["verdict"] == "unchanged"
    # a real slowdown moves the best repeat too
    assert compare.compare_values(base, [v * 1.1 for v in base], "lower")["verdict"] == "regressed"
    rates = [1 / v for v in base]
    assert compare.location(rates, "higher") == max(rates) and compare.location(base, "lower") == min(base)


def test_statistic_option(tmp_path):
    base = synthetic_run(tmp_path, "base", {"t": [1.00, 1.00, 1.01, 1.01, 1.02]})
    cand = synthetic_run(tmp_path, "cand", {"t": [1.00, 1.12, 1.13, 1.14, 1.15]})
    assert run_cli("results", "compare", "--baseline", base, "--candidate", cand).returncode == 0
    median = run_cli("results", "compare", "--baseline", base, "--candidate", cand, "--statistic", "median")
    assert median.returncode == 1 and "statistic median" in median.stdout


def test_a_diagnostic_figure_changes_but_never_fails_the_gate(tmp_path):
    # measured: the 2-rank smoke solver's halo share moved 13 % -> 19 % between two runs of unchanged
    # code while its Mcells/s moved 5 %; efficiency and halo share only restate the throughput figures
    directions = {"mcells_per_s": "higher", "parallel_efficiency": "higher", "halo_share": "lower"}
    units = {"mcells_per_s": "Mcells/s", "parallel_efficiency": "%", "halo_share": "%"}
    base = synthetic_run(tmp_path, "a", {"mcells_per_s": [1650, 1640, 1660], "parallel_efficiency": [88, 89, 87],
                                         "halo_share": [13.5, 13.0, 14.0]}, directions=directions, units=units)
    shifted = synthetic_run(tmp_path, "b", {"mcells_per_s": [1645, 1650, 1655], "parallel_efficiency": [66, 65, 67],
                                            "halo_share": [19.0, 19.5, 18.8]}, directions=directions, units=units)
    proc = run_cli("results", "compare", "--baseline", base, "--candidate", shifted, "--no-history",
                   "--format", "json")
    assert proc.returncode == 0, proc.stdout
    verdicts = {r["metric"]: (r["verdict"], r.get("gated", True)) for r in json.loads(proc.stdout)["results"]}
    assert verdicts == {"mcells_per_s": ("unchanged", True), "parallel_efficiency": ("changed", False),
                        "halo_share": ("changed", False)}
    slower = synthetic_run(tmp_path, "c", {"mcells_per_s": [1300, 1310, 1290], "parallel_efficiency": [88, 89, 87],
                                           "halo_share": [13.5, 13.0, 14.0]}, directions=directions, units=units)
    proc = run_cli("results", "compare", "--baseline", base, "--candidate", slower, "--no-history")
    assert proc.returncode == 1 and "regressed" in proc.stdout


def test_compare_says_which_runs_to_repeat(tmp_path):
    for i, scale in enumerate((1.0, 0.99, 1.01, 0.98, 1.02)):
        synthetic_run(tmp_path, f"h{i}", {"mcells": [v * scale for v in QUIET_RUN]},
                      directions={"mcells": "higher"}, units={"mcells": "Mcells/s"})
    runs = tmp_path / "x"
    base = synthetic_run(runs, "base", {"mcells": QUIET_RUN}, directions={"mcells": "higher"})
    busy = synthetic_run(runs, "busy", {"mcells": DISTURBED_RUN}, directions={"mcells": "higher"})
    slow = synthetic_run(runs, "slow", {"mcells": SLOWER_BY_20_PERCENT}, directions={"mcells": "higher"})
    proc = run_cli("results", "compare", "--baseline", base, "--candidate", busy,
                   "--results-dir", tmp_path / "results")
    assert proc.returncode == 0 and "insufficient data (the candidate's repeats disagree)" in proc.stdout
    assert "1 figure(s) not judged: a run's repeats disagree" in proc.stderr
    proc = run_cli("results", "compare", "--baseline", base, "--candidate", slow,
                   "--results-dir", tmp_path / "results")
    assert proc.returncode == 1 and "regressed" in proc.stdout and "not judged" not in proc.stderr


def test_repeats_disagree_only_beyond_what_the_figure_usually_shows():
    # 1-rank runs recorded by the same benchmark: unchanged code, and the 20 % slower build
    unchanged, slowed = [943, 887, 863, 850, 844], [739, 640, 692, 708, 643]
    assert compare.top_spread(slowed, "higher") == pytest.approx(1 - 692 / 739)
    assert compare.top_spread([1.0, 3.0, 1.1], "lower") == pytest.approx(2.0)
    strict = compare.compare_values(unchanged, slowed, "higher", history_band=0.05)
    assert strict["verdict"] == "insufficient"
    # this figure's recorded runs spread 8.5 % among their best three: 6.4 % is not a disturbed run
    usual = compare.compare_values(unchanged, slowed, "higher", history_band=0.05, usual_spread=0.085)
    assert usual["verdict"] == "regressed"
    assert compare.compare_values(QUIET_RUN, DISTURBED_RUN, "higher", history_band=0.06,
                                  usual_spread=0.03)["verdict"] == "insufficient"
