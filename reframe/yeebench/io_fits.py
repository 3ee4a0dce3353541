"""Paper 001's analysis of output time: a fit of time against the cells per process, per
format and process count, and its extension to process counts that were not run.

The paper smooths its points (Bezier) and fits F(n_e, N^3) per number of PEs 2^n_e, quotes
the fit's RMS relative error (8 %), and uses F to estimate 2^4 and 2^8 PEs; it does not say
how F is carried to those counts. Here:

- per process count p: t = a + b * N^3 (a fixed cost per output step, a cost per cell) fitted
  to the measured points (no smoothing) by least squares of the relative residuals (t_fit - t) / t,
  so that the fit minimises the figure it is judged by, the RMS relative error against those
  points (plain least squares lets the largest times pull the line and leaves the small sizes tens
  of percent off);
- across process counts: t_p(N) at one N, from each count's fit, follows a power law
  t = c * p^k (least squares in log-log), which extrapolates to 16 and 256 processes. This
  power law is our assumption, stated wherever its figures are shown.
"""
import math
from collections import namedtuple

from yeebench.fits import FitError

#: t(N) = a + b * N^3 seconds, rms_error relative (0.08 = 8 %), over `points` measured sizes.
CubeFit = namedtuple("CubeFit", "a b rms_error points")

#: t(p) = c * p^k at a fixed N.
PowerFit = namedtuple("PowerFit", "c k points")


def fit_cube(sizes, seconds):
    """CubeFit of t = a + b N^3 over (N, seconds) points; FitError with fewer than 2 sizes."""
    pts = [(float(n) ** 3, float(t)) for n, t in zip(sizes, seconds) if n > 0 and t > 0 and math.isfinite(t)]
    if len({x for x, _ in pts}) < 2:
        raise FitError("a fit of time against N^3 needs at least two sizes with positive times")
    m = len(pts)
    # weighted least squares, weight 1/t^2: minimises sum(((a + b x - t) / t)^2); x scaled to ~1
    scale = max(x for x, _ in pts)
    s0 = sum(1 / t ** 2 for _, t in pts)
    sx = sum(x / scale / t ** 2 for x, t in pts)
    sxx = sum((x / scale) ** 2 / t ** 2 for x, t in pts)
    st = sum(1 / t for _, t in pts)
    sxt = sum(x / scale / t for x, t in pts)
    b = (s0 * sxt - sx * st) / (s0 * sxx - sx * sx)
    a = (st - b * sx) / s0
    b /= scale
    rms = math.sqrt(sum(((a + b * x - t) / t) ** 2 for x, t in pts) / m)
    return CubeFit(a, b, rms, m)


def evaluate(fit, n):
    """Seconds the fit predicts at N (cells per process along each axis)."""
    return fit.a + fit.b * float(n) ** 3


def fit_by_ranks(points):
    """{ranks: CubeFit} from (ranks, N, seconds) points; counts with fewer than 2 sizes are left out."""
    by = {}
    for ranks, n, t in points:
        by.setdefault(int(ranks), []).append((n, t))
    fits = {}
    for ranks, pts in sorted(by.items()):
        try:
            fits[ranks] = fit_cube([n for n, _ in pts], [t for _, t in pts])
        except FitError:
            continue
    return fits


def combined_rms_error(fits):
    """RMS relative error over every point of every fit (the paper's one accuracy figure)."""
    total = sum(f.points for f in fits.values())
    if not total:
        raise FitError("no fitted points")
    return math.sqrt(sum(f.rms_error ** 2 * f.points for f in fits.values()) / total)


def fit_power(ranks, seconds):
    """PowerFit of t = c p^k; FitError with fewer than 2 rank counts or a non-positive time."""
    pts = [(math.log(p), math.log(t)) for p, t in zip(ranks, seconds) if p > 0 and t > 0]
    if len({x for x, _ in pts}) < 2:
        raise FitError("extrapolating over process counts needs fits at two process counts or more")
    m = len(pts)
    mx = sum(x for x, _ in pts) / m
    my = sum(y for _, y in pts) / m
    k = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    return PowerFit(math.exp(my - k * mx), k, m)


def extrapolate(fits, n, ranks):
    """Seconds at `ranks` processes and N cells per axis per process, from {ranks: CubeFit}.

    A measured process count is answered by its own fit; others by the power law through
    every fitted count's prediction at N (FitError when a prediction is not positive).
    """
    flat = sorted(p for p, f in fits.items() if f.b <= 0)
    if flat:
        raise FitError(f"the time does not grow with N^3 at {', '.join(map(str, flat))} rank(s): the sizes are "
                       "too small to time the output; use larger sizes")
    if ranks in fits:
        return evaluate(fits[ranks], n)
    at_n = [(p, evaluate(f, n)) for p, f in sorted(fits.items())]
    if any(t <= 0 for _, t in at_n):
        raise FitError(f"a fit predicts no positive time at N={n}; cannot extend it over process counts")
    power = fit_power([p for p, _ in at_n], [t for _, t in at_n])
    return power.c * float(ranks) ** power.k


#: Named size sweeps (N, cells per axis per process): the paper's 17 sizes, and a quick one for small machines.
SIZE_SWEEPS = {"paper": list(range(30, 191, 10)), "quick": [20, 30, 40]}


def parse_sizes(text):
    """A named sweep (paper, quick) or a comma list of N >= 4, sorted (ValueError naming the problem)."""
    if text in SIZE_SWEEPS:
        return list(SIZE_SWEEPS[text])
    try:
        sizes = sorted({int(s) for s in str(text).split(",")})
    except ValueError:
        raise ValueError(f"sizes={text!r}: expected {' or '.join(SIZE_SWEEPS)} or a comma list of integers") from None
    if not sizes or sizes[0] < 4:
        raise ValueError(f"sizes={text!r}: every N must be >= 4")
    return sizes


def rank_counts(cores, nodes, oversubscribe=False):
    """1, 2, 4 ... up to the cores of all nodes (twice that when oversubscribing is allowed)."""
    limit = cores * nodes * (2 if oversubscribe else 1)
    counts, p = [], 1
    while p <= limit:
        counts.append(p)
        p *= 2
    return counts
