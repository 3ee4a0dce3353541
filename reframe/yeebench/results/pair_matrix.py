"""The all-pairs network figures of a run: AcceptanceNetwork's pair matrix, one per test case
(a partition), from the `pair A - B: L us, B MB/s` lines the check records in its acceptance
details (ingest keeps them in the provenance's jobs).

Each matrix knows its nodes (the case's node list, else the nodes its pairs name), its measured
pairs, the pairs it lacks (a hole is said, never drawn as a value), and its outlier nodes by the
check's own rule (yeebench.outliers: a node's median over its pairs, worse than the
median node's by more than the tolerance).
"""
import re
from collections import namedtuple

from yeebench import outliers

#: AcceptanceNetwork's detail line for one pair (acceptance_network.py: validate).
PAIR_LINE = re.compile(r"^pair (\S+) - (\S+): (\S+) us, (\S+) MB/s$")
#: As AcceptanceNetwork's default `tolerance`: a node this much worse than the median node is an outlier;
#: a case that recorded the tolerance it ran with (ingest keeps it beside the pair lines) is judged by that.
TOLERANCE = 0.5

def usable_tolerance(value):
    """A recorded tolerance as a float when it is one the outlier rule can use (0 < t <= 100), else None:
    a recorded file is data from outside (a string, NaN, 1e400, True)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 100:
        return None
    return float(value)


Matrix = namedtuple("Matrix", "check testcase partition nodes latency bandwidth missing outliers notes tolerance")


def _number(text):
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and value not in (float("inf"), float("-inf")) else None


def parse(lines):
    """({(a, b): latency us}, {(a, b): bandwidth MB/s}, [lines that look like pairs but do not parse])."""
    latency, bandwidth, bad = {}, {}, []
    for line in lines:
        found = PAIR_LINE.match(line) if isinstance(line, str) else None
        if not found:
            if isinstance(line, str) and line.startswith("pair "):
                bad.append(line)
            continue
        a, b, lat, bw = found.groups()
        lat, bw = _number(lat), _number(bw)
        if a == b or lat is None or bw is None or lat <= 0 or bw <= 0:
            bad.append(line)
            continue
        pair = (a, b) if a < b else (b, a)
        latency[pair], bandwidth[pair] = lat, bw
    return latency, bandwidth, bad


def _outliers(latency, bandwidth, tolerance=TOLERANCE):
    """{node: 'latency 3.1 us vs median 1.3 us (138% worse)'} by the check's rule on either figure."""
    found = {}
    for figures, direction, metric, unit in ((latency, "lower", "latency", "us"),
                                              (bandwidth, "higher", "bandwidth", "MB/s")):
        try:
            named, _ = outliers.find_outliers(figures, direction, tolerance)
        except ValueError:
            continue
        for item, text in zip(named, outliers.describe(named, metric, unit)):
            found.setdefault(item["node"], text.split(": ", 1)[1])
    return found


def matrix_of(case, partition):
    """The Matrix of one recorded test case with pair lines; None when it has none."""
    lines = case.get("details") or []
    latency, bandwidth, bad = parse(lines)
    if not latency and not bad:
        return None
    seen = sorted({n for pair in latency for n in pair})
    listed = [str(n) for n in case.get("nodelist") or []]
    # the node list names the nodes that should pair up, unless the pairs name ranks (host/rank) instead
    nodes = listed if listed and set(seen) <= set(listed) else seen
    notes = []
    if bad:
        notes.append(f"{len(bad)} pair line(s) unreadable, e.g. {bad[0][:120]!r}")
    if case.get("details_left_out"):
        notes.append(f"{case['details_left_out']} detail line(s) not recorded at ingest (too many to keep)")
    expected = len(nodes) * (len(nodes) - 1) // 2
    missing_count = expected - len(latency)
    missing = []
    if missing_count > 0 and len(nodes) <= 2000:   # listing the holes of a larger matrix costs more than it says
        index = {n: i for i, n in enumerate(nodes)}
        have = {(index[a], index[b]) if index[a] < index[b] else (index[b], index[a]) for a, b in latency}
        missing = [(nodes[i], nodes[j]) for i in range(len(nodes)) for j in range(i + 1, len(nodes))
                   if (i, j) not in have]
    tolerance = usable_tolerance(case.get("tolerance")) or TOLERANCE
    return Matrix(case.get("check") or case.get("testcase"), case.get("testcase"), partition, nodes, latency,
                  bandwidth, max(missing_count, 0) if not missing else missing,
                  _outliers(latency, bandwidth, tolerance), notes, tolerance)


def matrices(provenances, partition_of=lambda case: None):
    """Every pair matrix the runs recorded, in the order of their test cases."""
    out = []
    for prov in provenances:
        for case in (prov.get("jobs") or {}).get("cases", []):
            if isinstance(case, dict) and isinstance(case.get("details"), list):
                found = matrix_of(case, partition_of(case))
                if found is not None:
                    out.append(found)
    return out


def missing_text(matrix, shown=4):
    """'3 of 15 pairs not measured: node0001-node0004, ...', or '' when none is missing."""
    expected = len(matrix.nodes) * (len(matrix.nodes) - 1) // 2
    if isinstance(matrix.missing, int):
        return f"{matrix.missing} of {expected} pairs not measured" if matrix.missing else ""
    if not matrix.missing:
        return ""
    names = ", ".join(f"{a}-{b}" for a, b in matrix.missing[:shown])
    more = f" and {len(matrix.missing) - shown} more" if len(matrix.missing) > shown else ""
    return f"{len(matrix.missing)} of {expected} pairs not measured: {names}{more}"
