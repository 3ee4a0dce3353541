"""Outlier nodes of a pair matrix: median of each node's pairs against the median node."""
import itertools

import pytest

from yeebench.outliers import describe, find_outliers, node_figures


def matrix(nodes, value, bad=None, bad_value=None):
    return {(a, b): (bad_value if bad in (a, b) else value) for a, b in itertools.combinations(nodes, 2)}


def test_slow_node_is_named_for_latency():
    pairs = matrix(["n1", "n2", "n3", "n4", "n5"], 2.0, bad="n4", bad_value=9.0)
    found, note = find_outliers(pairs, "lower")
    assert note is None and [o["node"] for o in found] == ["n4"]
    assert describe(found, "latency", "us")[0].startswith("n4: latency 9 us vs median 2 us")


def test_weak_link_node_is_named_for_bandwidth():
    pairs = matrix(["a", "b", "c", "d"], 1000.0, bad="c", bad_value=300.0)
    found, _ = find_outliers(pairs, "higher")
    assert [o["node"] for o in found] == ["c"]
    assert found[0]["deviation"] == pytest.approx(1000 / 300 - 1)


def test_uniform_matrix_and_noise_within_tolerance_have_no_outlier():
    pairs = matrix(["a", "b", "c", "d"], 5.0)
    pairs[("a", "b")] = 6.0
    assert find_outliers(pairs, "lower") == ([], None)


def test_two_nodes_cannot_blame_either_end():
    found, note = find_outliers({("a", "b"): 100.0}, "lower")
    assert found == [] and "needs >= 3 nodes" in note


def test_better_than_median_is_never_an_outlier():
    pairs = matrix(["a", "b", "c", "d"], 5.0, bad="d", bad_value=0.5)
    assert find_outliers(pairs, "lower")[0] == []


@pytest.mark.parametrize("pairs, direction, tolerance, message", [
    ({("a", "a"): 1.0}, "lower", 0.5, "joins a node to itself"),
    ({("a", "b"): 0.0}, "lower", 0.5, "no positive figure"),
    ({("a", "b"): float("nan")}, "lower", 0.5, "no positive figure"),
    ({("a", "b"): 1.0}, "sideways", 0.5, "direction"),
    ({("a", "b"): 1.0}, "lower", 0, "tolerance"),
])
def test_bad_input(pairs, direction, tolerance, message):
    with pytest.raises(ValueError, match=message):
        find_outliers(pairs, direction, tolerance)


def test_node_figure_is_median_of_its_pairs():
    figures = node_figures({("a", "b"): 1.0, ("a", "c"): 3.0, ("a", "d"): 100.0, ("b", "c"): 2.0})
    assert figures["a"] == 3.0 and figures["b"] == 1.5
