"""Whole curves under the gate: the per-size figures of one case (yeebench.curve_foms.SIZE_FAMILIES,
e.g. curve_latency_65536B) are judged together.

Each size is compared on its own (compare.compare_values: its own repeats, its own run-to-run noise)
against a per-size tolerance (`size_threshold`: one size of a curve moves more than a figure summarising
all of them); a curve then fails only when more than `max_regressed` of its sizes regressed. At or below
that count the regressed sizes read 'changed' (never a failure) and a warning names them: twenty-odd
sizes each tested at alpha make one stray size likely, a protocol switch moves several.

A family is a curve where the case holds MIN_CURVE_SIZES or more of its sizes on either side; a lone
latency_1B (the point-to-point summary, interpolated at 1 B) stays a figure of its own, gated as before. A curve the
baseline has no sizes of (a baseline recorded before per-size figures) is left out: that case is gated
on its summary figures (latencies, fit, peak) as before, and one line says how many curves were.

Cost: one pass over the comparison's keys and one over its results; names are parsed once each.
"""
import functools
from collections import OrderedDict

from yeebench import curve_foms
from yeebench.results.errors import ResultsError

DEFAULT_SIZE_THRESHOLD = 0.10
DEFAULT_MAX_REGRESSED_SIZES = 1
#: Fewer sizes of a family in a case are figures of their own: OsuCollectiveNodeCurve records latency_<n>B
#: at only its smallest and largest size, point-to-point a lone interpolated latency_1B.
MIN_CURVE_SIZES = 3

parse = functools.lru_cache(maxsize=None)(curve_foms.parse_size_metric)


def curve_members(keys):
    """{key: (family, size)} for the comparison keys (compare.row_key tuples, metric last) that belong
    to a curve: a case's family with MIN_CURVE_SIZES or more distinct sizes among the keys."""
    by_curve = {}
    for key in keys:
        parsed = parse(key[-1])
        if parsed is not None:
            by_curve.setdefault(key[:-1] + (parsed[0],), []).append((key, parsed))
    return {key: parsed for members in by_curve.values() if len({p[1] for _, p in members}) >= MIN_CURVE_SIZES
            for key, parsed in members}


def check_values(key, side, values):
    """Refuse a per-size figure that is negative or not finite (a hand-edited or corrupt file: the
    loaders refuse NaN, ingest refuses negatives, a baseline file may still hold one): one line."""
    for value in values:
        if not (value >= 0 and value != float("inf")):
            raise ResultsError(f"{side}: {key[3]} [{key[4]}] {key[5]} = {value!r}: a per-size figure must be a "
                               f"finite number >= 0; the file is corrupt or was edited")


def curve_label(entry, family):
    return (f"{entry['system']}:{entry['partition']}:{entry['environ']} {entry['check']} "
            f"[{entry['parameters']}] {family}")


def _sizes_text(entries, with_change=False):
    parts = []
    for size, entry in entries:
        change = entry.get("change")
        parts.append(f"{size} B {change * 100:+.1f}%" if with_change and change is not None else f"{size} B")
    return ", ".join(parts)


def judge(results, members, max_regressed=DEFAULT_MAX_REGRESSED_SIZES):
    """Apply the curve rule to compare results (dicts with system ... metric, verdict); returns
    (results without the curves an old baseline lacks, lines for the user: one per curve that regressed,
    tolerated regressions or sizes measured on one side only, and one for the old baseline's curves)."""
    curves = OrderedDict()
    for entry in results:
        key = (entry["system"], entry["partition"], entry["environ"], entry["check"], entry["parameters"],
               entry["metric"])
        parsed = members.get(key)
        if parsed is not None:
            curves.setdefault(key[:-1] + (parsed[0],), []).append((parsed[1], entry))
    dropped, lines, without_baseline = set(), [], 0
    for curve, sized in curves.items():
        sized.sort(key=lambda pair: pair[0])
        family, first = curve[-1], sized[0][1]
        label = curve_label(first, family)
        not_in_base = [(s, e) for s, e in sized if e.get("missing_in") == "baseline"]
        if len(not_in_base) == len(sized):     # a baseline from before per-size figures
            dropped.update(id(e) for _, e in sized)
            without_baseline += 1
            continue
        not_in_cand = [(s, e) for s, e in sized if e.get("missing_in") == "candidate"]
        if not_in_cand:
            lines.append(f"curve {label}: {len(not_in_cand)} size(s) of the baseline not measured in the "
                         f"candidate: {_sizes_text(not_in_cand)}")
        if not_in_base:
            lines.append(f"note: curve {label}: {len(not_in_base)} size(s) not in the baseline, not judged: "
                         f"{_sizes_text(not_in_base)}")
        regressed = [(s, e) for s, e in sized if e["verdict"] == "regressed"]
        judged = len(sized) - len(not_in_base) - len(not_in_cand)
        for _, entry in sized:
            entry["curve"] = {"family": family, "sizes": judged, "regressed": len(regressed),
                              "max_regressed": max_regressed}
        if len(regressed) > max_regressed:
            lines.append(f"curve regressed: {label}: {len(regressed)} of {judged} sizes worse beyond their noise "
                         f"(more than {max_regressed} allowed): {_sizes_text(regressed, True)}")
        elif regressed:
            for _, entry in regressed:
                entry["verdict"] = "changed"
                entry["tolerated"] = True
                entry["reason"] = (f"{len(regressed)} of {judged} sizes of the curve regressed, "
                                   f"up to {max_regressed} allowed")
            lines.append(f"warning: curve {label}: {len(regressed)} of {judged} sizes worse beyond their noise, "
                         f"passed (up to {max_regressed} allowed): {_sizes_text(regressed, True)}")
    if without_baseline:
        lines.append(f"note: {without_baseline} curve(s) have no per-size figures in the baseline (recorded "
                     f"before them): those cases are gated on their summary figures only")
    kept = [e for e in results if id(e) not in dropped] if dropped else results
    return kept, lines
