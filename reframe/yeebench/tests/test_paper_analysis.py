"""Paper 001's fit and extrapolation (io_fits) and the comparisons' ratios (comparisons)."""
import math

import pytest

from yeebench import comparisons, io_fits, scaling
from yeebench.fits import FitError

PAPER_SIZES = list(range(30, 191, 10))


def test_cube_fit_recovers_a_plus_b_n_cubed():
    fit = io_fits.fit_cube(PAPER_SIZES, [0.01 + 2e-8 * n ** 3 for n in PAPER_SIZES])
    assert fit.a == pytest.approx(0.01) and fit.b == pytest.approx(2e-8)
    assert fit.rms_error == pytest.approx(0, abs=1e-9) and fit.points == 17


def test_cube_fit_error_is_the_rms_relative_error():
    # t = N^3 measured 10 % high at one size out of two: the line passes through both, error 0;
    # with three points off a line the error is what the formula gives, checked by hand
    sizes, times = [10, 20, 30], [1000.0, 8000.0 * 1.1, 27000.0]
    fit = io_fits.fit_cube(sizes, times)
    by_hand = math.sqrt(sum(((fit.a + fit.b * n ** 3 - t) / t) ** 2 for n, t in zip(sizes, times)) / 3)
    assert fit.rms_error == pytest.approx(by_hand) and fit.rms_error > 0.01


def test_cube_fit_minimises_the_relative_error_it_reports():
    # fixed cost 5 ms + per-cell cost, 10 % noise at alternating sizes: the small sizes count as much
    # as the large ones (plain least squares left the smallest ones tens of percent off)
    sizes = [12, 16, 20, 24, 32, 40]
    times = [(0.005 + 1e-9 * n ** 3) * (1.1 if i % 2 else 0.9) for i, n in enumerate(sizes)]
    fit = io_fits.fit_cube(sizes, times)

    def rms(a, b):
        return math.sqrt(sum(((a + b * n ** 3 - t) / t) ** 2 for n, t in zip(sizes, times)) / len(sizes))
    assert fit.rms_error == pytest.approx(rms(fit.a, fit.b))
    for da, db in ((1e-4, 0), (-1e-4, 0), (0, 1e-11), (0, -1e-11)):   # any nearby line is worse
        assert rms(fit.a + da, fit.b + db) > fit.rms_error
    # the unweighted least-squares line through the same points
    xs = [n ** 3 for n in sizes]
    mx, my = sum(xs) / len(xs), sum(times) / len(times)
    b = sum((x - mx) * (t - my) for x, t in zip(xs, times)) / sum((x - mx) ** 2 for x in xs)
    assert fit.rms_error < rms(my - b * mx, b)


def test_cube_fit_needs_two_sizes():
    with pytest.raises(FitError, match="two sizes"):
        io_fits.fit_cube([30, 30], [1.0, 1.1])
    with pytest.raises(FitError):
        io_fits.fit_cube([30, 40], [1.0, 0.0])


def test_extrapolation_follows_a_power_law_in_ranks():
    # time per step grows as p^0.5 at every size: 16 and 256 ranks follow it
    points = [(p, n, (0.001 + 1e-8 * n ** 3) * p ** 0.5) for p in (1, 2, 4, 8) for n in PAPER_SIZES]
    fits = io_fits.fit_by_ranks(points)
    assert sorted(fits) == [1, 2, 4, 8] and io_fits.combined_rms_error(fits) == pytest.approx(0, abs=1e-9)
    n = 190
    assert io_fits.extrapolate(fits, n, 16) == pytest.approx((0.001 + 1e-8 * n ** 3) * 4, rel=1e-9)
    assert io_fits.extrapolate(fits, n, 256) == pytest.approx((0.001 + 1e-8 * n ** 3) * 16, rel=1e-9)
    assert io_fits.extrapolate(fits, n, 4) == pytest.approx(io_fits.evaluate(fits[4], n))


def test_no_extrapolation_from_a_fit_whose_time_does_not_grow_with_size():
    fits = io_fits.fit_by_ranks([(1, 20, 0.5), (1, 30, 0.4), (2, 20, 0.5), (2, 30, 0.7)])
    with pytest.raises(FitError, match="does not grow with N.3 at 1 rank"):
        io_fits.extrapolate(fits, 30, 16)


def test_extrapolation_needs_two_rank_counts():
    fits = io_fits.fit_by_ranks([(1, 30, 0.1), (1, 60, 0.5), (2, 30, 0.2)])   # 2 ranks: one size only
    assert list(fits) == [1]
    with pytest.raises(FitError, match="two process counts"):
        io_fits.extrapolate(fits, 60, 16)


def test_speed_and_time_ratios_have_directions():
    assert comparisons.speed_ratio(5300, 2700) == (pytest.approx(1.963, abs=1e-3), "higher")
    assert comparisons.time_ratio(1.3, 1.0) == (pytest.approx(1.3), "lower")
    with pytest.raises(comparisons.ComparisonError, match="baseline"):
        comparisons.speed_ratio(1.0, 0.0)
    with pytest.raises(comparisons.ComparisonError):
        comparisons.time_ratio(float("nan"), 1.0)


def test_ratio_foms_name_each_case_over_the_baseline():
    foms = comparisons.ratio_foms({"per-node": 4900, "per-socket": 5300, "per-core": 2700}, "per-core", "rate")
    assert foms == [("per_node_over_per_core", pytest.approx(4900 / 2700), "x", "higher"),
                    ("per_socket_over_per_core", pytest.approx(5300 / 2700), "x", "higher")]
    (fom,) = comparisons.ratio_foms({"hdf5": 2.0, "binary": 1.0}, "binary", "time")
    assert fom == ("hdf5_over_binary", 2.0, "x", "lower")
    with pytest.raises(comparisons.ComparisonError, match="not measured"):
        comparisons.ratio_foms({"hdf5": 2.0}, "binary", "time")
    with pytest.raises(comparisons.ComparisonError, match="kind"):
        comparisons.ratio_foms({"a": 1.0}, "a", "speed")


def test_efficiency_against_the_smallest_node_count():
    # efficiency from rates; (paper 000's rounded times, 2 h on 4 nodes and 23 min on 18, would give
    # (120/23) / (18/4) = 116 %, not its "almost 90 %": the pages quote the 90 % and say so)
    eff = scaling.efficiency_against_smallest({4: 1000.0, 8: 1800.0, 18: 4050.0})
    assert eff == {4: pytest.approx(100.0), 8: pytest.approx(90.0), 18: pytest.approx(90.0)}
    with pytest.raises(comparisons.ComparisonError):
        scaling.efficiency_against_smallest({})


def test_size_sweeps_and_rank_counts():
    assert io_fits.parse_sizes("paper") == PAPER_SIZES and len(PAPER_SIZES) == 17
    assert io_fits.parse_sizes("60,30,60") == [30, 60]
    for bad, why in (("big", "comma list"), ("30,2", ">= 4"), ("", "comma list")):
        with pytest.raises(ValueError, match=why):
            io_fits.parse_sizes(bad)
    assert io_fits.rank_counts(2, 1) == [1, 2] and io_fits.rank_counts(2, 3) == [1, 2, 4]
    assert io_fits.rank_counts(2, 3, oversubscribe=True) == [1, 2, 4, 8, 16][:4]
