"""AcceptanceNUMACosts keeps the compute node's own `numactl --hardware` distance table in its
observations['hardware'], where the report's paper figures read a case's facts (the provenance's
topology is the machine that ran ingest, not the node).  The sanity function runs on a stand-in
stage directory; the bandwidth of each cell is given, not measured."""
import types

from yeebench.checks.numa.acceptance_numa import AcceptanceNUMACosts

NUMACTL = """available: 2 nodes (0-1)
node 0 cpus: 0 1 2 3
node 0 size: 32000 MB
node 0 free: 30000 MB
node 1 cpus: 4 5 6 7
node 1 size: 32768 MB
node 1 free: 31000 MB
node distances:
node   0   1
  0:  10  16
  1:  16  10
"""


def _check(tmp_path, triad):
    (tmp_path / "numactl.txt").write_text(NUMACTL)
    check = types.SimpleNamespace(stagedir=str(tmp_path), rounds=3, nodes=2, tolerance=0.10, alpha=0.01,
                                  observations={}, stderr="stderr.txt", _triad=triad,
                                  verdict=lambda ok, reason, details=(): (ok, reason),
                                  not_measured=lambda reason, details=(): (None, reason))
    return check


def test_the_nodes_distance_table_is_recorded_as_the_cases_hardware(tmp_path):
    check = _check(tmp_path, lambda i, j, r: 100.0 if i == j else 62.0)
    ok, reason = AcceptanceNUMACosts.validate(check)
    assert ok, reason
    assert check.observations["hardware"] == {"numa_distances": [[10, 16], [16, 10]]}


def test_the_table_is_recorded_even_when_a_bandwidth_run_is_unreadable(tmp_path):
    def broken(i, j, r):
        raise ValueError("numa-bw run cpu 0 / memory 1 (round 1) is not valid")

    check = _check(tmp_path, broken)
    ok, _ = AcceptanceNUMACosts.validate(check)
    assert ok is False and check.observations["hardware"]["numa_distances"] == [[10, 16], [16, 10]]
