"""Export objects (export_figures.py) written in the formats time-series databases read.

  openmetrics  OpenMetrics 1.0 text: `yeebench_figure{labels} value seconds.millis`, `# EOF` last
               (Prometheus' promtool and VictoriaMetrics' /api/v1/import/prometheus read it)
  influx       InfluxDB line protocol: `yeebench,tags figure=value nanoseconds`
  jsonl        the export objects themselves, one JSON object a line (export.schema.json)
  vm-jsonl     VictoriaMetrics' JSON line import format (/api/v1/import)

Each writer returns one string per figure (a line, no newline); `document` joins them into a body.
Label values are escaped as each format requires; what a format cannot carry is refused by name.
"""
import json

from yeebench.results.errors import ResultsError
from yeebench.results.export_figures import (INFLUX_FIELD, INFLUX_MEASUREMENT, SERIES, describe, labels,
                                             timestamp_ms)

OPENMETRICS_HEADER = (f"# TYPE {SERIES} gauge",
                      f"# HELP {SERIES} A figure of merit of a yeebench run; what it is and its unit "
                      f"are in the labels.")
OPENMETRICS_TRAILER = "# EOF"


def _number(value):
    return repr(float(value))


def om_escape(text):
    """An OpenMetrics/Prometheus label value: backslash, double quote and line feed escaped; any other
    character (tabs, carriage returns, non-ASCII) as it is, in UTF-8."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def influx_escape(text, obj):
    """An Influx tag key or value: backslash, comma, equals sign and space escaped with a backslash.
    Line protocol has no escape for a line break: such a value is refused."""
    if "\n" in text or "\r" in text:
        raise ResultsError(f"{describe(obj)}: label value {text!r} holds a line break, which InfluxDB line "
                           f"protocol cannot carry; export it as openmetrics or jsonl")
    return (text.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=").replace(" ", "\\ "))


def openmetrics_line(obj):
    ms = timestamp_ms(obj["timestamp"])
    body = ",".join(f'{name}="{om_escape(value)}"' for name, value in labels(obj).items())
    return f"{SERIES}{{{body}}} {_number(obj['value'])} {ms // 1000}.{ms % 1000:03d}"


def influx_line(obj):
    tags = "".join(f",{influx_escape(name, obj)}={influx_escape(value, obj)}"
                   for name, value in labels(obj).items())
    return (f"{INFLUX_MEASUREMENT}{tags} {INFLUX_FIELD}={_number(obj['value'])} "
            f"{timestamp_ms(obj['timestamp']) * 1_000_000}")


def jsonl_line(obj):
    return json.dumps(obj, ensure_ascii=False, allow_nan=False)


def vm_jsonl_line(obj):
    return json.dumps({"metric": {"__name__": SERIES, **labels(obj)}, "values": [float(obj["value"])],
                       "timestamps": [timestamp_ms(obj["timestamp"])]}, ensure_ascii=False, allow_nan=False)


LINE_WRITERS = {"openmetrics": openmetrics_line, "influx": influx_line, "jsonl": jsonl_line,
                "vm-jsonl": vm_jsonl_line}
FORMATS = tuple(LINE_WRITERS)


def lines(objects, fmt):
    writer = LINE_WRITERS[fmt]
    return [writer(obj) for obj in objects]


def document(figure_lines, fmt):
    """A complete body of the format from some of its figure lines (OpenMetrics gets its header and
    its `# EOF`, so that every batch pushed on its own is a whole exposition)."""
    if fmt == "openmetrics":
        figure_lines = [*OPENMETRICS_HEADER, *figure_lines, OPENMETRICS_TRAILER]
    return "".join(line + "\n" for line in figure_lines)
