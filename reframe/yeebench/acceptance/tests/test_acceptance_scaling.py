"""Speedup, efficiency and the knee (paper 003: scaling stops past 12 threads per node)."""
import pytest

from yeebench.acceptance.scaling import analyse, powers_of_two_upto, summary


def test_paper_like_curve_has_knee_past_twelve():
    # ideal up to 12 threads, flat beyond (shared instruction cache thrashing)
    points = {1: 10.0, 2: 20.0, 4: 40.0, 8: 80.0, 12: 120.0, 16: 125.0, 24: 126.0}
    rows, knee = analyse(points)
    assert knee == 16
    assert rows[4]["speedup"] == pytest.approx(12) and rows[4]["efficiency"] == pytest.approx(1)
    assert rows[-1]["efficiency"] == pytest.approx(126 / 10 / 24)
    assert "knee at 16 workers" in summary("threads", rows, knee, "Mcells/s")


def test_ideal_scaling_has_no_knee_and_base_other_than_one():
    rows, knee = analyse({2: 4.0, 4: 8.0, 8: 16.0})
    assert knee is None and all(r["efficiency"] == pytest.approx(1) for r in rows)
    assert summary("p", rows, knee, "GB/s").endswith("no knee")


def test_slowdown_is_a_knee_at_once():
    rows, knee = analyse({1: 10.0, 2: 5.0})
    assert knee == 2 and rows[1]["speedup"] == 0.5


def test_single_point():
    rows, knee = analyse({1: 3.0})
    assert knee is None and rows[0]["speedup"] == 1.0 and rows[0]["marginal"] is None


@pytest.mark.parametrize("points, message", [
    ({}, "no scaling points"), ({0: 1.0}, "not a positive integer"), ({1: 0.0}, "not positive"),
    ({1: None}, "not positive"), ({1.5: 1.0}, "not a positive integer"),
])
def test_bad_points(points, message):
    with pytest.raises(ValueError, match=message):
        analyse(points)


def test_counts():
    assert powers_of_two_upto(1) == [1]
    assert powers_of_two_upto(2) == [1, 2]
    assert powers_of_two_upto(24) == [1, 2, 4, 8, 16, 24]
    with pytest.raises(ValueError):
        powers_of_two_upto(0)
