"""Models behind the communication figures of merit.

Hockney model: t(n) = alpha + beta * n  (alpha: latency in us, beta: us per byte;
asymptotic bandwidth r_inf = 1/beta bytes/us = MB/s).  n_1/2 is the message size
reaching half the peak bandwidth.  Collective lower bounds use the same alpha and
beta; what they bound, and why, is in yeebench.checks.collectives.bounds.
"""
import math


class FitError(ValueError):
    """Not enough usable points for the fit."""


def hockney_fit(sizes, times_us):
    """(alpha_us, beta_us_per_byte) minimising relative error of t = alpha + beta*n.

    Relative weighting (w = 1/t^2) keeps small messages from being swamped by
    large ones, so alpha follows the measured small-message latency.
    """
    # a time whose square under- or overflows has no usable weight (1/t^2)
    pts = [(float(n), float(t)) for n, t in zip(sizes, times_us) if t > 0 and 0 < t * t < math.inf]
    if len(pts) < 2 or len({n for n, _ in pts}) < 2:
        raise FitError('a Hockney fit needs at least two message sizes with positive times')
    sw = swx = swy = swxx = swxy = 0.0
    for n, t in pts:
        w = 1.0 / (t * t)
        sw += w
        swx += w * n
        swy += w * t
        swxx += w * n * n
        swxy += w * n * t
    det = sw * swxx - swx * swx
    if not (math.isfinite(det) and det > 0):  # times whose squares over- or underflow: no weights
        raise FitError('the message times are too large or too small for a Hockney fit')
    beta = (sw * swxy - swx * swy) / det
    alpha = (swy - beta * swx) / sw
    if alpha < 0 or beta <= 0:   # noisy curve: pin alpha to the smallest message's time
        n0, t0 = min(pts)
        alpha = t0
        num = sum((t - alpha) * n / (t * t) for n, t in pts)
        den = sum(n * n / (t * t) for n, t in pts)
        beta = max(num / den, 1e-12) if den > 0 else 1e-12
    return alpha, beta


def interpolate(xs, ys, x):
    """y at x by log-log interpolation on sorted points.

    FitError when x lies outside the measured sizes: a figure at a size the curve never
    reached is not measured, and clamping to the last point would report another size's value.
    """
    pts = sorted((float(a), float(b)) for a, b in zip(xs, ys) if a > 0 and b > 0)
    if not pts:
        raise FitError('no positive points to interpolate')
    if not pts[0][0] <= x <= pts[-1][0]:
        raise FitError(f'size {x:g} B is outside the measured sizes {pts[0][0]:g}..{pts[-1][0]:g} B')
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            if x == x0 or x1 == x0:   # a measured size: its measured value, not exp(log(y))
                return y0
            f = (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0))
            return math.exp(math.log(y0) + f * (math.log(y1) - math.log(y0)))
    return pts[-1][1]


def n_half(sizes, bandwidths):
    """Smallest message size (bytes) at which bandwidth reaches half its peak."""
    pts = sorted(zip(sizes, bandwidths))
    if not pts:
        raise FitError('no bandwidth points')
    half = max(b for _, b in pts) / 2.0
    prev = None
    for n, b in pts:
        if b >= half:
            if prev is None or prev[1] >= b:
                return float(n)
            (n0, b0) = prev   # linear interpolation between the bracketing points
            return n0 + (half - b0) * (n - n0) / (b - b0)
        prev = (n, b)
    return float(pts[-1][0])


def best_at_or_above(sizes, values, min_size):
    """Largest value among message sizes >= min_size (FitError when there is none).

    The large-message bandwidth of a link: a rate limiter's token bucket lets mid-size
    messages burst above the rate, so the peak over all sizes overstates it.
    """
    large = [v for n, v in zip(sizes, values) if n >= min_size]
    if not large:
        raise FitError(f'no message size >= {min_size} B measured')
    return max(large)


def lower_envelope(curves):
    """{size: smallest time} over repeated runs of one curve, each a (sizes, times) pair."""
    best = {}
    for sizes, times in curves:
        for n, t in zip(sizes, times):
            if t > 0 and math.isfinite(t):
                best[n] = min(best.get(n, t), t)
    return best


def spread(curves, size):
    """Relative spread (max/min - 1) of repeated measurements at `size` (0 when measured once)."""
    values = [t for sizes, times in curves for n, t in zip(sizes, times) if n == size and t > 0]
    return max(values) / min(values) - 1.0 if len(values) > 1 else 0.0
