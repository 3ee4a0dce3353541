"""Speedup, parallel efficiency and the knee of a scaling series.

Paper 003 found the cluster's scaling fell apart past 12 threads per node
(figures 2-4).  The knee is where adding workers stops paying: the first
count whose marginal efficiency (speedup gained per worker added, relative to
ideal) drops below a threshold.
"""


def analyse(points, knee_threshold=0.5):
    """points: {workers: throughput FOM (higher is better)}, at least one entry.

    Returns a list of rows {workers, fom, speedup, efficiency, marginal} in
    ascending worker order and the knee (workers) or None.
    """
    if not points:
        raise ValueError("no scaling points")
    for n, fom in points.items():
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"worker count {n!r} is not a positive integer")
        if fom is None or not fom > 0:
            raise ValueError(f"FOM at {n} workers is not positive: {fom!r}")
    counts = sorted(points)
    base_n, base = counts[0], points[counts[0]]
    rows, knee = [], None
    prev_n, prev_speedup = base_n, 1.0
    for n in counts:
        speedup = points[n] / base
        efficiency = speedup * base_n / n
        marginal = None
        if n > prev_n:
            ideal_gain = (n - prev_n) / base_n
            marginal = (speedup - prev_speedup) / ideal_gain
            if knee is None and marginal < knee_threshold:
                knee = n
        rows.append({"workers": n, "fom": points[n], "speedup": speedup,
                     "efficiency": efficiency, "marginal": marginal})
        prev_n, prev_speedup = n, speedup
    return rows, knee


def powers_of_two_upto(limit):
    """1, 2, 4, ... up to limit, with limit itself always included."""
    if limit < 1:
        raise ValueError(f"limit {limit} < 1")
    counts, n = [], 1
    while n < limit:
        counts.append(n)
        n *= 2
    counts.append(limit)
    return counts


def summary(label, rows, knee, unit):
    """One line for the check's output."""
    last = rows[-1]
    text = (f"{label}: {last['workers']} workers reach speedup {last['speedup']:.2f} "
            f"(efficiency {100 * last['efficiency']:.0f}%, {last['fom']:.4g} {unit})")
    if knee is None:
        return text + "; no knee"
    return text + f"; knee at {knee} workers (adding them gains < half the ideal)"
