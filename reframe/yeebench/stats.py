"""Robust statistics for the regression gate and the checks' own verdicts (AcceptanceScaling's ASLR
comparison), through SciPy: median, MAD, Mann-Whitney U.

The gate runs on small samples (3-10 repeats), where the exact distribution of U
matters: without ties SciPy's exact method is used; with ties (coarse timers give
them) an exact permutation test over every split of the pooled sample, as long as
there are few enough splits; the normal approximation with tie correction only
for large samples.

scipy.stats is imported on first use: importing it costs about a second, more than the
whole of a compare that needs no test (history baselines, single repeats); for the same
reason the MAD is numpy's two lines (the test suite checks it against
scipy.stats.median_abs_deviation).
"""
import math

import numpy as np

MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2)  # standard error of a median = this * sigma / sqrt(n) (normal data)
MAD_TO_SIGMA = 1.482602218505602          # 1 / (normal quantile at 3/4): MAD -> sigma, as scipy's scale='normal'
EXACT_SPLITS_LIMIT = 20000                 # enumerate every split of the pooled sample up to this many


def median(values):
    if len(values) == 0:
        raise ValueError("median of no values")
    return float(np.median(np.asarray(values, dtype=float)))


def mad(values):
    """Median absolute deviation from the median (unscaled)."""
    data = np.asarray(values, dtype=float)
    return float(np.median(np.abs(data - np.median(data))))


def robust_relative_sigma(values):
    """MAD-based standard deviation (normal-consistent) relative to the median; 0 for one value."""
    if len(values) < 2:
        return 0.0
    centre = median(values)
    if centre == 0:
        return 0.0
    return MAD_TO_SIGMA * mad(values) / abs(centre)


def mann_whitney_greater(x, y):
    """One-sided p-value for 'x tends to be larger than y' (Mann-Whitney U)."""
    n, m = len(x), len(y)
    if n == 0 or m == 0:
        raise ValueError("Mann-Whitney needs two non-empty samples")
    pooled = list(x) + list(y)
    from scipy import stats as sps
    if len(set(pooled)) == 1:
        return 1.0  # every value the same: no evidence of any shift
    ties = len(set(pooled)) < n + m
    if not ties and n * m <= 400:
        method = "exact"
    elif ties and math.comb(n + m, n) <= EXACT_SPLITS_LIMIT:
        method = sps.PermutationMethod(n_resamples=math.comb(n + m, n))
    else:
        method = "asymptotic"
    result = sps.mannwhitneyu(x, y, alternative="greater", method=method)
    return float(result.pvalue)


def bootstrap_median_ci(values, confidence=0.95, seed=0):
    """Bootstrap confidence interval of the median, or None for fewer than 3 values."""
    if len(values) < 3 or len(set(values)) == 1:
        return None
    from scipy import stats as sps
    res = sps.bootstrap((np.asarray(values, dtype=float),), np.median, confidence_level=confidence,
                        n_resamples=999, method="percentile", random_state=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)
