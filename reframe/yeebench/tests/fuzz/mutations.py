"""Crafted reports: a real ReFrame report with fields of hostile types and values, and JSON text that is
cut, flipped, nested or encoded wrongly. Every choice comes from the caller's seeded random.Random,
so a seed names the same corpus on every machine."""
import json

#: Test-case fields the tools read that ReFrame's report schema leaves untyped: most mutations hit these,
#: since a value of the wrong type there reaches the tools' code.
LOOSE_FIELDS = ("display_name", "descr", "tags", "perf_directions", "observations", "acceptance_reason",
                "acceptance_verdict", "acceptance_details", "array_size", "link_rate_bps")
#: Untyped fields that become a row's parameters, or that the provenance keeps as they are.
PARAMETER_FIELDS = ("num_tasks", "placement", "threads", "binding", "transport", "nodes", "decomp", "grid", "size",
                    "job_nodelist", "jobid", "precision", "backend", "ranks")
#: Fields the tools read that the schema types (a wrong type is refused there, on one line).
TYPED_FIELDS = ("name", "unique_name", "system", "partition", "environ", "result", "fail_phase", "fail_reason",
                "perfvalues", "job_completion_time_unix", "outputdir", "filename", "fixture")
SESSION_FIELDS = ("time_start_unix", "time_end_unix", "uuid", "hostname", "version", "cmdline", "data_version")

TEXT_PIECES = ("../../x", "/abs/x", "\x00", "\n", "\r\n", "\u2028", "\ud800", "\udfff", "\u202e", " %x=1",
               " %p=../..", "<script>alert(1)</script>", "{{ 7*7 }}", "$(id)", "`id`", "\u00e9\u4e2d", "\t",
               "\x1b[31m", ".", "..", "", "*", "acceptance", "pass", "fail", "skip", "higher", "lower",
               "ingest: plausibility warning: forged", "%", ",", "\"", "\\", "x" * 300)
DEEP = "__fuzz_deep__"        # replaced in the JSON text by nesting no dict could be dumped with


def hostile_text(rng):
    return "".join(rng.choice(TEXT_PIECES) for _ in range(rng.randint(1, 4)))


def hostile_value(rng):
    kind = rng.randrange(12) if rng.random() > 0.03 else 8      # nesting past the parser: now and then
    if kind == 0:
        return rng.randint(-10 ** 6, 10 ** 6)
    if kind == 1:
        return rng.choice((1, -1)) * 10 ** rng.randint(300, 1200)          # beyond a float
    if kind == 2:
        return rng.choice((1e308, -1e308, 5e-324, 0.0, -0.0, float("nan"), float("inf"), float("-inf")))
    if kind == 3:
        return rng.choice((True, False, None))
    if kind in (4, 5):
        return hostile_text(rng)
    if kind == 6:
        return [hostile_text(rng) for _ in range(rng.randint(0, 3))]
    if kind == 7:
        return {hostile_text(rng): hostile_value(rng) if rng.random() < 0.3 else hostile_text(rng)}
    if kind == 8 and rng.random() < 0.1:
        return DEEP
    if kind == 9:
        return [rng.randint(0, 9)] * rng.randint(0, 5)
    if kind == 10:
        return "x" * rng.randint(5000, 200000)
    return []


def _perfvalue(rng, entry):
    entry = list(entry) if isinstance(entry, list) else [1.0, None, None, None, "s"]
    op = rng.randrange(4)
    if op == 0 and entry:
        entry[rng.randrange(len(entry))] = hostile_value(rng)
    elif op == 1:
        del entry[rng.randrange(len(entry) + 1):]
    elif op == 2:
        entry.append(hostile_value(rng))
    else:
        return hostile_value(rng)
    return entry


def mutate_report(rng, report, job_dirs=()):
    """Apply 1-4 random mutations to `report` (a dict, changed in place); returns it."""
    cases = [c for run in report.get("runs", []) for c in run.get("testcases", [])]
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(20)
        case = rng.choice(cases) if cases else {}
        if op < 9:
            case[rng.choice(LOOSE_FIELDS)] = hostile_value(rng)
        elif op < 13 and isinstance(case.get("perfvalues"), dict) and case["perfvalues"]:
            key = rng.choice(sorted(case["perfvalues"]))
            case["perfvalues"][key] = _perfvalue(rng, case["perfvalues"][key])
        elif op < 15:
            report["session_info"][rng.choice(SESSION_FIELDS)] = hostile_value(rng)
        elif op == 15 and job_dirs:
            for c in cases:                          # job output folders holding FIFOs, links to /proc ...
                c["outputdir"] = rng.choice(job_dirs)
        elif op == 16 and case:
            case.pop(rng.choice(sorted(case)), None)
        elif op == 17:
            run = rng.choice(report["runs"])
            run["testcases"] = run["testcases"] * rng.randint(0, 3)
        elif op == 18:
            case[rng.choice(TYPED_FIELDS)] = hostile_value(rng)
        elif rng.random() < 0.7:
            case[rng.choice(PARAMETER_FIELDS)] = hostile_value(rng)
        else:
            case[hostile_text(rng) or "k"] = hostile_value(rng)
    return report


def report_text(rng, report):
    """The report's JSON text, sometimes damaged as text: cut, bytes flipped, not UTF-8, a BOM, an integer
    of thousands of digits, nesting past any parser."""
    text = json.dumps(report).replace(json.dumps(DEEP), "[" * 5000 + "]" * 5000)
    data = text.encode("utf-8", "surrogatepass")
    op = rng.randrange(36)       # one report in six is damaged as text; the rest reach the readers
    if op == 0:
        return data[:rng.randrange(len(data))]
    if op == 1:
        at = rng.randrange(len(data))
        return data[:at] + bytes([rng.randrange(256)]) + data[at + 1:]
    if op == 2:
        return data.replace(b'"session_info": {', b'"session_info": {"x": "\xff\xfe", ', 1)
    if op == 3:
        return b"\xef\xbb\xbf" + data
    if op == 4:
        return data.replace(b'"session_info": {', b'"session_info": {"x": ' + b"9" * 5000 + b", ", 1)
    if op == 5:
        return rng.choice((b"", b"null", b"[]", b"{}", b"\x00" * 64))
    return data
