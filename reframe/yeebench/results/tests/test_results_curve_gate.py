"""Whole curves under the gate: per-size figures recorded by the checks, judged size by size and as a
curve (results/curve_gate.py), through the real `yeebench results compare`."""
import json
import math
from pathlib import Path

import pytest

from yeebench import curve_foms
from yeebench.parsers import netpipe, osu as osu_parser
from yeebench.results import compare, curve_gate
from yeebench.results.errors import ResultsError
from yeebench.results.tests.results_testutil import run_cli, synthetic_run

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"     # recorded OSU and NetPIPE output
SIZES = [2 ** e for e in range(0, 18)]          # 1 B ... 128 KiB
PARAMS = {"benchmark": "osu_latency", "transport": "ob1-vader", "locality": "intra"}
REPEATS = 5


def _latency(size):
    return 0.3 + size * 2.5e-4                  # an alpha-beta curve, us


def _repeats(value, spread=0.004):
    """Five repeats around `value`, a fraction `spread` apart (a quiet machine)."""
    return [value * (1 + spread * (i - 2)) for i in range(REPEATS)]


def _curve(worse=None, drop=(), extra=(), summary=True, per_size=True):
    """{metric: repeats} of one osu_latency case; worse: {size: factor} applied to the candidate."""
    figures = {}
    if summary:
        figures["latency_1B"] = _repeats(_latency(1) * (worse or {}).get("latency_1B", 1.0))
        figures["latency_4KB"] = _repeats(_latency(4096))
    if per_size:
        for size in [s for s in SIZES if s not in drop] + list(extra):
            figures[curve_foms.size_metric("curve_latency", size)] = _repeats(_latency(size) * (worse or {}).get(size, 1.0))
    return figures


def _run(tmp_path, name, figures):
    return synthetic_run(tmp_path, name, figures, check="OsuPt2Pt", params=PARAMS,
                         units={m: "us" for m in figures}, directions={m: "lower" for m in figures})


def _compare(tmp_path, base, cand, *options):
    return run_cli("results", "compare", "--baseline", _run(tmp_path, "base", base),
                   "--candidate", _run(tmp_path, "cand", cand), "--no-history", *options)


def _one_line(stderr, needle):
    return [line for line in stderr.splitlines() if needle in line]


# -- what the checks record -------------------------------------------------------------------------
def test_osu_latency_records_a_figure_at_every_measured_size():
    sizes, values = osu_parser.parse((DATA / "osu" / "7.4-osu_latency.txt").read_text()).column("latency_us")
    foms = {name: (value, unit, direction) for name, value, unit, direction in curve_foms.size_foms(sizes, values)}
    assert len(foms) == len(set(sizes)) > 10
    for size, value in zip(sizes, values):
        assert foms[f"curve_latency_{size}B"] == (value, "us", "lower")
    assert not any(name.startswith("curve_bw") for name in foms)   # a ping-pong's bandwidth is derived


def test_netpipe_records_latency_and_bandwidth_per_size_and_the_gate_reads_them_back():
    curve = netpipe.curve((DATA / "netpipe" / "np-default.out").read_text())
    foms = curve_foms.size_foms(curve.sizes, curve.latency_us, curve.bandwidth)
    powers = [s for s in curve.sizes if s > 0 and not s & (s - 1)]
    assert len(powers) > 10 and len(foms) == 2 * len(set(powers)) and len(set(powers)) < len(curve)
    parsed = {curve_foms.parse_size_metric(name): (value, unit) for name, value, unit, _ in foms}
    for size, lat, bw in zip(curve.sizes, curve.latency_us, curve.bandwidth):
        if size in powers:
            assert parsed[("curve_latency", size)] == (lat, "us") and parsed[("curve_bw", size)] == (bw, "MB/s")
        else:
            assert ("curve_latency", size) not in parsed


def test_summary_figures_are_not_mistaken_for_a_curve():
    keys = [("s", "p", "e", "OsuPt2Pt", "x", m) for m in ("latency_1B", "latency_4KB", "peak_bw", "n_half")]
    assert curve_gate.curve_members(keys) == {}     # a lone latency_1B is the interpolated summary
    ends = [("s", "p", "e", "OsuCollectiveNodeCurve", "x", f"latency_{n}B") for n in (1, 4096)]
    assert curve_gate.curve_members(keys + ends) == {}  # the smallest and largest size: two figures
    both = keys + [("s", "p", "e", "OsuCollective", "x", f"latency_{n}B") for n in (1, 2, 4)]
    assert set(curve_gate.curve_members(both)) == {k for k in both if k[3] == "OsuCollective"}


# -- the gate -------------------------------------------------------------------------------------
def test_one_size_regressed_beyond_the_count_fails_and_names_the_size(tmp_path):
    proc = _compare(tmp_path, _curve(), _curve(worse={65536: 1.4}), "--max-regressed-sizes", "0")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failed = _one_line(proc.stderr, "curve regressed")
    assert len(failed) == 1 and "65536 B +40.0%" in failed[0] and "1 of 18 sizes" in failed[0], proc.stderr
    assert "OsuPt2Pt" in failed[0] and "curve_latency" in failed[0]


def test_more_sizes_than_the_default_count_fail(tmp_path):
    proc = _compare(tmp_path, _curve(), _curve(worse={32768: 1.3, 65536: 1.3}))
    assert proc.returncode == 1, proc.stderr
    failed = _one_line(proc.stderr, "curve regressed")
    assert len(failed) == 1 and "32768 B" in failed[0] and "65536 B" in failed[0]


def test_a_curve_within_noise_passes_silently(tmp_path):
    jitter = {size: 1 + 0.01 * math.sin(size) for size in SIZES}    # +-1 %, under any size's tolerance
    proc = _compare(tmp_path, _curve(), _curve(worse=jitter), "--max-regressed-sizes", "0")
    assert proc.returncode == 0, proc.stderr
    assert not _one_line(proc.stderr, "curve") and "regressed" not in proc.stdout.split("summary:")[1]


def test_fewer_regressed_sizes_than_the_count_pass_with_a_warning(tmp_path):
    proc = _compare(tmp_path, _curve(), _curve(worse={65536: 1.4}), "--max-regressed-sizes", "2")
    assert proc.returncode == 0, proc.stderr
    warned = _one_line(proc.stderr, "warning: curve")
    assert len(warned) == 1 and "65536 B +40.0%" in warned[0] and "up to 2 allowed" in warned[0]
    table = [line for line in proc.stdout.splitlines() if "curve_latency_65536B" in line]
    assert table and table[0].rstrip().endswith("changed")


def test_the_per_size_tolerance_is_its_own_option(tmp_path):
    worse = {65536: 1.08}                       # beyond the 5 % threshold, within the 10 % per size
    assert _compare(tmp_path, _curve(), _curve(worse=worse), "--max-regressed-sizes", "0").returncode == 0
    strict = _compare(tmp_path / "strict", _curve(), _curve(worse=worse), "--max-regressed-sizes", "0",
                      "--size-threshold", "5%")
    assert strict.returncode == 1 and "65536 B +8.0%" in strict.stderr


def test_a_summary_latency_still_fails_alone_beside_a_curve(tmp_path):
    proc = _compare(tmp_path, _curve(), _curve(worse={"latency_1B": 1.3}), "--max-regressed-sizes", "5")
    assert proc.returncode == 1 and "latency_1B" in proc.stdout, proc.stderr


def test_an_old_baseline_without_per_size_figures_gates_the_summary_as_before(tmp_path):
    old = _curve(per_size=False)
    proc = _compare(tmp_path, old, _curve(worse={65536: 2.0}), "--fail-on-missing")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "curve_latency" not in proc.stdout     # the curve has nothing to be judged against
    assert len(_one_line(proc.stderr, "no per-size figures in the baseline")) == 1
    slower = _compare(tmp_path / "slower", old, _curve(worse={"latency_1B": 1.3}))
    assert slower.returncode == 1 and "regressed" in slower.stdout


# -- hostile input ------------------------------------------------------------------------------------
def test_a_size_of_the_baseline_not_in_the_run_is_one_line_naming_it(tmp_path):
    proc = _compare(tmp_path, _curve(), _curve(drop=(65536,)))
    assert proc.returncode == 1
    lines = _one_line(proc.stderr, "not measured in the candidate")
    assert len(lines) == 1 and "65536 B" in lines[0], proc.stderr
    assert _compare(tmp_path / "allowed", _curve(), _curve(drop=(65536,)), "--allow-missing").returncode == 0


def test_a_size_only_the_run_measured_is_noted_not_judged(tmp_path):
    proc = _compare(tmp_path, _curve(), _curve(extra=(3,)))
    assert proc.returncode == 0, proc.stderr
    lines = _one_line(proc.stderr, "not in the baseline")
    assert len(lines) == 1 and "3 B" in lines[0]


@pytest.mark.parametrize("bad", [float("nan"), -1.0, float("inf")])
def test_a_bad_per_size_value_is_one_line_and_exit_2(tmp_path, bad):
    base = _run(tmp_path, "base", _curve())
    cand = _run(tmp_path, "cand", _curve())
    rows_file = cand / "rows.jsonl"
    rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    for row in rows:
        if row["metric"] == "curve_latency_1024B":
            row["value"] = bad
    rows_file.write_text("".join(json.dumps(row) + "\n" for row in rows))
    proc = run_cli("results", "compare", "--baseline", base, "--candidate", cand, "--no-history")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "curve_latency_1024B" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_negative_size_figure_in_rows_given_directly_is_refused():
    rows = [dict(system="s", partition="p", environ="e", check="C", parameters={}, metric=f"curve_bw_{n}B",
                 value=v, unit="MB/s", direction="higher") for n, v in ((1, 5.0), (2, -1.0), (4, 9.0))]
    with pytest.raises(ResultsError, match="curve_bw_2B = -1.0"):
        compare.compare_rows(rows, rows)


def test_bad_counts_are_usage_errors():
    proc = run_cli("results", "compare", "--baseline", "x", "--candidate", "y", "--max-regressed-sizes", "-1")
    assert proc.returncode == 2 and "must be >= 0" in proc.stderr


def test_history_mode_applies_the_curve_rule():
    rows = [dict(system="s", partition="p", environ="e", check="C", parameters={}, metric=f"curve_latency_{n}B",
                 value=_latency(n) * (1.5 if n == 64 else 1.0), unit="us", direction="lower") for n in SIZES]
    history = {compare.row_key(r): [_latency(int(r["metric"][14:-1])) * f for f in (1.0, 1.01, 0.99, 1.0, 1.02)]
               for r in rows}
    notes = []
    results = compare.compare_with_history(rows, history, max_regressed_sizes=0, notes=notes)
    assert [r["metric"] for r in results if r["verdict"] == "regressed"] == ["curve_latency_64B"]
    assert len(notes) == 1 and "64 B +50.0%" in notes[0]


# -- the report's figure --------------------------------------------------------------------------------
def test_the_figure_draws_both_curves_and_marks_the_regressed_size(tmp_path):
    from yeebench.results import store
    from yeebench.results.figures import ALSO, common, size_curves
    assert size_curves in ALSO["OsuPt2Pt"] and size_curves in ALSO["NetPIPEPt2Pt"]
    base = store.load_run(_run(tmp_path, "base", _curve())).rows
    cand = store.load_run(_run(tmp_path, "cand", _curve(worse={65536: 1.4, 128: 1.4}))).rows
    judged = size_curves._judged(cand, base)
    assert {k[2] for k, (mark, _) in judged.items() if mark == "regressed"} == {128, 65536}
    sources = [common.Source("cand", cand, False), common.Source("baseline", base, True)]
    drawn = size_curves.draw("OsuPt2Pt", sources, tmp_path / "png")
    assert len(drawn.paths) == 1 and drawn.paths[0].stat().st_size > 0 and not drawn.notes
    assert size_curves.draw("OsuPt2Pt", [common.Source("old", _rows_without_curve(base), False)],
                            tmp_path / "png").paths == []    # nothing per size: the check's own figure stands


def _rows_without_curve(rows):
    return [r for r in rows if curve_gate.parse(r["metric"]) is None]
