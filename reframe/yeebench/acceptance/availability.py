"""Availability (effectiveness level) of a cluster over an acceptance window.

Paper 003 (Thufir) accepts a system only after it is available >= 97 % of a
30-day window under full use, measured as

    EL = 100 * operational use time / scheduled use time      (processor hours)

The log is a CSV file, one row per node and day (or any period), in the format
documented in AVAILABILITY_FORMAT below.  Hours may be node-hours or
processor-hours; they only have to be the same unit in both columns.
"""
import csv
import datetime as dt
import io

AVAILABILITY_FORMAT = """\
CSV with a header row; '#' lines are comments.  Columns (any order, extra columns ignored):
  date               day of the record, YYYY-MM-DD
  node               node name (or a group such as 'cluster')
  scheduled_hours    hours the node was scheduled to be available to users (>= 0)
  operational_hours  hours it was actually usable (0 <= operational <= scheduled)
  note               optional free text (e.g. 'PSU replaced')
One row per (date, node); a repeated pair is an error."""

REQUIRED_COLUMNS = ("date", "node", "scheduled_hours", "operational_hours")


class AvailabilityError(ValueError):
    """The log cannot be used: the message names the line and the problem."""


def _parse_hours(text, column, lineno):
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise AvailabilityError(f"line {lineno}: {column} {text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise AvailabilityError(f"line {lineno}: {column} {text!r} is not a finite number")
    if value < 0:
        raise AvailabilityError(f"line {lineno}: {column} {value:g} is negative")
    return value


def _parse_date(text, lineno):
    try:
        return dt.date.fromisoformat((text or "").strip())
    except ValueError:
        raise AvailabilityError(f"line {lineno}: date {text!r} is not YYYY-MM-DD") from None


def parse_log(text):
    """Parse the CSV text into a list of records (dicts); raise AvailabilityError."""
    text = text.lstrip("\ufeff")  # spreadsheet exports start with a byte-order mark
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise AvailabilityError("the log is empty (no header, no rows)")
    reader = csv.reader(io.StringIO("\n".join(line for _, line in lines)))
    rows = list(reader)
    header = [h.strip().lower() for h in rows[0]]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise AvailabilityError(f"line {lines[0][0]}: header lacks column(s) {', '.join(missing)} "
                                f"(need {', '.join(REQUIRED_COLUMNS)})")
    index = {name: header.index(name) for name in header}
    records, seen = [], set()
    for (lineno, _), row in zip(lines[1:], rows[1:]):
        if len(row) < len(header):
            raise AvailabilityError(f"line {lineno}: {len(row)} field(s), header has {len(header)}")
        field = lambda name: row[index[name]].strip()  # noqa: E731 - tiny accessor
        node = field("node")
        if not node:
            raise AvailabilityError(f"line {lineno}: node is empty")
        day = _parse_date(field("date"), lineno)
        scheduled = _parse_hours(field("scheduled_hours"), "scheduled_hours", lineno)
        operational = _parse_hours(field("operational_hours"), "operational_hours", lineno)
        if operational > scheduled:
            raise AvailabilityError(f"line {lineno}: operational_hours {operational:g} exceeds "
                                    f"scheduled_hours {scheduled:g}")
        if (day, node) in seen:
            raise AvailabilityError(f"line {lineno}: second row for node {node} on {day}")
        seen.add((day, node))
        note = field("note") if "note" in index else ""
        records.append({"date": day, "node": node, "scheduled": scheduled,
                        "operational": operational, "note": note})
    if not records:
        raise AvailabilityError("the log has a header but no rows")
    return records


def effectiveness(records, days=30, end=None, start=None, threshold=97.0):
    """EL over a window of `days` days ending on `end` (default: last date in the log).

    Returns a dict with the window, EL, per-node EL (worst first), coverage and
    the verdict: PASS (EL >= threshold over a fully covered window), FAIL, or
    INSUFFICIENT (the log does not cover the whole window).
    """
    if days is not None and days < 1:
        raise AvailabilityError(f"window of {days} day(s); need at least 1")
    if not 0 < threshold <= 100:
        raise AvailabilityError(f"threshold {threshold:g}% is outside (0, 100]")
    end = end or max(r["date"] for r in records)
    start = start or end - dt.timedelta(days=days - 1)
    if start > end:
        raise AvailabilityError(f"window start {start} is after its end {end}")
    window = [r for r in records if start <= r["date"] <= end]
    if not window:
        raise AvailabilityError(f"no rows between {start} and {end}")
    scheduled = sum(r["scheduled"] for r in window)
    operational = sum(r["operational"] for r in window)
    if scheduled == 0:
        raise AvailabilityError(f"no scheduled hours between {start} and {end}: EL is undefined")
    per_node = {}
    for r in window:
        entry = per_node.setdefault(r["node"], {"scheduled": 0.0, "operational": 0.0, "notes": []})
        entry["scheduled"] += r["scheduled"]
        entry["operational"] += r["operational"]
        if r["note"]:
            entry["notes"].append(f"{r['date']}: {r['note']}")
    nodes = []
    for node, e in per_node.items():
        el = 100.0 * e["operational"] / e["scheduled"] if e["scheduled"] else None
        nodes.append({"node": node, "scheduled_hours": e["scheduled"],
                      "operational_hours": e["operational"], "el_percent": el, "notes": e["notes"]})
    nodes.sort(key=lambda n: (n["el_percent"] is None, n["el_percent"] if n["el_percent"] is not None else 0))
    window_days = (end - start).days + 1
    covered = sorted({r["date"] for r in window})
    el = 100.0 * operational / scheduled
    if len(covered) < window_days:
        verdict = "INSUFFICIENT"
        reason = (f"the log covers {len(covered)} of the {window_days} days from {start} to {end}; "
                  f"EL {el:.2f}% is not a verdict until the whole window is logged")
    elif el >= threshold:
        verdict = "PASS"
        reason = f"EL {el:.2f}% >= {threshold:g}% over {window_days} days ({start} to {end})"
    else:
        verdict = "FAIL"
        worst = nodes[0]
        reason = (f"EL {el:.2f}% < {threshold:g}% over {window_days} days ({start} to {end}); "
                  f"least available node {worst['node']} at {worst['el_percent']:.2f}%")
    return {"start": start.isoformat(), "end": end.isoformat(), "days": window_days,
            "days_covered": len(covered), "scheduled_hours": scheduled,
            "operational_hours": operational, "el_percent": el, "threshold_percent": threshold,
            "verdict": verdict, "reason": reason, "nodes": nodes}
