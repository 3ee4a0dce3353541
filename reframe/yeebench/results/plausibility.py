"""Plausibility of a run's figures, by the rules yeebench.metrics.FIGURES declares per figure.

Evaluated at ingest; each broken rule is a warning (recorded in the provenance, printed by
ingest, shown in the report), never a failure: the figure is kept and flagged, with the reason.
"""
import re
from collections import OrderedDict

from yeebench import metrics
from yeebench.results import latency_fit, quick_stats

WORKING_SET_FACTOR = 4      # a memory kernel's arrays must exceed this many times the last-level cache
UNSTABLE_RATIO = 2.0        # repeats further apart than this factor: the measurement is not stable
MIN_TOLERANCE = 0.02        # allowance above a bound when the repeats say nothing about the noise
# A container adds a few per cent at most to a computation (its launch and MPI's transport, not the
# arithmetic): an image run further than this factor from the native one, either way, ran on a host of
# another speed (the two legs run minutes apart) or is another build.
CONTAINER_FACTOR = 1.5

_RATE_UNITS = {"B/s": 1, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9}   # SI units of ingested rows
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kMGT]i?)?B?\s*$")
_FACTORS = {None: 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
            "ki": 2**10, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def parse_size(text):
    """numa-bw's --size syntax ('16Mi', '128M', '4096') in bytes, or None."""
    match = _SIZE.match(str(text))
    return int(float(match.group(1)) * _FACTORS[match.group(2)]) if match else None


def _tolerance(values):
    """How far above a bound a median may lie before it is beyond the noise."""
    noise = 2 * quick_stats.robust_relative_sigma(values) if len(values) >= 3 else 0.0
    return max(noise, MIN_TOLERANCE)


def _mib(nbytes):
    return f"{nbytes / 2**20:g} MiB"


def evaluate(rows, working_sets=None, llc_bytes=None, link_rates=None):
    """Warnings for the rows of one run.

    working_sets: {testcase: bytes a memory kernel touched}; llc_bytes: last-level cache size;
    link_rates: {testcase: nominal bits/s of the link an inter-node case crossed (extras.link_rate_bps)}.
    """
    from yeebench.results.compare import figure_of, group_rows
    working_sets = working_sets or {}
    link_rates = link_rates or {}
    groups = OrderedDict()
    for key, group in group_rows(rows).items():
        groups[key] = (group, [r["value"] for r in group], figure_of(key[5]))
    warnings = []

    def warn(group, rule, message):
        row = group[0]
        warnings.append({"check": row["check"], "parameters": key[4], "metric": row["metric"],
                         "testcase": row.get("testcase") or row["check"], "rule": rule, "message": message})

    def too_small(group):
        ws = working_sets.get(group[0].get("testcase"))
        return ws is not None and llc_bytes and ws < WORKING_SET_FACTOR * llc_bytes

    # the machine's memory peak: the best memory-bandwidth median whose working set is not cache-sized
    peak, peak_from = None, None
    for key, (group, values, fig) in groups.items():
        if metrics.WITHIN_MEMORY_PEAK in fig.rules and group[0].get("testcase") in working_sets \
                and llc_bytes and not too_small(group):
            median = quick_stats.median(values)
            if peak is None or median > peak:
                peak, peak_from = median, f"{group[0]['check']} {key[4]} {key[5]}"

    # each case's latency curve {size: median us} and its whole-curve Hockney beta (ns/B), if any
    curves, hockney = {}, {}
    for key, (group, values, fig) in groups.items():
        size = latency_fit.message_size(key[5])
        if size is not None and group[0]["unit"] == "us":
            curves.setdefault(key[:5], {})[size] = quick_stats.median(values)
        elif key[5] == "hockney_beta" and group[0]["unit"] == "ns/B":
            hockney[key[:5]] = quick_stats.median(values)

    for key, (group, values, fig) in groups.items():
        median = quick_stats.median(values)
        unit = group[0]["unit"]
        tol = _tolerance(values)
        if metrics.AT_MOST_100_PERCENT in fig.rules and median > 100 * (1 + tol):
            warn(group, metrics.AT_MOST_100_PERCENT,
                 f"{key[5]} {median:.1f}% is above 100% beyond the noise (±{tol * 100:.0f}%): a speed-up "
                 f"larger than the cores used; the 1-core baseline run was slowed down or the cores miscounted")
        if metrics.WITHIN_MODEL_BOUND in fig.rules and median > 100 * (1 + tol):
            warn(group, metrics.WITHIN_MODEL_BOUND,
                 f"{key[5]} {median:.1f}%: measured faster than the alpha-beta lower bound of its model; "
                 f"the fitted latency/bandwidth or the timing is off")
        if metrics.WORKING_SET_OVER_LLC in fig.rules and too_small(group):
            ws = working_sets[group[0]["testcase"]]
            warn(group, metrics.WORKING_SET_OVER_LLC,
                 f"working set {_mib(ws)} is below {WORKING_SET_FACTOR} x the {_mib(llc_bytes)} last-level "
                 f"cache: {key[5]} measures the cache, not memory")
        if metrics.WITHIN_MEMORY_PEAK in fig.rules and peak is not None and median > peak * (1 + tol):
            warn(group, metrics.WITHIN_MEMORY_PEAK,
                 f"{key[5]} {median:.3g} {unit} is above the measured memory peak {peak:.3g} {unit} "
                 f"({peak_from})")
        link_rate = link_rates.get(group[0].get("testcase"))
        if metrics.WITHIN_LINK_RATE in fig.rules and link_rate and unit in _RATE_UNITS:
            bound = metrics.LINK_DIRECTIONS.get(key[5], 1) * link_rate / 8 / _RATE_UNITS[unit]
            if median > bound * (1 + tol):
                warn(group, metrics.WITHIN_LINK_RATE,
                     f"{key[5]} {median:.3g} {unit} is above the link's nominal {bound:.3g} {unit} "
                     f"(a {link_rate / 1e9:g} Gbit/s link): a rate limiter's burst or "
                     f"traffic that did not cross the link; the large-message figure is the sustained one")
        if metrics.CONTAINER_LIKE_NATIVE in fig.rules and median > 0 and \
                not 100 / (CONTAINER_FACTOR * (1 + tol)) <= median <= 100 * CONTAINER_FACTOR * (1 + tol):
            warn(group, metrics.CONTAINER_LIKE_NATIVE,
                 f"{key[5]} {median:.1f}%: the image ran the same work x{max(median, 1e4 / median) / 100:.1f} "
                 f"{'faster' if (median > 100) == (group[0].get('direction') != metrics.LOWER) else 'slower'} "
                 f"than natively, beyond what a container adds; the legs met different host speeds "
                 f"(they run one after the other) or ran different builds")
        if metrics.LATENCY_ON_SMALL_SIZE_FIT in fig.rules:
            size = latency_fit.message_size(key[5])
            curve = curves.get(key[:5], {})
            for n, measured, predicted, alpha, beta in latency_fit.outliers(curve, tol, hockney.get(key[:5])):
                if n == size:
                    warn(group, metrics.LATENCY_ON_SMALL_SIZE_FIT,
                         f"{key[5]} {measured:.3g} us is x{measured / predicted:.0f} the {predicted:.3g} us that "
                         f"the small sizes' alpha-beta fit predicts (alpha {alpha:.3g} us, beta "
                         f"{beta * 1e3:.3g} ns/B): a transport failed under the run and it went on "
                         f"(single-copy refused?), this size fell off the fast path, or a busy machine "
                         f"disturbed its few iterations")
        if metrics.REPEATS_AGREE in fig.rules and len(values) >= 2 and min(values) > 0 \
                and max(values) / min(values) > UNSTABLE_RATIO:
            warn(group, metrics.REPEATS_AGREE,
                 f"repeats of {key[5]} range from {min(values):.3g} to {max(values):.3g} {unit} "
                 f"(x{max(values) / min(values):.1f}): not a stable measurement (a busy machine?)")
    return warnings
