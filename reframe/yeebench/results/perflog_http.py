"""Formatters for ReFrame's `httpjson` perflog handler (its `json_formatter` key): each performance
record of a test case becomes the same figures, labels and values as `yeebench results export` of the
ingested run (export schema, results/schema/export.md), in the body an import endpoint reads:

  vm_import     VictoriaMetrics /api/v1/import (JSON lines)
  openmetrics   VictoriaMetrics /api/v1/import/prometheus
  influx        VictoriaMetrics /write, InfluxDB /write or /api/v2/write
  export_jsonl  the export objects as JSON lines (a receiver of your own)

A site adds the handler to its own ReFrame configuration: results/perflog_httpjson_handler.py.

What a perflog record cannot say: ReFrame gives its log handlers no session id, so `run_id` is the
ReFrame process's start time and its PID (`20261128T051644Z-perflog-4242`), not the id `ingest` gives
the same session. git_sha is the checkout yeebench runs from (when it is one), image_digest
$YEEBENCH_IMAGE_DIGEST, as at ingest. A figure that is not a finite number, or negative where it cannot
be, is left out with a line on stderr (a handler must not fail the run).
"""
import datetime
import functools
import os
import sys
import time
from collections import defaultdict

from yeebench import metrics
from yeebench.results import export_figures, export_formats
from yeebench.results.errors import ResultsError

_STARTED = time.time()
_repeats = defaultdict(int)   # figure key -> repeats seen by this ReFrame process
_numbered = {}                # (figure key, test case run) -> its repeat: every handler numbers a record alike


def _iso(unix_time):
    return datetime.datetime.fromtimestamp(unix_time, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_id():
    stamp = datetime.datetime.fromtimestamp(_STARTED, datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-perflog-{os.getpid()}"


@functools.lru_cache(maxsize=1)
def _git_sha():
    from yeebench import package_data
    from yeebench.results import host_info
    root = package_data.checkout_root()
    return host_info.git_state(root)[0] if root else None


def _case(record):
    """The record's check_* fields as a test case of a run report (the same keys, without 'check_')."""
    return {key[len("check_"):]: value for key, value in record.__dict__.items() if key.startswith("check_")}


def _figures(case):
    """(metric, value, unit) of the record: every perf variable, or the one of a multiline record."""
    if case.get("perf_var"):
        return [(case["perf_var"], case.get("perf_value"), case.get("perf_unit"))]
    return [(key.split(":")[-1], entry[0], entry[4]) for key, entry in (case.get("perfvalues") or {}).items()]


def objects(record):
    """The export objects of one perflog record (none for a case that failed before performance)."""
    from yeebench.results import report_reader
    case = _case(record)
    if case.get("result") not in ("pass", None) and case.get("fail_phase") != "performance":
        return []
    check = report_reader.check_name(case)
    params = report_reader.parameters(case)
    completed = case.get("job_completion_time_unix")
    stamp = _iso(float(completed) if isinstance(completed, (int, float)) else time.time())
    token = (case.get("hashcode"), case.get("jobid"), completed)   # this run of this test case
    out = []
    for metric, value, unit in _figures(case):
        if value is None:
            continue
        direction, source = metrics.resolve_direction(metric, unit, case.get("perf_directions"))
        si_value, si_unit = metrics.to_si(value, unit)
        key = (case.get("system"), case.get("partition"), case.get("environ"), check,
               tuple(sorted((k, str(v)) for k, v in params.items())), metric)
        if (key, token) not in _numbered:
            _numbered[(key, token)] = _repeats[key]
            _repeats[key] += 1
        row = {"system": case.get("system") or "unknown", "partition": case.get("partition") or "",
               "environ": case.get("environ") or "", "check": check, "parameters": params, "metric": metric,
               "value": si_value, "unit": si_unit, "direction": direction, "repeat": _numbered[(key, token)],
               "run_id": run_id(), "timestamp": stamp}
        try:
            out.append(export_figures.figure_object(row, _git_sha(), os.environ.get("YEEBENCH_IMAGE_DIGEST") or None))
        except ResultsError as err:
            print(f"yeebench perflog: left out: {err}", file=sys.stderr)
    return out


def _formatter(fmt):
    def format_record(record, extras, ignore_keys):
        try:
            found = objects(record)
            return export_formats.document(export_formats.lines(found, fmt), fmt) if found else None
        except ResultsError as err:
            print(f"yeebench perflog: record not sent: {err}", file=sys.stderr)
            return None
    format_record.__name__ = f"{fmt.replace('-', '_')}_record"
    return format_record


vm_import = _formatter("vm-jsonl")
openmetrics = _formatter("openmetrics")
influx = _formatter("influx")
export_jsonl = _formatter("jsonl")
