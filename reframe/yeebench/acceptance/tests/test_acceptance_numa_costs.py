"""Measured NUMA bandwidth matrix against the firmware's distance table."""
import pytest

from yeebench.checks.numa.numa_costs import analyse, judge

THUFIR_GPU = [[10, 20, 20, 20], [20, 10, 20, 20], [20, 20, 10, 20], [20, 20, 20, 10]]


def test_consistent_two_socket_measurement():
    problems, rows = analyse([[20.0, 12.5], [12.0, 20.0]], [[10, 16], [16, 10]])
    assert problems == []
    first = rows[0]
    assert first["cost_percent"] == pytest.approx(60.0) and first["implied_percent"] == pytest.approx(60.0)


def test_remote_faster_than_local_fails():
    problems, _ = analyse([[10.0, 15.0], [12.0, 20.0]], [[10, 16], [16, 10]])
    assert len(problems) == 1 and "node 1's memory faster" in problems[0]


def test_farther_node_clearly_faster_than_nearer_fails():
    distances = [[10, 12, 20], [12, 10, 20], [20, 20, 10]]
    bw = [[20.0, 10.0, 15.0], [10.0, 20.0, 8.0], [8.0, 8.0, 20.0]]
    problems, _ = analyse(bw, distances)
    assert problems == ["from node 0, node 2 (distance 20) is faster than node 1 (distance 12): 15 vs 10 GB/s"]


def test_noise_within_tolerance_passes():
    bw = [[20.0, 10.0, 10.5, 9.8], [10.0, 20.0, 10.0, 10.0], [10.0, 10.0, 20.0, 10.0], [10, 10, 10, 20]]
    assert analyse(bw, THUFIR_GPU)[0] == []


@pytest.mark.parametrize("bw, dist, message", [
    ([[1.0]], [[10]], "at least two"),
    ([[1.0, 1.0], [1.0, 1.0]], [[10]], "2x2"),
    ([[1.0, 1.0], [1.0]], [[10, 20], [20, 10]], "2x2"),
    ([[1.0, 0.0], [1.0, 1.0]], [[10, 20], [20, 10]], "positive"),
])
def test_bad_input(bw, dist, message):
    with pytest.raises(ValueError, match=message):
        analyse(bw, dist)


TWO_SOCKETS = [[10, 16], [16, 10]]


def test_a_contradiction_counts_only_beyond_the_nodes_noise():
    # remote memory ahead of local in every one of 5 rounds: p = 1/252, a failure
    local, remote = [20.0, 20.5, 19.8, 20.2, 20.1], [24.0, 24.5, 23.9, 24.2, 24.8]
    problems, noise, _ = judge([[local, [12.0] * 5], [[12.5] * 5, [20.0] * 5]], TWO_SOCKETS)
    assert problems == [] and noise == []                       # consistent with the table
    problems, noise, _ = judge([[local, remote], [[12.0] * 5, [20.0] * 5]], TWO_SOCKETS)
    assert len(problems) == 1 and "node 1's memory faster" in problems[0] and "p = 0.00397" in problems[0]
    # the best remote round ahead by 22 %, but the rounds overlap: the noise explains it
    disturbed = [20.0, 14.0, 21.0, 13.0, 20.5]
    problems, noise, _ = judge([[[20.0, 21.0, 20.5, 19.5, 20.2], [25.0, 13.0, 20.8, 12.0, 19.0]],
                                [[12.0] * 5, disturbed]], TWO_SOCKETS)
    assert problems == [] and len(noise) == 1 and "p = " in noise[0]


def test_the_best_round_is_each_cells_figure():
    _, _, rows = judge([[[20.0, 10.0], [12.5, 6.0]], [[12.0, 12.0], [20.0, 5.0]]], TWO_SOCKETS)
    assert rows[0]["gbs"] == 12.5 and rows[0]["cost_percent"] == pytest.approx(60.0)
