"""Measured NUMA costs against the distances the firmware reports.

Paper 003 read `numactl --hardware` distances of 16 (compute nodes) and 20 (GPU
nodes) as ~60 % and ~100 % extra cost of remote memory.  Acceptance measures it:
bandwidth with the threads on NUMA node i and the memory bound to node j.
The check fails when the measurement contradicts the table: a remote node
faster than local memory (beyond noise), or a pair with a larger distance
clearly faster than one with a smaller distance from the same CPU node, beyond what the node's
noise explains (judge: the cells measured in rounds, taken in turn, and Mann-Whitney over them).
"""


def analyse(bandwidth, distances, tolerance=0.10):
    """bandwidth[i][j]: GB/s with CPUs on node i and memory on node j; distances: the same shape.

    Returns (problems, rows): problems is a list of strings (empty = consistent);
    rows describe each remote pair: {cpu, mem, gbs, cost_percent, implied_percent}.
    """
    found, rows = contradictions(bandwidth, distances, tolerance)
    return [message for _, _, message in found], rows


def judge(runs, distances, tolerance=0.10, alpha=0.01):
    """runs[i][j]: GB/s of every round of that cell (taken in turn, so a busy spell weighs on all cells alike).

    Each cell's figure is its best round (noise only slows a run). A contradiction counts only when the
    chance that noise alone ranked the rounds so (one-sided Mann-Whitney of the faster cell's rounds over
    the slower's) is at most alpha. Returns (problems, within_noise, rows): the contradictions that count,
    the others (each with its p), and analyse's rows."""
    from yeebench.stats import mann_whitney_greater
    best = [[max(cell) for cell in row] for row in runs]
    found, rows = contradictions(best, distances, tolerance)
    problems, within_noise = [], []
    for (fi, fj), (si, sj), message in found:
        fast, slow = runs[fi][fj], runs[si][sj]
        p = mann_whitney_greater(fast, slow)
        spread = (f"{len(fast)} rounds each: {min(fast):.3g}-{max(fast):.3g} against {min(slow):.3g}-{max(slow):.3g} "
                  f"GB/s, p = {p:.3g} that noise ranked them so")
        (problems if p <= alpha else within_noise).append(f"{message} ({spread})")
    return problems, within_noise, rows


def contradictions(bandwidth, distances, tolerance=0.10):
    """([((i, j) of the cell measured faster, (i, k) of the cell it should not beat, message)], rows)."""
    n = len(bandwidth)
    if n < 2:
        raise ValueError("need at least two NUMA nodes")
    if len(distances) != n or any(len(r) != n for r in list(bandwidth) + list(distances)):
        raise ValueError(f"bandwidth and distances must both be {n}x{n}")
    if any(not (isinstance(v, (int, float)) and v > 0) for r in bandwidth for v in r):
        raise ValueError("every bandwidth must be a positive number")
    problems, rows = [], []
    for i in range(n):
        local = bandwidth[i][i]
        for j in range(n):
            if i == j:
                continue
            gbs = bandwidth[i][j]
            cost = 100.0 * (local / gbs - 1)
            implied = 100.0 * (distances[i][j] / distances[i][i] - 1)
            rows.append({"cpu": i, "mem": j, "gbs": gbs, "cost_percent": cost, "implied_percent": implied})
            if gbs > local * (1 + tolerance):
                problems.append(((i, j), (i, i), f"CPUs of node {i} read node {j}'s memory faster ({gbs:.3g} "
                                 f"GB/s) than their own ({local:.3g} GB/s): distances or memory binding are wrong"))
        for j in range(n):
            for k in range(n):
                if j == i or k == i or j == k or distances[i][j] >= distances[i][k]:
                    continue
                # j is nearer to i than k: k must not be clearly faster
                if bandwidth[i][k] > bandwidth[i][j] * (1 + tolerance):
                    problems.append(((i, k), (i, j), f"from node {i}, node {k} (distance {distances[i][k]}) is "
                                     f"faster than node {j} (distance {distances[i][j]}): {bandwidth[i][k]:.3g} vs "
                                     f"{bandwidth[i][j]:.3g} GB/s"))
    return problems, rows
