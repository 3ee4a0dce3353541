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
import math

AVAILABILITY_FORMAT = """\
CSV with a header row; '#' lines are comments.  Columns (any order, extra columns ignored):
  date               day of the record, YYYY-MM-DD
  node               node name (or a group such as 'cluster')
  scheduled_hours    hours the node was scheduled to be available to users (>= 0)
  operational_hours  hours it was actually usable (0 <= operational <= scheduled)
  note               optional free text (e.g. 'PSU replaced')
Quote a field that contains a comma ("a, b"); a row with more fields than the header is an error.
One row per (date, node); a repeated pair is an error.  Every node in the log is expected on every
day of the window: a missing (node, day) row is unknown, neither up nor down."""

REQUIRED_COLUMNS = ("date", "node", "scheduled_hours", "operational_hours")
DEFAULT_DAYS = 30
#: Logged node-days (percent of nodes x days in the window) below which there is no verdict.
DEFAULT_MIN_COVERAGE = 95.0


#: A log of one row per node and day: 64 MiB holds about a million rows.
LOG_LIMIT = 64 * 1024 * 1024


class AvailabilityError(ValueError):
    """The log cannot be used: the message names the line and the problem."""


def read_log(path):
    """The text of an availability log (a bounded regular UTF-8 file); safe_io.FileRefused (a usage
    error: one line, exit 2) for anything else."""
    from yeebench import safe_io
    return safe_io.read_text(path, "availability log", LOG_LIMIT)


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


def _data_rows(text):
    """(line number, fields) of every data row, by the csv module's quoting rules.

    Blank rows and rows whose first field starts with '#' are comments.  The
    line number is the row's first physical line (a quoted field may span lines).
    """
    reader = csv.reader(io.StringIO(text, newline=""))
    first_line = 1
    try:
        for row in reader:
            if row and any(f.strip() for f in row) and not row[0].lstrip().startswith("#"):
                yield first_line, row
            first_line = reader.line_num + 1
    except csv.Error as err:
        raise AvailabilityError(f"line {reader.line_num}: not CSV ({err})") from None


def parse_log(text):
    """Parse the CSV text into a list of records (dicts); raise AvailabilityError."""
    text = text.lstrip("\ufeff")  # spreadsheet exports start with a byte-order mark
    rows = list(_data_rows(text))
    if not rows:
        raise AvailabilityError("the log is empty (no header, no rows)")
    header_line, header = rows[0]
    header = [h.strip().lower() for h in header]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise AvailabilityError(f"line {header_line}: header lacks column(s) {', '.join(missing)} "
                                f"(need {', '.join(REQUIRED_COLUMNS)})")
    index = {name: header.index(name) for name in header}
    records, seen = [], set()
    for lineno, row in rows[1:]:
        if len(row) < len(header):
            raise AvailabilityError(f"line {lineno}: {len(row)} field(s), header has {len(header)}")
        if len(row) > len(header):
            raise AvailabilityError(f"line {lineno}: {len(row)} fields, header has {len(header)} "
                                    "(a field containing a comma must be in double quotes)")
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


def window(records, days=None, start=None, end=None):
    """(start, end) of the window from at most two of days/start/end.

    Neither start nor end: the window ends on the last date in the log.  Days
    defaults to 30 unless both ends are given; all three at once is a conflict.
    """
    if days is not None and days < 1:
        raise AvailabilityError(f"window of {days} day(s); need at least 1")
    if start and end and days is not None:
        raise AvailabilityError("--start, --end and --days all given: give at most two of them")
    days = DEFAULT_DAYS if days is None else days
    try:
        if start and not end:
            end = start + dt.timedelta(days=days - 1)
        end = end or max(r["date"] for r in records)
        start = start or end - dt.timedelta(days=days - 1)
    except OverflowError:
        raise AvailabilityError(f"a window of {days} day(s) from {start or end} runs past the calendar "
                                f"(years 1 to 9999)") from None
    if start > end:
        raise AvailabilityError(f"window start {start} is after its end {end}")
    return start, end


def _typical_hours(rows):
    """Median scheduled hours of a node's logged days: what an unlogged day would have held."""
    values = sorted(r["scheduled"] for r in rows)
    return values[len(values) // 2] if values else 0.0


def effectiveness(records, days=None, end=None, start=None, threshold=97.0,
                  min_coverage=DEFAULT_MIN_COVERAGE):
    """EL over a window, counted per node and day.

    Every node named anywhere in the log is expected on every day of the
    window; a (node, day) without a row is unknown, neither up nor down.  The
    verdict is PASS only when it holds even if every unknown node-day was down,
    FAIL when it fails even if they were all up, and INSUFFICIENT DATA when the
    unknown node-days decide it or the logged node-days cover less than
    `min_coverage` percent of the window.  Returns a dict with the window, EL
    (over logged node-days) and its bounds, coverage, per-node EL (worst first),
    the verdict and its reason.
    """
    if not 0 < threshold <= 100:
        raise AvailabilityError(f"threshold {threshold:g}% is outside (0, 100]")
    if not 0 < min_coverage <= 100:
        raise AvailabilityError(f"coverage threshold {min_coverage:g}% is outside (0, 100]")
    start, end = window(records, days, start, end)
    in_window = [r for r in records if start <= r["date"] <= end]
    if not in_window:
        raise AvailabilityError(f"no rows between {start} and {end}")
    window_days = (end - start).days + 1
    by_node = {}
    for r in records:
        by_node.setdefault(r["node"], {"all": [], "window": []})["all"].append(r)
    for r in in_window:
        by_node[r["node"]]["window"].append(r)
    nodes, unknown_hours, missing = [], 0.0, 0
    for node, rows in by_node.items():
        logged = rows["window"]
        sched = sum(r["scheduled"] for r in logged)
        oper = sum(r["operational"] for r in logged)
        unknown_days = window_days - len(logged)
        node_unknown = unknown_days * _typical_hours(logged or rows["all"])
        missing += unknown_days
        unknown_hours += node_unknown
        nodes.append({"node": node, "scheduled_hours": sched, "operational_hours": oper,
                      "el_percent": 100.0 * oper / sched if sched else None,
                      "days_logged": len(logged), "days_unknown": unknown_days,
                      "unknown_hours": node_unknown,
                      "notes": [f"{r['date']}: {r['note']}" for r in logged if r["note"]]})
    nodes.sort(key=lambda n: (n["el_percent"] is None, n["el_percent"] if n["el_percent"] is not None else 0))
    scheduled = sum(n["scheduled_hours"] for n in nodes)
    operational = sum(n["operational_hours"] for n in nodes)
    if scheduled == 0:
        raise AvailabilityError(f"no scheduled hours between {start} and {end}: EL is undefined")
    el = 100.0 * operational / scheduled
    el_low = 100.0 * operational / (scheduled + unknown_hours)  # every unknown node-day down
    el_high = 100.0 * (operational + unknown_hours) / (scheduled + unknown_hours)  # ... all up
    if not all(math.isfinite(x) for x in (scheduled, operational, unknown_hours, el, el_low, el_high)):
        # each value was finite, their sum is not: no EL and no verdict can come from such a log
        raise AvailabilityError(f"the hours between {start} and {end} are too large to add up "
                                f"(their sum overflows); check the log's units")
    expected = window_days * len(nodes)
    coverage = 100.0 * (expected - missing) / expected
    span = f"{window_days} days ({start} to {end})"
    gaps = ", ".join(f"{n['node']} {n['days_unknown']} day(s)" for n in
                     sorted(nodes, key=lambda n: -n["days_unknown"]) if n["days_unknown"])
    if coverage < min_coverage:
        verdict = "INSUFFICIENT DATA"
        reason = (f"the log covers {expected - missing} of {expected} node-days ({coverage:.1f}% < "
                  f"{min_coverage:g}% required) over {span}; unknown: {gaps}; EL {el:.2f}% over the "
                  f"logged node-days is not a verdict")
    elif el_low >= threshold:
        verdict = "PASS"
        reason = f"EL {el:.2f}% >= {threshold:g}% over {span}"
        if missing:
            reason += (f"; {missing} unknown node-day(s) ({gaps}) cannot change it: "
                       f"{el_low:.2f}% even if they were all down")
    elif el_high < threshold:
        verdict = "FAIL"
        worst = nodes[0]
        reason = (f"EL {el:.2f}% < {threshold:g}% over {span}; least available node "
                  f"{worst['node']} at {worst['el_percent']:.2f}%")
        if missing:
            reason += f"; below even if the {missing} unknown node-day(s) were all up ({el_high:.2f}%)"
    else:
        verdict = "INSUFFICIENT DATA"
        reason = (f"EL {el:.2f}% over the logged node-days, but the {missing} unknown node-day(s) "
                  f"({gaps}) decide it: between {el_low:.2f}% and {el_high:.2f}% against {threshold:g}%")
    return {"start": start.isoformat(), "end": end.isoformat(), "days": window_days,
            "days_covered": len({r["date"] for r in in_window}), "node_days_expected": expected,
            "node_days_unknown": missing, "coverage_percent": coverage,
            "min_coverage_percent": min_coverage, "scheduled_hours": scheduled,
            "operational_hours": operational, "el_percent": el, "el_low_percent": el_low,
            "el_high_percent": el_high, "threshold_percent": threshold,
            "verdict": verdict, "reason": reason, "nodes": nodes}
