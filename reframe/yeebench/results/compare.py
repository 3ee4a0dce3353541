"""Noise-aware comparison of two sets of rows: the CI performance-regression gate.

Rows are matched by (system, partition, environ, check, parameters, metric);
fields named in `ignore` are dropped from the key (to compare bind-to-core with
bind-to-socket, or a container environ with bare metal). Per metric, from the
repeats of each side:

  value   = the side's location statistic: 'best' (default) is the best repeat,
            min for lower-is-better and max for higher-is-better figures, because
            interference on a shared machine only ever makes a run slower, so the
            best repeat is the least disturbed one; 'median' is the median
  change  = relative change of the two values, signed so that positive is worse
            (metrics.worse_fraction: the same slowdown reads the same for times and rates)
  noise   = z * standard error of the difference of the medians, from each side's
            MAD-based spread (MAD of n repeats -> sigma -> 1.2533 sigma / sqrt(n))
  p       = one-sided Mann-Whitney U p-value in the worse (or better) direction over
            all repeats, when both sides have >= MIN_REPEATS_FOR_TEST repeats

With fewer than MIN_REPEATS_FOR_TEST repeats on a side the spread of the repeats
says nothing; the noise then comes from the history of the same system and
figure (history.py: the change between two recorded runs that only 1 % of pairs
of recorded runs exceed) when there is enough of it, and is otherwise unknown. When the history also knows
the figure's run-to-run noise and it is larger than the spread within the runs,
the larger one is used: repeats taken back to back miss what changes between runs.

With the best repeat and a history, the history band alone is the noise and no
test is made: the repeats' spread and ranks describe the repeats the best leaves out.

A metric is 'regressed' when change > threshold AND change > noise AND (no test
possible, or p <= alpha); 'improved' symmetrically; 'unchanged' otherwise;
'insufficient' (insufficient data, never a failure) when the noise is unknown and
the change exceeds the threshold, or when the slower side's best repeat is not
corroborated by its other repeats (a run disturbed as a whole); 'missing' when
one side has no rows for it.
Unknown direction: medians, and 'changed' or 'unchanged', never a failure.

Per-size figures of a curve (curve_latency_<n>B ...) are each judged so against a per-size threshold,
then as a curve: it fails only when more than a stated count of its sizes regressed (curve_gate.py).
"""
import fnmatch
import functools
import math
from collections import OrderedDict

from yeebench import metrics
from yeebench import stats
from yeebench.results import curve_gate, quick_stats, rank_test
from yeebench.results.noise import MIN_HISTORY_RUNS, centre_band

DEFAULT_THRESHOLD = 0.05
DEFAULT_ALPHA = 0.05
DEFAULT_Z = 2.0
MIN_REPEATS_FOR_TEST = 3
CORROBORATING_REPEATS = 3  # the slower side's best must show in this many repeats to count as a change
DEFAULT_STATISTIC = "best"
STATISTICS = ("best", "median")

# metrics.figure matches the name against every pattern; a run holds few names, each asked thousands of times
figure_of = functools.lru_cache(maxsize=None)(metrics.figure)

VERDICTS = ("regressed", "improved", "unchanged", "changed", "insufficient", "missing")
KEY_FIELDS = ("system", "partition", "environ")


def parameter_text(params):
    return ",".join(f"{k}={params[k]}" for k in sorted(params)) or "-"


def row_key(row, ignore=()):
    params = {k: v for k, v in row["parameters"].items() if f"parameters.{k}" not in ignore}
    fields = [row[f] if f not in ignore else "*" for f in ("system", "partition", "environ")]
    return tuple(fields) + (row["check"], parameter_text(params), row["metric"])


def select_metrics(rows, patterns):
    """Rows whose metric matches any of the shell patterns."""
    return [r for r in rows if any(fnmatch.fnmatchcase(r["metric"], p) for p in patterns)]


def group_rows(rows, ignore=()):
    groups = OrderedDict()
    for row in rows:
        groups.setdefault(row_key(row, ignore), []).append(row)
    return groups


def location(values, direction, statistic=DEFAULT_STATISTIC):
    """The side's value: best repeat (min or max by direction) or median."""
    if statistic == "best" and direction == metrics.LOWER:
        return min(values)
    if statistic == "best" and direction == metrics.HIGHER:
        return max(values)
    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic {statistic!r}")
    return quick_stats.median(values)


def compare_values(base, cand, direction, threshold=DEFAULT_THRESHOLD, alpha=DEFAULT_ALPHA, z=DEFAULT_Z,
                   statistic=DEFAULT_STATISTIC, history_band=None, usual_spread=None):
    """Verdict and the figures behind it for one metric's repeats.

    history_band: the relative change between two runs that the figure's recorded history says noise
    alone rarely exceeds (noise.pair_band), or None.
    usual_spread: how far the recorded runs' best repeats usually lie from their next ones
    (history.usual_spread), or None: the agreement a run's repeats need before its best counts.
    """
    med_b, med_c = quick_stats.median(base), quick_stats.median(cand)
    # The best repeat leaves the disturbed repeats out, but their spread would still set the noise
    # and the rank test: where the history knows how much the best itself moves between runs of
    # unchanged code, that band alone decides (measured: one run's repeats 1042-1638 Mcells/s, best
    # within 3 % of its history, hid a 20 % slowdown behind a 29 % noise band).
    testable = (len(base) >= MIN_REPEATS_FOR_TEST and len(cand) >= MIN_REPEATS_FOR_TEST
                and not (statistic == "best" and history_band is not None))
    sig_b, sig_c = quick_stats.robust_relative_sigma(base), quick_stats.robust_relative_sigma(cand)
    noise = None
    if testable:
        noise = z * stats.MEDIAN_SE_FACTOR * math.sqrt(sig_b ** 2 / len(base) + sig_c ** 2 / len(cand))
    if history_band is not None:
        noise = max(noise or 0.0, history_band)
    result = {"baseline_median": med_b, "candidate_median": med_c, "baseline_n": len(base),
              "candidate_n": len(cand),
              "baseline_rel_spread": sig_b if len(base) >= MIN_REPEATS_FOR_TEST else None,
              "candidate_rel_spread": sig_c if len(cand) >= MIN_REPEATS_FOR_TEST else None,
              "noise": noise, "noise_source": _noise_source(testable, history_band),
              "p_worse": None, "p_better": None, "statistic": statistic,
              "baseline_value": location(base, direction, statistic),
              "candidate_value": location(cand, direction, statistic)}
    if direction not in (metrics.HIGHER, metrics.LOWER):
        change = (med_c / med_b - 1.0) if med_b else 0.0
        result["change"] = change
        beyond = abs(change) > threshold and (noise is None or abs(change) > noise)
        result["verdict"] = "changed" if beyond else "unchanged"
        return result
    change = metrics.worse_fraction(result["baseline_value"], result["candidate_value"], direction)
    result["change"] = change
    if testable:
        # 'worse' means larger for lower-is-better figures, smaller for higher-is-better ones
        if direction == metrics.LOWER:
            result["p_worse"] = rank_test.mann_whitney_greater(cand, base)
            result["p_better"] = rank_test.mann_whitney_greater(base, cand)
        else:
            result["p_worse"] = rank_test.mann_whitney_greater(base, cand)
            result["p_better"] = rank_test.mann_whitney_greater(cand, base)
    result["verdict"] = _verdict(change, noise, threshold, result["p_worse"], result["p_better"], alpha)
    if noise is None and result["verdict"] == "insufficient":
        result["reason"] = "noise unknown"
    if statistic == "best" and result["verdict"] in ("regressed", "improved"):
        slower = cand if result["verdict"] == "regressed" else base
        # the agreement the figure's recorded runs usually show (at least the threshold), not the
        # run-to-run noise: a wide noise band would let a disturbed run pass as corroborated
        if not corroborated(slower, direction, max(threshold, usual_spread or 0.0)):
            result["verdict"] = "insufficient"
            result["disturbed"] = "candidate" if slower is cand else "baseline"
            result["reason"] = f"the {result['disturbed']}'s repeats disagree"
    return result


def top_spread(values, direction, need=CORROBORATING_REPEATS):
    """How far the `need`-th best repeat (the last when fewer) lies from the best, as a fraction."""
    ranked = sorted(values, reverse=direction == metrics.HIGHER)
    best, kth = ranked[0], ranked[min(need, len(ranked)) - 1]
    return abs(kth / best - 1.0) if best else 0.0


def corroborated(values, direction, band, need=CORROBORATING_REPEATS):
    """Whether at least `need` repeats (all of them when fewer) lie within `band` of the best.

    A real slowdown is the same in every repeat; other work on the machine is erratic. When the
    slower side's best is not matched by its other repeats, the whole run may have been disturbed
    (measured: repeats 681-1247 Mcells/s against 1640 in the runs around it, the two best within 1 %
    of each other), and its best says nothing about the code."""
    return top_spread(values, direction, need) <= band


def _noise_source(testable, history_band):
    if testable and history_band is not None:
        return "repeats+history"
    if testable:
        return "repeats"
    return "history" if history_band is not None else "unknown"


def _verdict(change, noise, threshold, p_worse, p_better, alpha):
    # improvement measured on the same scale: how much less work per unit the candidate needs
    gain = -change / (1.0 + change) if change > -1.0 else float("inf")
    if change <= threshold and gain <= threshold:
        return "unchanged"        # within the user's tolerance whatever the noise
    if noise is None:
        return "insufficient"     # beyond the threshold, but nothing says how noisy the figure is
    worse_sig = p_worse is None or p_worse <= alpha
    better_sig = p_better is None or p_better <= alpha
    if change > threshold and change > noise and worse_sig:
        return "regressed"
    if gain > threshold and -change > noise and better_sig:
        return "improved"
    return "unchanged"


def compare_rows(baseline_rows, candidate_rows, threshold=DEFAULT_THRESHOLD, alpha=DEFAULT_ALPHA,
                 z=DEFAULT_Z, ignore=(), statistic=DEFAULT_STATISTIC, history=None, spreads=None,
                 size_threshold=None, max_regressed_sizes=None, notes=None):
    """One result dict per metric key present on either side.

    history: {row_key (nothing ignored): noise band} from the noise model (history.py), or None.
    spreads: {row_key: the recorded runs' usual spread of their best repeats} (history.py), or None.
    size_threshold, max_regressed_sizes: the curve rule (curve_gate.py) for per-size figures; None: its
    defaults. notes: a list that receives the curve rule's lines for the user.
    """
    base_groups = group_rows(baseline_rows, ignore)
    cand_groups = group_rows(candidate_rows, ignore)
    keys = list(base_groups) + [k for k in cand_groups if k not in base_groups]
    members = curve_gate.curve_members(keys)
    size_threshold = curve_gate.DEFAULT_SIZE_THRESHOLD if size_threshold is None else size_threshold
    results = []
    for key in keys:
        system, partition, environ, check, params, metric = key
        sample = (cand_groups.get(key) or base_groups.get(key))[0]
        entry = {"system": system, "partition": partition, "environ": environ, "check": check,
                 "parameters": params, "metric": metric, "unit": sample["unit"]}
        b_rows, c_rows = base_groups.get(key), cand_groups.get(key)
        directions = {r["direction"] for r in (b_rows or []) + (c_rows or [])} - {"unknown"}
        direction = directions.pop() if len(directions) == 1 else "unknown"
        entry["direction"] = direction
        if not b_rows or not c_rows:
            b_values = [r["value"] for r in b_rows or []]
            c_values = [r["value"] for r in c_rows or []]
            entry.update({"verdict": "missing", "missing_in": "candidate" if not c_rows else "baseline",
                          "statistic": statistic,
                          "baseline_median": quick_stats.median(b_values) if b_values else None,
                          "candidate_median": quick_stats.median(c_values) if c_values else None,
                          "baseline_value": location(b_values, direction, statistic) if b_values else None,
                          "candidate_value": location(c_values, direction, statistic) if c_values else None,
                          "baseline_n": len(b_rows or []), "candidate_n": len(c_rows or []),
                          "change": None, "noise": None, "noise_source": "unknown",
                          "p_worse": None, "p_better": None})
        else:
            if key in members:
                curve_gate.check_values(key, "baseline", [r["value"] for r in b_rows])
                curve_gate.check_values(key, "candidate", [r["value"] for r in c_rows])
            band = (history or {}).get(row_key(c_rows[0])) if not ignore else None
            spread = (spreads or {}).get(row_key(c_rows[0])) if not ignore else None
            entry.update(compare_values([r["value"] for r in b_rows], [r["value"] for r in c_rows],
                                        direction, size_threshold if key in members else threshold, alpha, z,
                                        statistic, history_band=band, usual_spread=spread))
        results.append(_diagnostic_not_gated(entry))
    return _curves(results, members, max_regressed_sizes, notes)


def _curves(results, members, max_regressed_sizes, notes):
    """The curve rule over the per-size figures (curve_gate.judge); its lines go to `notes`."""
    if not members:
        return results
    limit = curve_gate.DEFAULT_MAX_REGRESSED_SIZES if max_regressed_sizes is None else max_regressed_sizes
    results, lines = curve_gate.judge(results, members, limit)
    if notes is not None:
        notes.extend(lines)
    return results


def _diagnostic_not_gated(entry):
    """A diagnostic figure (metrics.FIGURES gated=False) that moved beyond the noise reads 'changed'."""
    if not figure_of(entry["metric"]).gated:
        entry["gated"] = False
        if entry.get("verdict") in ("regressed", "improved"):
            entry["verdict"] = "changed"
    return entry


def compare_with_history(candidate_rows, history_values, threshold=DEFAULT_THRESHOLD, z=DEFAULT_Z,
                         statistic=DEFAULT_STATISTIC, min_runs=None, size_threshold=None,
                         max_regressed_sizes=None, notes=None):
    """Candidate figures against the recorded history of the same system and figure.

    history_values: {row_key: [the statistic of each recorded run, newest first]}. The baseline value
    is the median of the runs' statistics, the noise their run-to-run spread; with fewer than
    min_runs recorded runs the noise is unknown.
    """
    min_runs = MIN_HISTORY_RUNS if min_runs is None else min_runs
    groups = group_rows(candidate_rows)
    members = curve_gate.curve_members(list(groups))
    size_threshold = curve_gate.DEFAULT_SIZE_THRESHOLD if size_threshold is None else size_threshold
    results = []
    for key, c_rows in groups.items():
        system, partition, environ, check, params, metric = key
        direction = c_rows[0]["direction"]
        entry = {"system": system, "partition": partition, "environ": environ, "check": check,
                 "parameters": params, "metric": metric, "unit": c_rows[0]["unit"], "direction": direction,
                 "statistic": statistic, "p_worse": None, "p_better": None}
        past = history_values.get(key) or []
        c_values = [r["value"] for r in c_rows]
        if key in members:
            curve_gate.check_values(key, "candidate", c_values)
        entry.update({"candidate_n": len(c_values), "candidate_median": stats.median(c_values),
                      "candidate_value": location(c_values, direction, statistic), "baseline_n": len(past)})
        if not past:
            entry.update({"verdict": "missing", "missing_in": "baseline", "baseline_value": None,
                          "baseline_median": None, "change": None, "noise": None, "noise_source": "unknown"})
            results.append(entry)
            continue
        base_value = stats.median(past)
        noise = centre_band(past, min_runs=min_runs)
        entry.update({"baseline_value": base_value, "baseline_median": base_value, "noise": noise,
                      "noise_source": "history" if noise is not None else "unknown",
                      "baseline_rel_spread": stats.robust_relative_sigma(past) if len(past) >= min_runs else None})
        if direction in (metrics.HIGHER, metrics.LOWER):
            change = metrics.worse_fraction(base_value, entry["candidate_value"], direction)
            entry["change"] = change
            entry["verdict"] = _verdict(change, noise, size_threshold if key in members else threshold,
                                        None, None, DEFAULT_ALPHA)
        else:
            change = (entry["candidate_median"] / base_value - 1.0) if base_value else 0.0
            entry["change"] = change
            beyond = abs(change) > threshold and (noise is None or abs(change) > noise)
            entry["verdict"] = "changed" if beyond else "unchanged"
        results.append(_diagnostic_not_gated(entry))
    return _curves(results, members, max_regressed_sizes, notes)


def check_ignore_fields(ignore, rows):
    """Reject --ignore fields that name nothing in the rows (a typo would silently match nothing)."""
    known = set(KEY_FIELDS) | {f"parameters.{k}" for r in rows for k in r["parameters"]}
    for field in ignore:
        if field not in known:
            params = sorted(k for k in known if k.startswith("parameters."))
            raise ValueError(f"unknown --ignore field {field!r}: use one of {', '.join(KEY_FIELDS)}"
                             + (f", {', '.join(params)}" if params else " (these runs have no parameters)"))


def summary(results):
    counts = OrderedDict((v, 0) for v in VERDICTS)
    for r in results:
        counts[r["verdict"]] += 1
    return counts
