"""The latency-curve plausibility rule: no size far above what the small sizes' alpha-beta fit predicts.

A transport failing under a run does not always stop it: Open MPI's vader with single-copy refused
prints an error per message and delivers anyway, about 100 us later, so a 4 KiB latency of 96 us sits
beside a 1 B latency of 1 us. Between 1 KiB and 16 KiB a healthy curve stays within a few times
alpha + beta * n (alpha from the small sizes, beta from them or from the case's whole-curve Hockney
fit, whichever is steeper); beyond 16 KiB bandwidth dominates and a small-size fit says nothing.
"""
import re

from yeebench import fits

SMALL_MESSAGE = 1024        # sizes up to this give alpha (and beta, when there are two or more)
JUDGED_UP_TO = 16384        # sizes above SMALL_MESSAGE and up to this are judged
LATENCY_FACTOR = 10         # a judged size this many times the prediction (beyond noise) is flagged
_METRIC = re.compile(r"^latency_(\d+)(B|KB|MB)$")
_SCALE = {"B": 1, "KB": 2**10, "MB": 2**20}     # the checks' latency_4KB is the latency at 4096 B


def message_size(metric):
    """latency_4096B / latency_4KB -> 4096; None for any other metric."""
    match = _METRIC.match(metric or "")
    return int(match.group(1)) * _SCALE[match.group(2)] if match else None


def small_size_fit(points, hockney_beta_ns=None):
    """(alpha us, beta us/B) from {size: us} of the sizes <= SMALL_MESSAGE; None without any."""
    small = sorted((n, t) for n, t in points.items() if n <= SMALL_MESSAGE and t > 0)
    if not small:
        return None
    try:
        alpha, beta = fits.hockney_fit([n for n, _ in small], [t for _, t in small])
    except fits.FitError:   # one small size: alpha is its time
        alpha, beta = small[0][1], 0.0
    if hockney_beta_ns and hockney_beta_ns > 0:
        beta = max(beta, hockney_beta_ns / 1e3)
    return alpha, beta


def outliers(points, tolerance, hockney_beta_ns=None):
    """[(size, measured, predicted, alpha, beta)] of the judged sizes far above the small-size fit."""
    fit = small_size_fit(points, hockney_beta_ns)
    if fit is None:
        return []
    alpha, beta = fit
    found = []
    for size, measured in sorted(points.items()):
        predicted = alpha + beta * size
        if SMALL_MESSAGE < size <= JUDGED_UP_TO and measured > LATENCY_FACTOR * predicted * (1 + tolerance):
            found.append((size, measured, predicted, alpha, beta))
    return found
