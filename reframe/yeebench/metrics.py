"""Metric directions and units: which way is better, and SI-style units.

Checks declare directions (`perf_directions`); this module is the fallback
when they do not, and the one place that converts non-SI units (binary
prefixes, NetPIPE's Mbps) to SI-prefixed ones so results compare across tools.
"""
import re

HIGHER = "higher"
LOWER = "lower"

# unit -> (SI unit, factor to multiply the value by)
_UNIT_CONVERSIONS = {
    "KiB/s": ("kB/s", 1024 / 1e3),
    "MiB/s": ("MB/s", 2**20 / 1e6),
    "GiB/s": ("GB/s", 2**30 / 1e9),
    "Mbps": ("MB/s", 2**20 / 8 / 1e6),  # NetPIPE: 2^20 bits/s
    "Mbit/s": ("MB/s", 1e6 / 8 / 1e6),
    "Gbit/s": ("GB/s", 1e9 / 8 / 1e9),
    "Gbps": ("GB/s", 1e9 / 8 / 1e9),
    "KiB": ("kB", 1024 / 1e3),
    "MiB": ("MB", 2**20 / 1e6),
    "GiB": ("GB", 2**30 / 1e9),
    "usec": ("us", 1.0),
    "µs": ("us", 1.0),
    "sec": ("s", 1.0),
    "msec": ("ms", 1.0),
}

_TIME_UNITS = {"s", "ms", "us", "ns"}
# Name fragments, checked in order; the first match decides.
_NAME_RULES = (
    (re.compile(r"(^|_)(latency|lat|time|elapsed|seconds|duration|overhead|jitter|wait|stall)(_|$)"), LOWER),
    (re.compile(r"(^|_)(bandwidth|bw|rate|throughput|gbs|mbs|mcells|flops|gflops|efficiency|speedup|iops)"), HIGHER),
    (re.compile(r"per_s(_|$)"), HIGHER),
)


def to_si(value, unit):
    """Return (value, unit) with a non-SI unit converted; unknown units pass through."""
    unit = (unit or "").strip()
    if unit in _UNIT_CONVERSIONS and value is not None:
        si_unit, factor = _UNIT_CONVERSIONS[unit]
        return value * factor, si_unit
    return value, unit


def infer_direction(metric, unit):
    """Guess 'higher'/'lower' from the unit, then the name; None when unsure."""
    unit = (unit or "").strip()
    if unit in _TIME_UNITS:
        return LOWER
    if unit.endswith("/s") or unit.lower() in ("flop/s", "gflop/s", "iops"):
        return HIGHER
    name = (metric or "").lower()
    for pattern, direction in _NAME_RULES:
        if pattern.search(name):
            return direction
    return None


def resolve_direction(metric, unit, declared):
    """Direction and where it came from: ('higher'|'lower'|'unknown', 'declared'|'inferred'|'unknown')."""
    if isinstance(declared, dict):
        value = declared.get(metric)
        if value in (HIGHER, LOWER):
            return value, "declared"
    guess = infer_direction(metric, unit)
    if guess:
        return guess, "inferred"
    return "unknown", "unknown"


def worse_fraction(baseline, candidate, direction):
    """Signed relative change, positive when the candidate is worse than the baseline.

    For 'lower' metrics: candidate/baseline - 1 (a 10 % longer time gives 0.10).
    For 'higher' metrics: baseline/candidate - 1 (10 % more time per unit of work,
    i.e. a throughput of 1/1.1, also gives 0.10), so a threshold means the same
    slowdown whichever way a figure is reported.
    """
    if direction == LOWER:
        if baseline == 0:
            return 0.0 if candidate == 0 else float("inf")
        return candidate / baseline - 1.0
    if direction == HIGHER:
        if candidate == 0:
            return 0.0 if baseline == 0 else float("inf")
        return baseline / candidate - 1.0
    raise ValueError(f"no direction for comparison: {direction!r}")
