"""The history cache: rebuilt from the run directories, never trusted when it disagrees; the noise model."""
import json
import random

import pytest

from results_testutil import run_cli, synthetic_run
from yeebench.results import history, noise


def _history_runs(tmp_path, n, sigma=0.02, seed=3):
    rng = random.Random(seed)
    return [synthetic_run(tmp_path, f"h{i:02d}", {"t": [rng.lognormvariate(0, sigma)]}) for i in range(n)]


def test_cache_follows_the_run_directories(tmp_path):
    runs = _history_runs(tmp_path, 6)
    results = tmp_path / "results"
    hist = history.open_history(results)
    assert hist.run_count() == 6 and hist.refreshed == 6
    hist.close()
    again = history.open_history(results)
    assert again.refreshed == 0          # nothing changed on disk: nothing re-read
    again.close()
    # a run edited on disk disagrees with the cache: re-read, never trusted
    rows = runs[0] / "rows.jsonl"
    row = json.loads(rows.read_text())
    row["value"] = 99.0
    rows.write_text(json.dumps(row) + "\n")
    edited = history.open_history(results)
    key = ("synth", "default", "builtin", "SynthCheck", "threads=1", "t")
    assert edited.refreshed == 1 and 99.0 in edited.values(["synth"])[key]
    edited.close()
    import shutil
    shutil.rmtree(runs[1])
    assert history.open_history(results).run_count() == 5


def test_corrupt_or_foreign_cache_is_rebuilt(tmp_path):
    _history_runs(tmp_path, 3)
    cache = tmp_path / "results" / history.CACHE_NAME
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(b"this is not a database" * 100)
    assert history.open_history(tmp_path / "results").run_count() == 3
    import sqlite3
    db = sqlite3.connect(cache)
    db.execute("UPDATE meta SET value = '999' WHERE key = 'layout'")
    db.commit()
    db.close()
    rebuilt = history.open_history(tmp_path / "results")
    assert rebuilt.refreshed == 3 and rebuilt.run_count() == 3


def test_a_cache_of_an_older_schema_under_the_same_layout_number_is_rebuilt(tmp_path):
    # a cache written when layout 2 meant a `corroborated` column, not `top_spread`
    _history_runs(tmp_path, 3)
    results = tmp_path / "results"
    import sqlite3
    db = sqlite3.connect(results / history.CACHE_NAME)
    db.executescript(history._TABLES.replace("top_spread REAL", "corroborated INTEGER"))
    db.execute("INSERT INTO meta VALUES ('layout', '2')")
    db.commit()
    db.close()
    rebuilt = history.open_history(results)
    assert rebuilt.refreshed == 3 and rebuilt.values(["synth"])


def test_noise_model_needs_enough_runs(tmp_path):
    _history_runs(tmp_path, history.MIN_HISTORY_RUNS - 1)
    hist = history.open_history(tmp_path / "results")
    assert hist.noise(["synth"]) == {}
    synthetic_run(tmp_path, "more", {"t": [1.0]})
    hist = history.open_history(tmp_path / "results")
    (band,) = hist.noise(["synth"]).values()
    assert 0.02 < band < 0.15   # 2 % lognormal noise: pairs differ by up to ~7 %, rarely more


def test_pair_band_follows_heavy_tails_but_not_a_disturbed_run():
    calm = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98]
    assert noise.pair_band(calm) < 0.05
    # runs another job disturbed (measured: 2-rank solver 590 and 1226 among 1600-1700 Mcells/s) are
    # events, not the figure's noise: left out, they do not widen the band to their swing
    assert noise.pair_band(calm + [3.0, 0.35]) < 0.05
    assert noise.centre_band(calm + [3.0]) < 0.05
    noisy = [1.0, 1.3, 0.8, 1.6, 0.9, 1.2, 0.7, 3.0]  # where every run is noisy nothing is left out
    assert noise.pair_band(noisy) > 2.0
    assert noise.pair_band([1.0]) is None


def test_a_disturbed_run_in_the_history_does_not_widen_the_noise_band(tmp_path):
    _history_runs(tmp_path, history.MIN_HISTORY_RUNS)
    synthetic_run(tmp_path, "disturbed", {"t": [9.0]})
    hist = history.open_history(tmp_path / "results")
    (band,) = hist.noise(["synth"]).values()
    assert band < 0.15


def test_a_run_whose_best_its_repeats_do_not_repeat_stays_out_of_the_history_of_the_best(tmp_path):
    for i in range(history.MIN_HISTORY_RUNS):
        synthetic_run(tmp_path, f"h{i:02d}", {"t": [1.0 + i / 100, 1.01 + i / 100, 1.02 + i / 100]})
    # the whole run slowed by the host: its best is an event, not the figure's noise
    synthetic_run(tmp_path, "zz-disturbed", {"t": [1.25, 1.6, 1.9, 1.26]})
    hist = history.open_history(tmp_path / "results")
    (best,) = hist.values(["synth"]).values()
    (median,) = hist.values(["synth"], statistic="median").values()
    assert 1.25 not in best and len(best) == history.MIN_HISTORY_RUNS
    assert len(median) == history.MIN_HISTORY_RUNS + 1


def test_the_usual_spread_of_a_figures_repeats_comes_from_its_history(tmp_path):
    spreads = [0.01, 0.02, 0.03, 0.04, 0.05, 0.06]
    for i, spread in enumerate(spreads):
        synthetic_run(tmp_path, f"h{i:02d}", {"t": [1.0, 1.0 + spread / 2, 1.0 + spread, 1.5]})
    synthetic_run(tmp_path, "single", {"t": [1.0]})      # one repeat spreads nothing: not counted
    hist = history.open_history(tmp_path / "results")
    (usual,) = hist.usual_spread(["synth"]).values()
    assert usual == pytest.approx(0.055)                 # numpy's 90th percentile of the six
    assert hist.usual_spread(["synth"], exclude_run_ids=["h00", "h01"]) == {}


def test_history_lets_single_runs_be_judged(tmp_path):
    _history_runs(tmp_path, 8)
    results = tmp_path / "results"
    base = synthetic_run(tmp_path / "x", "base", {"t": [1.0]})
    slow = synthetic_run(tmp_path / "x", "slow", {"t": [1.2]})
    same = synthetic_run(tmp_path / "x", "same", {"t": [1.01]})
    proc = run_cli("results", "compare", "--baseline", base, "--candidate", slow, "--results-dir", results)
    assert proc.returncode == 1 and "regressed" in proc.stdout, proc.stdout
    proc = run_cli("results", "compare", "--baseline", base, "--candidate", slow, "--results-dir", results,
                   "--no-history")
    assert proc.returncode == 0 and "insufficient data" in proc.stdout
    for candidate, code in ((slow, 1), (same, 0)):
        proc = run_cli("results", "compare", "--baseline", "history", "--candidate", candidate,
                       "--results-dir", results)
        assert proc.returncode == code, proc.stdout + proc.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_cli("results", "compare", "--baseline", "history", "--candidate", slow, "--results-dir", empty)
    assert proc.returncode == 2 and "no recorded runs of synth" in proc.stderr


def test_a_corrupt_run_is_left_out_of_the_history_and_said_so(tmp_path):
    runs = _history_runs(tmp_path, 6)
    (runs[0] / "rows.jsonl").write_text('{"trunc')
    hist = history.open_history(tmp_path / "results")
    assert hist.run_count() == 5 and "corrupt or truncated" in hist.unreadable[0]
    a = synthetic_run(tmp_path / "x", "a", {"t": [1.0]})
    proc = run_cli("results", "compare", "--baseline", a, "--candidate", a, "--results-dir", tmp_path / "results")
    assert proc.returncode == 0 and "left out of the history" in proc.stderr
