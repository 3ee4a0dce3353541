"""yeebench.stats.median and robust_relative_sigma for the short lists of repeats compare and report
handle by the ten thousand, in plain Python: numpy's call overhead (about 8 us a median, eight of
them a figure) was most of a compare's own work.

Same values, not approximations: numpy's median of finite numbers is the middle element, or the two
middle ones added and halved, the same two IEEE operations done here; the MAD is the median of the
absolute differences from it. A list holding anything but finite ints and floats (NaN, inf, a bool)
goes to yeebench.stats as before.
"""
import math

from yeebench import stats


def _finite(values):
    return all((type(v) is float and math.isfinite(v)) or type(v) is int for v in values)


def _middle(ordered):
    n = len(ordered)
    half = n // 2
    if n % 2:
        return float(ordered[half])
    return (float(ordered[half - 1]) + float(ordered[half])) / 2.0


def median(values):
    if len(values) == 0 or not _finite(values):
        return stats.median(values)
    return _middle(sorted(values))


def robust_relative_sigma(values):
    if len(values) < 2 or not _finite(values):
        return stats.robust_relative_sigma(values)
    centre = _middle(sorted(values))
    if centre == 0:
        return 0.0
    mad = _middle(sorted(abs(float(v) - centre) for v in values))
    return stats.MAD_TO_SIGMA * mad / abs(centre)
