"""The report's tables of figures: per experiment, one row per figure pooled over partitions,
environments and nodes (inlined, collapsed); and the complete table, one row per figure of each
partition and environment, written beside the page as CSV and JSON.

A figure's verdicts (against a baseline) stay per partition and environment, as compare gives them;
a pooled row says how many of each there are, worst first, and its worst change.
"""
import csv
import io
import json
from collections import OrderedDict

from yeebench.results import compare, machine, quick_stats
from yeebench.results.formats import finite_for_json, verdict_text

# worst first: a pooled figure shows its worst verdict
VERDICT_ORDER = ("regressed", "missing", "insufficient", "changed", "improved", "unchanged")
HEADERS = ["check", "parameters", "metric", "median", "min", "max", "n", "unit", "better", "verdict",
           "change (+ = worse)", "noise"]
FULL_COLUMNS = ["run", "system", "partition", "environ", "check", "parameters", "metric", "median", "min", "max",
                "n", "unit", "direction", "direction_source", "nodes", "verdict", "change", "noise", "noise_source"]


def fmt(value):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def pooled_groups(run, full=None):
    """OrderedDict pooled key -> (rows, [full keys]); a pooled key is shaped like compare.row_key's,
    (system, partition, environ) of its first figure, the parameters without the --distribute marker.
    full: the run's compare.group_rows, when the caller has them."""
    groups = OrderedDict()
    index = {}
    for key, rows in (compare.group_rows(run.rows) if full is None else full).items():
        text = compare.parameter_text(machine.pooled_parameters(rows[0]))
        where = (key[3], text, key[5])
        if where not in index:
            index[where] = key[:3] + where
            groups[index[where]] = ([], [])
        members, keys = groups[index[where]]
        members.extend(rows)
        keys.append(key)
    return groups


def verdict_summary(results):
    """(css class, text) of the verdicts of one pooled figure's partitions and environments."""
    results = [r for r in results if r]
    if not results:
        return "none", "-"
    if len(results) == 1:
        return results[0]["verdict"], verdict_text(results[0])
    counts = OrderedDict((v, sum(1 for r in results if r["verdict"] == v)) for v in VERDICT_ORDER)
    worst = next(v for v, n in counts.items() if n)
    if counts[worst] == len(results):
        return worst, f"{verdict_text({'verdict': worst})}, all {len(results)}"
    return worst, ", ".join(f"{n} {verdict_text({'verdict': v})}" for v, n in counts.items() if n)


def _worst_change(results):
    changes = [r["change"] for r in results if r and r.get("change") is not None]
    return max(changes) if changes else None


def _row(key, rows, keys, verdicts):
    values = [r["value"] for r in rows]
    sample = rows[0]
    results = [verdicts.get(k) for k in keys]
    verdict_class, verdict = verdict_summary(results)
    if len(keys) == 1:
        one = results[0] or {}
        change, noise = one.get("change"), one.get("noise")
        change_text = "-" if change is None else f"{change * 100:+.1f}%"
        noise_text = "-" if not one else ("unknown" if noise is None else f"±{noise * 100:.1f}%")
    else:
        change = _worst_change(results)
        change_text = "-" if change is None else f"{change * 100:+.1f}% worst"
        noise_text = "-"
    cells = [(sample["check"], False), (key[4].replace(",", ", "), False), (sample["metric"], False),
             (fmt(quick_stats.median(values)), True), (fmt(min(values)), True), (fmt(max(values)), True),
             (str(len(values)), True), (sample["unit"] or "-", False),
             (f"{sample['direction']} ({sample['direction_source']})", False), (verdict, False),
             (change_text, True), (noise_text, True)]
    return {"cells": [{"text": t, "num": n} for t, n in cells], "verdict_class": verdict_class}


def experiment_tables(run, verdicts, node_of, pooled=None):
    """{label, headers, experiments: [{check, rows, figures, where}]}: one collapsed table per experiment.
    pooled: the run's pooled_groups, when the caller has them."""
    experiments = OrderedDict()
    for key, (rows, keys) in (pooled_groups(run) if pooled is None else pooled).items():
        experiments.setdefault(key[3], []).append((key, rows, keys))
    out = []
    for check, groups in experiments.items():
        rows = [r for _, members, _ in groups for r in members]
        partitions = {(r["system"], r["partition"]) for r in rows}
        environs = {r["environ"] for r in rows}
        nodes = {n for n in map(node_of, rows) if n}
        where = []
        if len(partitions) > 1 or len(environs) > 1:
            where.append(f"{len(partitions)} partition(s), {len(environs)} environment(s)")
        if len(nodes) > 1:
            where.append(f"{len(nodes)} nodes")
        out.append({"check": check, "figures": sum(len(keys) for _, _, keys in groups),
                    "where": ", ".join(where), "rows": [_row(k, members, keys, verdicts) for k, members, keys in groups]})
    return {"label": run.label, "headers": HEADERS, "experiments": out}


def full_rows(runs, verdicts_by_run, node_of, groups_by_run=None):
    """Every figure of every partition and environment: a dict per figure, FULL_COLUMNS its keys.
    groups_by_run: each run's compare.group_rows, when the caller has them."""
    out = []
    for index, (run, verdicts) in enumerate(zip(runs, verdicts_by_run)):
        groups = compare.group_rows(run.rows) if groups_by_run is None else groups_by_run[index]
        for key, rows in groups.items():
            values = [r["value"] for r in rows]
            verdict = verdicts.get(key) or {}
            nodes = sorted({n for n in map(node_of, rows) if n})
            out.append({"run": run.label, "system": key[0], "partition": key[1], "environ": key[2], "check": key[3],
                        "parameters": key[4], "metric": key[5], "median": quick_stats.median(values),
                        "min": min(values), "max": max(values), "n": len(values), "unit": rows[0]["unit"],
                        "direction": rows[0]["direction"], "direction_source": rows[0]["direction_source"],
                        "nodes": " ".join(nodes), "verdict": verdict_text(verdict) if verdict else None,
                        "change": verdict.get("change"), "noise": verdict.get("noise"),
                        "noise_source": verdict.get("noise_source")})
    return out


def csv_cell(value):
    """A cell a spreadsheet shows as text: a name from a run that starts like a formula (=, +, -, @, tab,
    carriage return) gets a leading apostrophe; numbers stay numbers."""
    if value is None:
        return ""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def as_csv(rows):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(FULL_COLUMNS)
    for row in rows:
        writer.writerow([csv_cell(row[c]) for c in FULL_COLUMNS])
    return buffer.getvalue()


def as_json(rows):
    return json.dumps(finite_for_json({"columns": FULL_COLUMNS, "figures": rows}), allow_nan=False) + "\n"
