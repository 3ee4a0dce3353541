"""A report's test cases with the field types the tools read them as.

ReFrame's report schema leaves most fields of a test case untyped, and a report is data from
outside: a `display_name` of 5, `tags` that are a number, a perfvalue whose unit is a list, an
integer figure of 400 digits. Every reader (ingest, the reports, `acceptance report`) sees the
cases only after normalise(): a text field is text or absent, `tags` a list of text,
`perf_directions` a mapping of text, `observations` a mapping, a perfvalue's numbers floats
(inf beyond a float's range, which the readers treat as no figure) and its unit text.
"""
import math

#: Fields read as text: a number becomes its text, anything else (a list, a mapping) is dropped.
TEXT_FIELDS = ("display_name", "name", "unique_name", "system", "partition", "environ", "result",
               "fail_phase", "fail_reason", "descr", "acceptance_reason", "acceptance_verdict",
               "filename", "outputdir", "stagedir", "array_size")


def _text(value):
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, (int, float)):      # bool included: True -> 'True'
        return str(value)
    return None


def _number(value):
    """A float for any JSON number (inf where an integer is beyond a float), None for the rest."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _perfvalue(entry):
    if not isinstance(entry, (list, tuple)) or len(entry) < 5:
        return entry                          # report_reader.perf_figures names it malformed
    entry = list(entry)
    value = entry[0]
    if isinstance(value, int) and not isinstance(value, bool):
        entry[0] = _number(value)
    for i in (1, 2, 3):                       # reference, lower and upper bounds
        number = _number(entry[i])
        entry[i] = number if number is not None and math.isfinite(number) else None
    entry[4] = entry[4] if isinstance(entry[4], str) else ""
    return entry


def normalise_case(case):
    """The case itself, its fields made the types above (in place)."""
    for field in TEXT_FIELDS:
        if field in case:
            value = _text(case[field])
            if value is None:
                case.pop(field)
            else:
                case[field] = value
    tags = case.get("tags")
    case["tags"] = [t for t in tags if isinstance(t, str)] if isinstance(tags, (list, tuple)) else []
    directions = case.get("perf_directions")
    case["perf_directions"] = ({k: v for k, v in directions.items() if isinstance(v, str)}
                               if isinstance(directions, dict) else {})
    observations = case.get("observations")
    if not isinstance(observations, dict):
        case["observations"] = {}
    elif "skip_reason" in observations:
        observations["skip_reason"] = _text(observations["skip_reason"])
    details = case.get("acceptance_details")
    if details is not None:
        case["acceptance_details"] = [d for d in details if isinstance(d, str)] if isinstance(details, list) else []
    values = case.get("perfvalues")
    if values is not None:
        case["perfvalues"] = ({k: _perfvalue(v) for k, v in values.items()} if isinstance(values, dict) else {})
    return case


def normalise(report):
    """The report (its structure checked by report_reader) with every test case normalised, in place;
    the session's name fields as text."""
    info = report.get("session_info")
    if isinstance(info, dict):
        for field in ("hostname", "uuid", "version", "data_version"):
            if field in info and _text(info[field]) is None and info[field] is not None:
                info.pop(field)
            elif field in info and info[field] is not None:
                info[field] = _text(info[field])
    for run in report["runs"]:              # report_reader checked: runs of objects, cases objects
        for case in run.get("testcases", []):
            normalise_case(case)
    return report
