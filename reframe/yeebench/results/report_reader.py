"""Read a ReFrame run report (`--report-file`) and turn its test cases into figures.

Refuses anything that is not a complete ReFrame 4 report: unreadable, not JSON
(truncated), failing ReFrame's own report schema, or of an unknown data version.
"""
import functools
import importlib.util
import json
import re
from pathlib import Path

import jsonschema

from yeebench import safe_io
from yeebench.results import fast_schema
from yeebench.results import case_fields, untrusted_json
from yeebench.results.errors import ResultsError

SUPPORTED_DATA_MAJOR = "4"
#: The largest report read: a smoke run's is 0.2 MiB; a whole machine's, the smoke set on 1,000 nodes
#: (27,016 test cases), is 116 MB and ingest peaks at 980 MiB with it; 256 MiB keeps ingest near 2 GiB
#: (ingest also refuses a report the available memory cannot hold, before reading it).
REPORT_LIMIT = 256 * 1024 * 1024

# Variables that describe *what* was measured; they become row parameters when a
# test case carries them (ReFrame parameters are always included).
DESCRIPTIVE_VARIABLES = (
    "placement", "binding", "threads", "num_threads", "policy", "mempolicy", "size", "message_size",
    "transport", "implementation", "collective", "ranks", "num_tasks", "num_tasks_per_node",
    "num_cpus_per_task", "precision", "backend", "decomp", "grid", "nodes", "container_platform",
    "output_format", "io_strategy", "steps", "nx", "ny", "nz", "locality", "single_copy",
)
_PARAM_RE = re.compile(r"\s%([^=\s]+)=(\S+)")
# how ReFrame ran a case, not what it measured: --repeat's counter (the repeats of one figure) and
# --distribute's node
RUN_MARKERS = (".repeat_no", ".nid")


@functools.lru_cache(maxsize=None)
def _reframe_report_schema():
    """ReFrame's own report schema: the file its reporting module reads (reframe/schemas/runreport.json),
    found without importing ReFrame (2-3 s of imports for one JSON file)."""
    try:
        spec = importlib.util.find_spec("reframe")
        for folder in (spec.submodule_search_locations or []) if spec else []:
            path = Path(folder) / "schemas" / "runreport.json"
            if path.is_file():
                return json.loads(path.read_text())
        from reframe.frontend.reporting import _schema
        return _schema()
    except Exception:  # ReFrame moved its schema: validate structure ourselves below
        return None


@functools.lru_cache(maxsize=None)
def _report_checks():
    """(quick acceptance, jsonschema validator) of ReFrame's schema; (None, None) without it."""
    schema = _reframe_report_schema()
    if schema is None:
        return None, None
    return fast_schema.compile_schema(schema), jsonschema.Draft7Validator(schema)


def load_report(path):
    """The parsed report and its raw text; ResultsError on any defect."""
    try:
        raw = safe_io.read_bytes(path, "report", REPORT_LIMIT)
    except safe_io.FileRefused as err:
        raise ResultsError(str(err)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ResultsError(f"report {path} is not UTF-8 text; is it a ReFrame JSON report?") from None
    return parse_report(text, f"report {path}"), text


def parse_report(text, what):
    """A ReFrame report from its JSON text (`what` names it in errors: 'report FILE', 'session UUID of DB')."""
    if not text.strip():
        raise ResultsError(f"{what} is empty")
    report = untrusted_json.loads(text, what, scrub_surrogates=False)   # scrubbed once it is known to be a report
    if not isinstance(report, dict) or "session_info" not in report or "runs" not in report:
        raise ResultsError(f"{what} is not a ReFrame run report (no session_info/runs)")
    if not isinstance(report["session_info"], dict) or not isinstance(report["runs"], list):
        raise ResultsError(f"{what} is not a ReFrame run report (session_info must be an object, "
                           f"runs a list)")
    if not all(isinstance(run, dict) and isinstance(run.get("testcases", []), list)
               and all(isinstance(case, dict) for case in run.get("testcases", []))
               for run in report["runs"]):
        raise ResultsError(f"{what} is not a ReFrame run report (each run must be an object whose "
                           f"testcases are objects)")
    version = str(report["session_info"].get("data_version", ""))
    if version.split(".")[0] != SUPPORTED_DATA_MAJOR:
        raise ResultsError(f"{what} has unknown ReFrame report data_version {version or 'n/a'!r} "
                           f"(supported: {SUPPORTED_DATA_MAJOR}.x)")
    accepts, validator = _report_checks()
    if validator is not None and not (accepts and accepts(report)):
        try:
            error = jsonschema.exceptions.best_match(validator.iter_errors(report))
        except RecursionError:
            raise ResultsError(f"{what} nests JSON too deeply to be a ReFrame run report") from None
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
            raise ResultsError(f"{what} fails ReFrame's report schema at {where}: {error.message}")
    return case_fields.normalise(untrusted_json.scrub(report, text, what))


def iter_testcases(report):
    """(run_index, testcase) for every test case of every run (reruns included), fixtures skipped."""
    for run_index, run in enumerate(report.get("runs", [])):
        for case in run.get("testcases", []):
            if case.get("fixture"):
                continue
            yield run_index, case


def check_name(case):
    """Class name of the check: the display name without its '%param=value' suffixes."""
    name = case.get("display_name") or case.get("name") or case.get("unique_name") or "unknown"
    return name.split(" %")[0].strip() or "unknown"


def parameters(case):
    """ReFrame parameters (from the display name) plus descriptive variables present."""
    params = {}
    display = case.get("display_name") or case.get("name") or ""
    for key, shown in _PARAM_RE.findall(display):
        if key in RUN_MARKERS:
            continue
        key = key.lstrip(".")  # `reframe -P VAR=a,b` shows a variable made a parameter as '.VAR'
        value = case.get(key, shown)
        # tuples/dicts: the check's own formatting (parameter fmt=) as shown in the display name
        params[key] = value if isinstance(value, (str, int, float, bool)) or value is None else shown
    for key in DESCRIPTIVE_VARIABLES:
        value = case.get(key)
        if key in params or value is None:
            continue
        if isinstance(value, (list, tuple)):
            value = "x".join(str(v) for v in value)
        elif isinstance(value, dict):
            value = json.dumps(value, sort_keys=True)
        params[key] = value
    return params


def perf_figures(case):
    """(metric, value, unit, reference, result) for each performance variable with a value."""
    values = case.get("perfvalues") or {}
    for key, entry in values.items():
        metric = key.split(":")[-1]
        if not isinstance(entry, (list, tuple)) or len(entry) < 5:
            raise ResultsError(f"test case {case.get('unique_name')}: malformed perfvalue {key!r}")
        value, ref, lower, upper, unit = entry[:5]
        result = entry[5] if len(entry) > 5 else None
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ResultsError(f"test case {case.get('unique_name')}: perfvalue {key!r} is not a number: {value!r}")
        if value != value or value in (float("inf"), float("-inf")):
            continue  # NaN/inf: not a figure
        yield metric, float(value), unit or "", [ref, lower, upper], result
