"""Robust statistics for the regression gate: median, MAD, Mann-Whitney U."""
import math
from functools import lru_cache

MAD_TO_SIGMA = 1.4826      # MAD of a normal sample * this = its standard deviation
MEDIAN_SE_FACTOR = 1.2533  # standard error of a median = this * sigma / sqrt(n) (normal data)


def median(values):
    data = sorted(values)
    n = len(data)
    if n == 0:
        raise ValueError("median of no values")
    mid = n // 2
    return data[mid] if n % 2 else 0.5 * (data[mid - 1] + data[mid])


def mad(values):
    """Median absolute deviation from the median (unscaled)."""
    centre = median(values)
    return median([abs(v - centre) for v in values])


def robust_relative_sigma(values):
    """MAD-based standard deviation relative to the median (0 for a single value)."""
    if len(values) < 2:
        return 0.0
    centre = median(values)
    if centre == 0:
        return 0.0
    return MAD_TO_SIGMA * mad(values) / abs(centre)


def _ranks(values):
    """Mid-ranks (1-based) of values, ties sharing the average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


@lru_cache(maxsize=None)
def _u_counts(n, m):
    """Number of arrangements giving each U statistic for samples of size n and m (no ties)."""
    # counts[i][j][u]: ways for i x's and j y's to give u; built with the standard recurrence
    table = {(0, j): {0: 1} for j in range(m + 1)}
    for i in range(1, n + 1):
        table[(i, 0)] = {0: 1}
        for j in range(1, m + 1):
            dist = {}
            for u, c in table[(i - 1, j)].items():   # largest value is an x: beats all j y's
                dist[u + j] = dist.get(u + j, 0) + c
            for u, c in table[(i, j - 1)].items():   # largest value is a y
                dist[u] = dist.get(u, 0) + c
            table[(i, j)] = dist
    return table[(n, m)]


def mann_whitney_greater(x, y):
    """One-sided p-value for 'x tends to be larger than y' (Mann-Whitney U).

    Exact for small samples without ties, normal approximation with tie and
    continuity correction otherwise.
    """
    n, m = len(x), len(y)
    if n == 0 or m == 0:
        raise ValueError("Mann-Whitney needs two non-empty samples")
    ranks = _ranks(list(x) + list(y))
    u = sum(ranks[:n]) - n * (n + 1) / 2  # times an x beats a y (ties count 1/2)
    has_ties = len(set(list(x) + list(y))) < n + m
    if not has_ties and n * m <= 400:
        counts = _u_counts(n, m)
        total = math.comb(n + m, n)
        return sum(c for k, c in counts.items() if k >= u) / total
    mean = n * m / 2
    tie_term = 0.0
    values = sorted(list(x) + list(y))
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[i]:
            j += 1
        t = j - i + 1
        tie_term += t ** 3 - t
        i = j + 1
    total = n + m
    variance = n * m / 12 * ((total + 1) - tie_term / (total * (total - 1)))
    if variance <= 0:
        return 1.0
    z = (u - mean - 0.5) / math.sqrt(variance)
    return 0.5 * math.erfc(z / math.sqrt(2))
