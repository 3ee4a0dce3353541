"""The ratio each of the papers' comparisons reports, as pure functions.

A comparison runs several cases like for like (same grid, steps, ranks x threads, nodes) and
states its finding as one case over another: rank per socket over rank per core (paper 000,
Fig. 6), a NUMA policy over no policy (Fig. 7), HDF5 over binary or ASCII time (paper 001,
Fig. 5), full over half packing time (paper 002, Fig. 3), a collective implementation over
coll/tuned (paper 004). Each ratio is recorded as a figure with a direction, so that a reader
sees the paper's finding (or its absence) without dividing two rows by hand. (Node scaling's
efficiencies are scaling arithmetic: yeebench.scaling.)

Rates (Mcells/s) give speed ratios: > 1 means the case is faster than the baseline, and
higher is better. Times give time ratios: < 1 means the case is faster, lower is better.
"""
import math

from yeebench.metrics import HIGHER, LOWER


class ComparisonError(ValueError):
    """A ratio that cannot be formed (missing or non-positive baseline)."""


def _positive(value, what):
    if value is None or not math.isfinite(value) or value <= 0:
        raise ComparisonError(f"{what} must be a positive number, got {value!r}")
    return float(value)


def speed_ratio(rate, baseline_rate):
    """rate / baseline_rate for rates such as Mcells/s: (value, direction HIGHER)."""
    return _positive(rate, "the case's rate") / _positive(baseline_rate, "the baseline's rate"), HIGHER


def time_ratio(seconds, baseline_seconds):
    """seconds / baseline_seconds: (value, direction LOWER); < 1 means the case is faster."""
    return _positive(seconds, "the case's time") / _positive(baseline_seconds, "the baseline's time"), LOWER


def ratio_foms(values, baseline, kind, prefix="over_"):
    """[(name, value, 'x', direction)] of every case over `baseline` in {case: value}.

    kind: 'rate' or 'time'. The baseline itself is left out (it would be 1 by construction).
    """
    if kind not in ("rate", "time"):
        raise ComparisonError(f"kind must be 'rate' or 'time', not {kind!r}")
    if baseline not in values:
        raise ComparisonError(f"the baseline case {baseline!r} was not measured (cases: {', '.join(values)})")
    ratio = speed_ratio if kind == "rate" else time_ratio
    out = []
    for case, value in values.items():
        if case == baseline:
            continue
        r, direction = ratio(value, values[baseline])
        out.append((f"{safe_name(case)}_{prefix}{safe_name(baseline)}", r, "x", direction))
    return out


def safe_name(case):
    """A FOM-name-safe spelling of a case: 'per-socket' -> 'per_socket', 'tuned:ring' -> 'tuned_ring'."""
    return "".join(c if c.isalnum() else "_" for c in str(case)).strip("_")
