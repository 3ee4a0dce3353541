"""The one scaling arithmetic: speedup and parallel efficiency of a point against a base point."""
import pytest

from yeebench import comparisons, scaling


def test_speedup_of_a_rate_and_of_a_time():
    assert scaling.speedup(30.0, 10.0) == pytest.approx(3.0)
    assert scaling.speedup(10.0, 30.0, kind="time") == pytest.approx(3.0)   # a third of the time: 3x faster
    with pytest.raises(ValueError, match="kind"):
        scaling.speedup(1.0, 1.0, kind="speed")


def test_efficiency_against_a_one_worker_or_a_larger_base():
    # the solver's check: 8 cores at 6x the 1-core rate
    assert scaling.efficiency(600.0, 8, 100.0) == pytest.approx(0.75)
    # node scaling: 18 nodes against 4
    assert scaling.efficiency(4050.0, 18, 1000.0, base_workers=4) == pytest.approx(0.9)
    assert scaling.efficiency(25.0, 4, 100.0, kind="time") == pytest.approx(1.0)
    assert scaling.efficiency(100.0, 1, 100.0) == 1.0


def test_efficiency_against_smallest_in_percent():
    eff = scaling.efficiency_against_smallest({2: 180.0, 1: 100.0, 4: 300.0})
    assert list(eff) == [1, 2, 4]
    assert eff == {1: pytest.approx(100.0), 2: pytest.approx(90.0), 4: pytest.approx(75.0)}
    times = scaling.efficiency_against_smallest({1: 100.0, 4: 50.0}, kind="time")
    assert times[4] == pytest.approx(50.0)


@pytest.mark.parametrize("points", [{}, {1: 100.0, 2: 0.0}, {1: None, 2: 5.0}, {1: float("nan")}, {1: -1.0}])
def test_efficiency_against_smallest_refuses_what_it_cannot_divide(points):
    with pytest.raises(comparisons.ComparisonError):
        scaling.efficiency_against_smallest(points)


def test_analyse_rows_use_the_same_efficiency():
    rows, _ = scaling.analyse({2: 4.0, 8: 12.0})
    assert rows[1]["efficiency"] == pytest.approx(scaling.efficiency(12.0, 8, 4.0, base_workers=2))
    assert rows[1]["efficiency"] == pytest.approx(0.75)
