"""Run-to-run noise of a figure from its recorded runs: how far two runs of unchanged code, or one new
run and the recorded median, lie apart.

Used by the comparison (compare.py: a candidate against the history) and by the history cache
(history.py: the noise band of each figure); its own module so that neither imports the other for it.
"""
from yeebench import stats

MIN_HISTORY_RUNS = 5       # fewer recorded runs of a figure: its run-to-run noise is unknown
BAND_QUANTILE = 0.99   # per figure; a run has tens of figures, and a compare must rarely cry wolf
DISTURBED_SIGMAS = 5.0  # a recorded run this many robust sigmas from the others' median was disturbed


def undisturbed_logs(values):
    """log of the recorded values, without the runs that other work on the machine disturbed.

    A run whose figure lies more than DISTURBED_SIGMAS robust (MAD) sigmas from the median of the
    recorded runs is a one-off event, not the figure's run-to-run noise: kept in the band, three such
    runs among twenty widen it to their swing (x2.8 measured) and hide any regression. Where every run
    is noisy the MAD is large and nothing is left out."""
    import numpy as np
    logs = np.log(np.asarray([v for v in values if v > 0], dtype=float))
    if len(logs) < 3:
        return logs
    centre = np.median(logs)
    sigma = stats.MAD_TO_SIGMA * np.median(np.abs(logs - centre))
    if sigma == 0:
        return logs
    return logs[np.abs(logs - centre) <= DISTURBED_SIGMAS * sigma]


def pair_band(values, quantile=BAND_QUANTILE, min_runs=2):
    """The relative change between two runs of unchanged code that only `1 - quantile` of pairs exceed:
    the empirical quantile of |log(a / b)| over every pair of undisturbed recorded runs, as a fraction;
    None with fewer than `min_runs` of them. Timings on a shared machine have heavy tails, which a
    normal model from the MAD underrates."""
    import numpy as np
    logs = undisturbed_logs(values)
    if len(logs) < max(min_runs, 2):
        return None
    diffs = np.abs(logs[:, None] - logs[None, :])[np.triu_indices(len(logs), k=1)]
    return float(np.expm1(np.quantile(diffs, quantile)))


def centre_band(values, quantile=BAND_QUANTILE, min_runs=2):
    """Like pair_band, for one new run against the median of the recorded ones."""
    import numpy as np
    logs = undisturbed_logs(values)
    if len(logs) < max(min_runs, 2):
        return None
    return float(np.expm1(np.quantile(np.abs(logs - np.median(logs)), quantile)))
