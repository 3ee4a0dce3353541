"""Metric directions, units and plausibility rules: which way is better, SI-style units, and
what a believable value of each figure looks like.

A figure's direction is declared by its check, in one place: `add_fom` (or a
check's own `perf_directions`, yeebench.base.FigureDirections), which reaches
the run report as the loggable `perf_directions`. `infer_direction` is only the
fallback for a figure a report does not declare (a check outside the suite).
This module is also the one place that converts non-SI units (binary
prefixes, NetPIPE's Mbps) to SI-prefixed ones so results compare across tools.
FIGURES declares the plausibility rules (a figure's unit is its check's, given to add_fom) that
`yeebench results` evaluates at ingest (results/plausibility.py): a figure
that breaks one is flagged in the report and the log, never failed.
"""
import fnmatch
import re
from collections import namedtuple

HIGHER = "higher"
LOWER = "lower"

# Plausibility rules (their tests live in results/plausibility.py):
AT_MOST_100_PERCENT = "efficiency-at-most-100%"   # speed-up cannot exceed the cores used (beyond noise)
WITHIN_MODEL_BOUND = "within-model-bound"         # 100% = the alpha-beta lower bound: nothing is faster
WORKING_SET_OVER_LLC = "working-set-4x-llc"       # a memory-bandwidth kernel smaller than 4x LLC measures cache
WITHIN_MEMORY_PEAK = "within-measured-memory-peak"  # no memory bandwidth above the machine's measured DRAM peak
REPEATS_AGREE = "repeats-agree"                   # repeats of one figure within a factor of 2 of each other
WITHIN_LINK_RATE = "within-link-rate"             # no inter-node bandwidth above the link's nominal rate
CONTAINER_LIKE_NATIVE = "container-like-native"   # the same computation in an image runs as fast as natively
LATENCY_ON_SMALL_SIZE_FIT = "latency-on-small-size-fit"  # 1-16 KiB latencies near the small sizes' alpha-beta fit

# gated=False: a diagnostic derived from gated figures (a ratio of two of them, a phase's share of the
# time); compared and shown, but its change reads "changed", never "regressed": whatever regresses it
# regresses the figures it is derived from, which the gate judges, and its own change is theirs amplified.
# non_negative: the figure cannot be below zero (a share, an efficiency, a bandwidth, a ratio); its unit is
# the check's (add_fom), declared there only.
Figure = namedtuple("Figure", "pattern rules meaning gated non_negative", defaults=(True, True))
# First matching pattern wins; the last entry applies to every figure.
FIGURES = (
    Figure("parallel_efficiency", (AT_MOST_100_PERCENT, REPEATS_AGREE),
           "speed-up / cores against a 1-core run in the same job", gated=False),
    Figure("halo_share", (REPEATS_AGREE,),
           "share of the solver's loop time spent in the halo exchange", gated=False),
    Figure("efficiency_*B", (WITHIN_MODEL_BOUND, REPEATS_AGREE),
           "alpha-beta lower bound / measured collective latency"),
    Figure("triad_bw", (WORKING_SET_OVER_LLC, WITHIN_MEMORY_PEAK, REPEATS_AGREE),
           "STREAM-style triad bandwidth (numa-bw)"),
    Figure("copy_bw", (WORKING_SET_OVER_LLC, WITHIN_MEMORY_PEAK, REPEATS_AGREE),
           "STREAM-style copy bandwidth (numa-bw)"),
    Figure("peak_bw", (WITHIN_LINK_RATE, REPEATS_AGREE),
           "best point-to-point bandwidth of the curve (one direction)"),
    Figure("bw_large", (WITHIN_LINK_RATE, REPEATS_AGREE),
           "point-to-point bandwidth at large messages (one direction)"),
    Figure("peak_bibw", (WITHIN_LINK_RATE, REPEATS_AGREE),
           "best bidirectional bandwidth (both directions: bounded by twice the link rate)"),
    Figure("bibw_large", (WITHIN_LINK_RATE, REPEATS_AGREE),
           "bidirectional bandwidth at large messages (bounded by twice the link rate)"),
    Figure("peak_mbw", (WITHIN_LINK_RATE, REPEATS_AGREE),
           "best multi-pair bandwidth (one direction)"),
    Figure("mbw_large", (WITHIN_LINK_RATE, REPEATS_AGREE),
           "multi-pair bandwidth at large messages (one direction)"),
    Figure("ratio_*", (CONTAINER_LIKE_NATIVE, REPEATS_AGREE),
           "the figure in the container / natively, same node and ranks (100 = no overhead)"),
    # A point-to-point curve's figure at each size: no rule of its own, so a noisy host does not print one
    # warning per size; its summary figures (latency_1B, peak_bw...) carry the rules, the gate judges the
    # sizes with their own noise (results/curve_gate.py).
    Figure("curve_latency_*B", (), "one-way latency at one measured message size"),
    Figure("curve_bw_*B", (), "bandwidth at one measured message size"),
    # AcceptanceNetwork's slowest minus fastest pair: 0 on two nodes, so a later nonzero value is an
    # infinite change; no fit (it is no message size's latency) and its repeats may well differ by x2.
    Figure("latency_spread", (), "slowest minus fastest node pair's latency (acceptance network)",
           gated=False),
    Figure("latency_*", (LATENCY_ON_SMALL_SIZE_FIT, REPEATS_AGREE),
           "one message's latency at a size (point-to-point: one way; collectives: per call)"),
    Figure("*", (REPEATS_AGREE,), "", non_negative=False),
)
# Directions of the link a bandwidth figure uses at once (WITHIN_LINK_RATE's bound is this x the rate).
LINK_DIRECTIONS = {"peak_bibw": 2, "bibw_large": 2}


def figure(metric):
    """The FIGURES entry that declares this metric."""
    return next(f for f in FIGURES if fnmatch.fnmatchcase(metric or "", f.pattern))

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


# Quantities that cannot be below zero: a duration, an amount of data, a rate. A negative one is a
# broken parser or a hand-edited report, never a measurement, and ingest refuses it.
_BYTE_UNITS = {"B", "kB", "MB", "GB", "TB"}


def non_negative(metric, unit):
    """True when the figure cannot be negative: every FIGURES entry but the catch-all (efficiencies,
    shares, bandwidths, ratios), and any time, byte or per-second (SI) unit."""
    if figure(metric).non_negative:
        return True
    unit = (unit or "").strip()
    return unit in _TIME_UNITS or unit in _BYTE_UNITS or unit.endswith("/s")


def infer_direction(metric, unit):
    """Guess 'higher'/'lower' from the unit, then the name; None when unsure (the fallback for a
    figure whose check declared no direction)."""
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
