"""Reading pushed figures back from a VictoriaMetrics (or any server with its /api/v1/export and the
Prometheus query API) and comparing them with what was sent: `results export --verify` and the
`test-export` stage.

A figure reads back when a sample of the series yeebench_figure with exactly its labels (plus any
`extra_label` the push URL added) has its timestamp and its value. VictoriaMetrics keeps a value to
12 significant decimal digits (0.6666666666666666 reads back 0.666666666666), so values are equal
when they agree to that: relative difference at most VALUE_RTOL.
"""
import json
import math
import time
import urllib.error
import urllib.parse

from yeebench.results.export_figures import SERIES, describe, labels, timestamp_ms
from yeebench.results.export_push import ENDPOINTS, opener_for, shown

VALUE_RTOL = 1e-11


class ReadbackError(Exception):
    """The database could not be asked (unreachable, an error answer, an answer that is not JSON)."""


def base_url(push_url):
    """The server's root for queries: the push URL without its import endpoint (and query)."""
    parts = urllib.parse.urlsplit(push_url)
    path = parts.path.rstrip("/")
    for ending, _ in ENDPOINTS:
        if path.endswith(ending):
            path = path[: -len(ending)]
            break
    if path.endswith("/influx"):      # VictoriaMetrics also serves Influx writes at /influx/write
        path = path[: -len("/influx")]
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urllib.parse.urlunsplit((parts.scheme, netloc, path, "", ""))


def extra_labels(push_url):
    """Labels VictoriaMetrics adds to every pushed sample from the URL: ?extra_label=name=value."""
    out = {}
    for key, value in urllib.parse.parse_qsl(urllib.parse.urlsplit(push_url).query):
        if key == "extra_label" and "=" in value:
            name, text = value.split("=", 1)
            out[name] = text
    return out


def _get(url, timeout, what):
    try:
        with opener_for(url).open(url, timeout=timeout) as response:
            return response.read().decode("utf-8")
    except urllib.error.HTTPError as err:
        raise ReadbackError(f"{what} at {shown(url)}: HTTP {err.code} {err.reason}") from None
    except (urllib.error.URLError, OSError) as err:
        raise ReadbackError(f"{what} at {shown(url)}: {getattr(err, 'reason', err)}") from None


def flush(base, timeout=10.0):
    """Ask VictoriaMetrics to make what it received searchable now (its /internal/force_flush); a
    server without that endpoint just takes longer, so a failure here is not an error."""
    try:
        _get(f"{base}/internal/force_flush", timeout, "flush")
    except ReadbackError:
        pass


def _quoted(text):
    """A PromQL string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def exported_samples(base, run_ids, extra=None, timeout=30.0):
    """[(labels, value, timestamp_ms)] of every sample of the runs' series carrying the extra labels,
    from /api/v1/export."""
    matchers = "".join(f",{name}={_quoted(value)}" for name, value in sorted((extra or {}).items()))
    query = urllib.parse.urlencode([("match[]", f'{{__name__="{SERIES}",run_id={_quoted(rid)}{matchers}}}')
                                    for rid in run_ids])
    text = _get(f"{base}/api/v1/export?{query}", timeout, "export")
    samples = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            series = json.loads(line)
            for value, stamp in zip(series["values"], series["timestamps"], strict=True):
                samples.append((series["metric"], value, stamp))
        except (ValueError, KeyError, TypeError) as err:
            raise ReadbackError(f"export at {base}: line {number} is not a series ({err})") from None
    return samples


def instant_query(base, query, at, timeout=30.0):
    """The result vector of a PromQL/MetricsQL instant query at Unix time `at`."""
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": query, "time": f"{at:.3f}"})
    text = _get(url, timeout, "query")
    try:
        answer = json.loads(text)
    except ValueError:
        raise ReadbackError(f"query at {base}: the answer is not JSON") from None
    if answer.get("status") != "success":
        raise ReadbackError(f"query {query!r}: {answer.get('errorType')}: {answer.get('error')}")
    return answer["data"]["result"]


def _key(label_map):
    return tuple(sorted(label_map.items()))


def same_value(sent, stored):
    return math.isclose(float(sent), float(stored), rel_tol=VALUE_RTOL, abs_tol=0.0) or sent == stored


def compare(objects, samples, extra=None):
    """What does not read back as sent: one line per problem (empty when every figure is there, once
    or as identical repeats of a push, and nothing else is)."""
    expected = {}
    for obj in objects:
        key = _key({"__name__": SERIES, **labels(obj), **(extra or {})})
        expected[(key, timestamp_ms(obj["timestamp"]))] = obj
    found = {}
    problems = []
    for label_map, value, stamp in samples:
        where = (_key(label_map), stamp)
        obj = expected.get(where)
        if obj is None:
            problems.append(f"unexpected sample {label_map} = {value} at {stamp}")
            continue
        found[where] = True
        if not same_value(obj["value"], value):
            problems.append(f"{describe(obj)}: sent {obj['value']!r}, stored {value!r}")
    problems += [f"{describe(obj)}: not stored (labels {labels(obj)})"
                 for where, obj in expected.items() if where not in found]
    return problems


def verify(objects, push_url, wait_s=30.0, timeout=30.0):
    """Read the pushed objects back; the problems left when every figure is stored or wait_s passed."""
    base = base_url(push_url)
    run_ids = sorted({obj["run_id"] for obj in objects})
    deadline = time.monotonic() + wait_s
    while True:
        flush(base, timeout)
        extra = extra_labels(push_url)
        problems = compare(objects, exported_samples(base, run_ids, extra, timeout), extra)
        if not problems or time.monotonic() >= deadline:
            return problems
        time.sleep(1.0)
