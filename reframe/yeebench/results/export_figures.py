"""Recorded runs -> export figures: one flat object per figure in the versioned export schema
(results/schema/export.md, schemas/export.schema.json), and the labels every time-series format
carries. The formats (export_formats.py) only write these objects out; what a figure is called in a
database is decided here, once.

EXPORT_SCHEMA_VERSION names the layout: the objects' fields, the series name and the label names.
Any change to them is a new version (test_results_export.py holds each version's layout and fails
on a change made without a new version).
"""
import calendar
import json
import math
import re
import time

from yeebench import metrics
from yeebench.results import store
from yeebench.results.errors import ResultsError

EXPORT_SCHEMA = "yeebench-export"
EXPORT_SCHEMA_VERSION = 1

#: The series every figure is a sample of (Prometheus/VictoriaMetrics metric name).
SERIES = "yeebench_figure"
#: InfluxDB measurement and field: VictoriaMetrics names an Influx series <measurement>_<field>,
#: so a figure pushed as Influx line protocol lands in the same series SERIES.
INFLUX_MEASUREMENT, INFLUX_FIELD = "yeebench", "figure"

#: Label name -> the object's field it carries, in the order the formats write them.
LABEL_FIELDS = ("system", "partition", "environ", "check", "metric", "unit", "direction", "repeat",
                "run_id", "git_sha", "image_digest")
#: Each parameter NAME becomes the label PARAM_PREFIX + NAME (characters outside [A-Za-z0-9_] -> '_').
PARAM_PREFIX = "param_"

_LABEL_NAME_BAD = re.compile(r"[^A-Za-z0-9_]")


def param_label(name):
    return PARAM_PREFIX + _LABEL_NAME_BAD.sub("_", str(name))


def label_text(value):
    """A parameter's value as label text: strings as they are, anything else as JSON (2, 0.5, true)."""
    return value if isinstance(value, str) else json.dumps(value)


def timestamp_ms(iso):
    """'2026-11-28T05:16:44Z' -> Unix milliseconds."""
    try:
        return calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ")) * 1000
    except (TypeError, ValueError):
        raise ResultsError(f"timestamp {iso!r} is not an ISO 8601 UTC time (YYYY-MM-DDTHH:MM:SSZ)") from None


_CONTROL = {code: f"\\x{code:02x}" for code in (*range(32), 127)} | {10: "\\n", 13: "\\r", 9: "\\t"}


def one_line(text):
    """text with its control characters written as escapes, so that a message stays on one line."""
    return str(text).translate(_CONTROL)


def describe(obj):
    """One figure named for a message (on one line): check {parameters} metric, run."""
    params = ",".join(f"{k}={v}" for k, v in sorted(obj["parameters"].items()))
    return one_line(f"{obj['check']} {{{params}}} {obj['metric']} (run {obj['run_id']})")


def _check_value(obj):
    value = obj["value"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ResultsError(f"{describe(obj)} = {value!r} is not a finite number; a time series cannot "
                           f"hold it: fix or drop the run")
    if value < 0 and metrics.non_negative(obj["metric"], obj["unit"]):
        raise ResultsError(f"{describe(obj)} = {value:g} {obj['unit']} is negative, which this figure "
                           f"cannot be: fix or drop the run")


def _check_text(obj):
    """Every label value must be encodable: a lone surrogate (possible in JSON) is not Unicode."""
    texts = [str(obj[f]) for f in LABEL_FIELDS if obj.get(f) is not None]
    texts += [label_text(v) for v in obj["parameters"].values()] + list(obj["parameters"])
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ResultsError(f"{describe(obj)}: label value {text!r} is not valid Unicode "
                               f"(a lone surrogate); no format can carry it") from None


def figure_object(row, git_sha=None, image_digest=None):
    """The export object of one row, checked (finite, not negative where the unit forbids it)."""
    obj = {
        "schema": EXPORT_SCHEMA, "schema_version": EXPORT_SCHEMA_VERSION,
        "system": row["system"], "partition": row.get("partition", ""), "environ": row.get("environ", ""),
        "check": row["check"], "parameters": dict(row.get("parameters") or {}), "metric": row["metric"],
        "value": row["value"], "unit": row.get("unit", ""), "direction": row.get("direction", "unknown"),
        "repeat": int(row.get("repeat", 0)), "run_id": row["run_id"], "timestamp": row["timestamp"],
        "git_sha": git_sha, "image_digest": image_digest,
    }
    _check_value(obj)
    _check_text(obj)
    timestamp_ms(obj["timestamp"])
    return obj


def provenance_ids(provenance):
    """(git SHA, container image digest) a run's provenance records, None where it records none."""
    prov = provenance or {}
    git_sha = (prov.get("git") or {}).get("sha")
    digest = (prov.get("environment_image") or {}).get("container_image_digest")
    return git_sha or None, digest or None


def labels(obj):
    """{label name: text} of an export object, in a fixed order. An empty or null field has no label:
    Prometheus reads an empty label as an absent one, and Influx has no empty tag."""
    out = {}
    for field in LABEL_FIELDS:
        value = obj.get(field)
        if value is not None and value != "":
            out[field] = str(value)
    for name in sorted(obj["parameters"]):
        label = param_label(name)
        if label in out:
            raise ResultsError(f"{describe(obj)}: parameters {name!r} and another both become label "
                               f"{label!r}; rename one")
        value = obj["parameters"][name]
        if value is not None and value != "":
            out[label] = label_text(value)
    return out


def load_objects(run_args):
    """Export objects of every run at or below the RUN arguments, in run order; a run named twice
    (directly and through its folder) is exported once, two runs with one id are refused."""
    seen, objects = {}, []
    for arg in run_args:
        paths = store.find_runs(arg)
        if not paths:
            raise ResultsError(f"{arg} holds no recorded runs (no {store.ROWS_FILE} below it)")
        for path in paths:
            run = store.load_run(path)
            key = path.resolve()
            if key in seen.values():
                continue
            if run.run_id in seen:
                raise ResultsError(f"two runs with the id {run.run_id}: {seen[run.run_id]} and {path}")
            seen[run.run_id] = key
            git_sha, digest = provenance_ids(run.provenance)
            objects.extend(figure_object(row, git_sha, digest) for row in run.rows)
    if not objects:
        raise ResultsError(f"the runs {' '.join(map(str, run_args))} hold no figures")
    return objects
