"""The acceptance sign-off page: every acceptance check with its verdict, reason and FOMs.

Input: ReFrame JSON run report(s) (read and validated by the results tooling's
report reader).  Output: one self-contained HTML page (inline CSS, no scripts,
no external files), or text / JSON for terminals and scripts.
"""
import datetime as dt
import html
import json

from yeebench.acceptance.verdicts import FAIL, NOT_MEASURED, PASS, UNEXPLAINED_SKIP, VERDICTS
from yeebench.results.report_reader import check_name, iter_testcases, load_report, perf_figures

ACCEPTANCE_TAG = "acceptance"


def collect(report_paths):
    """Acceptance test cases of the reports as plain dicts, in check-name order.

    A check run more than once (reruns, several reports) keeps its last result.
    """
    cases, systems, sessions = {}, set(), []
    for path in report_paths:
        report, _ = load_report(path)
        sessions.append(report.get("session_info", {}))
        for _, case in iter_testcases(report):
            if ACCEPTANCE_TAG not in (case.get("tags") or []):
                continue
            result = case.get("result") or "unknown"
            # the base class keeps the reason of its own skips (no processor entry) in observations
            reason = (case.get("acceptance_reason") or (case.get("observations") or {}).get("skip_reason")
                      or "")
            fail_reason = (case.get("fail_reason") or "").strip().splitlines()
            fail_reason = fail_reason[0].rstrip(":") if fail_reason else ""
            verdict = VERDICTS.get(result, NOT_MEASURED)
            if verdict == PASS and case.get("acceptance_verdict") == NOT_MEASURED:
                verdict = NOT_MEASURED  # the check ran but had nothing it could honestly measure
            if not reason:
                reason = fail_reason or {"skip": UNEXPLAINED_SKIP, "abort": "the run was aborted before a verdict"
                                         }.get(result, "no reason recorded")
            elif result == "fail" and case.get("fail_phase") not in (None, "sanity"):
                reason = f"{reason}; then failed in {case['fail_phase']}: {fail_reason}"
            where = f"{case.get('system')}:{case.get('partition')}+{case.get('environ')}"
            systems.add(f"{case.get('system')}:{case.get('partition')}")
            foms = [{"metric": m, "value": v, "unit": u,
                     "direction": (case.get("perf_directions") or {}).get(m, "")}
                    for m, v, u, _, _ in perf_figures(case)]
            key = (case.get("display_name") or case.get("name"), where)
            cases[key] = {"check": check_name(case), "name": case.get("display_name") or case.get("name"),
                          "where": where, "result": result,
                          "verdict": verdict, "waiver": None,
                          "reason": reason,
                          "details": list(case.get("acceptance_details") or []),
                          "description": case.get("descr") or "", "foms": foms}
    ordered = sorted(cases.values(), key=lambda c: (c["check"], c["name"], c["where"]))
    return {"cases": ordered, "systems": sorted(systems), "sessions": sessions}


def add_case(summary, case):
    """Add a verdict that does not come from ReFrame (e.g. availability), keeping the order."""
    summary["cases"] = sorted(summary["cases"] + [dict({"waiver": None, "details": [], "foms": [],
                                                        "description": "", "result": ""}, **case)],
                              key=lambda c: (c["check"], c["name"], c["where"]))


def availability_case(log_path):
    """The availability verdict (paper 003's EL over the last 30 days) as a row of the page."""
    from yeebench.acceptance import availability
    case = {"check": "AcceptanceAvailability", "name": "AcceptanceAvailability",
            "description": "Availability: EL = operational / scheduled hours, per node and day (paper 003)"}
    if not log_path:
        return dict(case, where="-", verdict=NOT_MEASURED,
                    reason="no availability log given (yeebench acceptance report --availability LOG.csv; "
                           "format: yeebench acceptance availability --help)")
    from yeebench.safe_io import FileRefused
    try:
        result = availability.effectiveness(availability.parse_log(availability.read_log(log_path)))
    except (FileRefused, availability.AvailabilityError) as err:
        return dict(case, where=log_path, verdict=NOT_MEASURED, reason=f"availability log unusable: {err}")
    verdict = {"PASS": PASS, "FAIL": FAIL}.get(result["verdict"], NOT_MEASURED)
    reason = result["reason"] if verdict != NOT_MEASURED else f"{result['verdict']}: {result['reason']}"
    return dict(case, where=log_path, verdict=verdict, reason=reason,
                details=[f"{n['node']}: EL {n['el_percent']:.2f}% over {n['days_logged']} logged day(s), "
                         f"{n['days_unknown']} unknown" if n["el_percent"] is not None else
                         f"{n['node']}: no scheduled hours logged" for n in result["nodes"]],
                foms=[{"metric": "el", "value": result["el_percent"], "unit": "%", "direction": "higher"},
                      {"metric": "node_day_coverage", "value": result["coverage_percent"], "unit": "%",
                       "direction": "higher"}])


def counts(summary):
    """Verdict tallies: PASS, FAIL, NOT MEASURED (not waived) and WAIVED (not measured, waived)."""
    out = {PASS: 0, FAIL: 0, NOT_MEASURED: 0, "WAIVED": 0}
    for case in summary["cases"]:
        out["WAIVED" if case.get("waiver") else case["verdict"]] += 1
    return out


def overall(summary):
    """The headline: ACCEPTABLE only when nothing failed, something passed and every check that
    measured nothing was waived by the operator; a NOT MEASURED counts as not accepted."""
    c = counts(summary)
    if not summary["cases"]:
        return "NO ACCEPTANCE CHECKS"
    if c[FAIL] or c[NOT_MEASURED]:
        return "NOT ACCEPTABLE"
    return "ACCEPTABLE" if c[PASS] else "NOTHING MEASURED"


def headline_counts(summary):
    c = counts(summary)
    text = f"{c[PASS]} passed, {c[FAIL]} failed, {c[NOT_MEASURED]} not measured"
    return text + (f", {c['WAIVED']} not measured but waived" if c["WAIVED"] else "")


def shown_verdict(case):
    return f"{case['verdict']} (waived)" if case.get("waiver") else case["verdict"]


def _fmt(value):
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def as_text(summary):
    lines = [f"acceptance: {overall(summary)} ({headline_counts(summary)}) "
             f"on {', '.join(summary['systems']) or '-'}"]
    for case in summary["cases"]:
        foms = ", ".join(f"{f['metric']} {_fmt(f['value'])} {f['unit']}".rstrip() for f in case["foms"])
        waiver = case.get("waiver")
        lines.append(f"{shown_verdict(case):<12} {case['name']} [{case['where']}]: {case['reason']}"
                     + (f" | waived by {waiver['by']}: {waiver['reason']}" if waiver else "")
                     + (f" | {foms}" if foms else ""))
    for note in summary.get("waiver_notes", []):
        lines.append(f"waivers: {note}")
    return "\n".join(lines) + "\n"


def as_json(summary):
    from yeebench.results.formats import finite_for_json   # a report's NaN or inf is written as null
    doc = {"overall": overall(summary), "counts": counts(summary), **{
        k: summary.get(k) for k in ("systems", "cases", "waivers", "waiver_notes")}}
    return json.dumps(finite_for_json(doc), indent=2, sort_keys=True, default=str, allow_nan=False) + "\n"


CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:72em;color:#222}
h1{font-size:1.5em;margin-bottom:.2em} .meta{color:#555;font-size:.9em}
.headline{font-size:1.3em;font-weight:bold;padding:.4em .8em;display:inline-block;border-radius:4px;margin:.6em 0}
table{border-collapse:collapse;width:100%;font-size:.9em;table-layout:fixed}
th,td{border:1px solid #ccc;padding:.35em .5em;vertical-align:top;text-align:left;overflow-wrap:anywhere}
col.v{width:6em} col.c{width:17em} col.w{width:12em} col.f{width:16em}
th{background:#f2f2f2} .PASS{background:#dff0d8} .FAIL,.NOT{background:#f2dede} .NOT-MEASURED{background:#fcf8e3}
.WAIVED{background:#eef} .ACCEPTABLE{background:#dff0d8} .NOTHING{background:#fcf8e3} details{margin-top:.3em} details li{font-family:monospace;font-size:.85em}
.sign td{height:2.5em} ul.failures li{margin:.2em 0}
"""


def write_results_page(report_paths, output):
    """The results tooling's report (all figures, provenance) of the same run(s), for the link. A run
    whose checks all failed records no figure, yet what its cases kept is the evidence a reader of a
    failed acceptance needs (the pair matrix that names the bad node): it is shown from the report
    directly, never recorded."""
    import tempfile
    from pathlib import Path

    from yeebench.results import ingest, report as results_report, sources
    from yeebench.results.errors import NothingToRecord
    runs = []
    with tempfile.TemporaryDirectory(prefix="yeebench-acceptance-") as tmp:
        for path in report_paths:
            try:
                runs.append(sources.load_source(str(ingest.ingest(path, results_dir=tmp))))
            except NothingToRecord:
                runs.append(_evidence_only(path, tmp))
        return results_report.write_report(runs, Path(output))


def _evidence_only(report_path, results_dir):
    """A run source of a report without figures: no rows, its cases' provenance (failures, details)."""
    from yeebench.results import ingest, report_reader, sources
    report, text = report_reader.load_report(report_path)
    _, rows, provenance, _ = ingest.prepare(report, text, f"report {report_path}", results_dir, without_figures=True)
    return sources.RowSource(provenance["run_id"], rows, [provenance])


def as_html(summary, title="Acceptance report", results_link=None):
    esc = html.escape
    head = overall(summary)
    css_class = head.split()[0]
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    hosts = sorted({s.get("hostname", "") for s in summary["sessions"] if s.get("hostname")})
    rows = []
    for case in summary["cases"]:
        foms = "<br>".join(
            f"{esc(f['metric'])} = {esc(_fmt(f['value']))} {esc(f['unit'])}"
            + (f" <small>({esc(f['direction'])} is better)</small>" if f["direction"] else "")
            for f in case["foms"])
        details = ""
        if case["details"]:
            items = "".join(f"<li>{esc(d)}</li>" for d in case["details"])
            details = f"<details><summary>{len(case['details'])} detail line(s)</summary><ul>{items}</ul></details>"
        waiver = case.get("waiver")
        css = "WAIVED" if waiver else case["verdict"].replace(" ", "-")
        waived = (f"<br><i>Waived by {esc(waiver['by'])}: {esc(waiver['reason'])}</i>" if waiver else "")
        rows.append(f"<tr><td class='{css}'><b>{esc(shown_verdict(case))}</b></td>"
                    f"<td><b>{esc(case['name'])}</b><br><small>{esc(case['description'])}</small></td>"
                    f"<td>{esc(case['where'])}</td><td>{esc(case['reason'])}{waived}{details}</td>"
                    f"<td>{foms}</td></tr>")
    failing = [c for c in summary["cases"] if c["verdict"] != PASS and not c.get("waiver")]
    failures = ""
    if failing:
        items = "".join(f"<li><b>{esc(shown_verdict(c))}</b> {esc(c['name'])} [{esc(c['where'])}]: "
                        f"{esc(c['reason'])}</li>" for c in failing)
        failures = (f"<h2>Not accepted</h2><p>A check that measured nothing is not accepted until it is "
                    f"measured or the operator waives it (<code>yeebench acceptance report --waivers FILE</code>)."
                    f"</p><ul class='failures'>{items}</ul>")
    waivers = summary.get("waivers")
    waiver_part = ""
    if waivers:
        items = "".join(f"<li>{esc(w['check'])}: {esc(w['reason'])}</li>" for w in waivers["waivers"])
        items += "".join(f"<li><b>{esc(n)}</b></li>" for n in summary.get("waiver_notes", []))
        waiver_part = (f"<h2>Operator waivers</h2><p>From {esc(waivers['path'])}, signed by "
                       f"{esc(waivers['waived_by'])}:</p><ul>{items}</ul>")
    body = "\n".join(rows) or "<tr><td colspan='5'>no acceptance checks in the report(s)</td></tr>"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title><style>{CSS}</style></head>
<body>
<h1>{esc(title)}</h1>
<div class="meta">System(s): {esc(', '.join(summary['systems']) or '-')} &middot; run on {esc(', '.join(hosts) or '-')}
 &middot; page made {when} by yeebench acceptance report</div>
<div class="headline {esc(css_class)}">{esc(head)}: {esc(headline_counts(summary))}</div>
<p>Every acceptance check with its verdict (PASS, FAIL or NOT MEASURED) and reason; a check that could
not measure says why. Figures of merit are as measured in this run.{
f' All figures with their provenance (versions, topology, bindings): <a href="{esc(results_link)}">{esc(results_link)}</a>.'
if results_link else ''}</p>
{failures}
{waiver_part}
<h2>All checks</h2>
<table><colgroup><col class="v"><col class="c"><col class="w"><col><col class="f"></colgroup>
<tr><th>Verdict</th><th>Check</th><th>Where</th><th>Reason</th><th>Figures of merit</th></tr>
{body}
</table>
<h2>Sign-off</h2>
<table class="sign" style="table-layout:auto"><tr><th>Role</th><th>Name</th><th>Signature</th><th>Date</th></tr>
<tr><td>Site</td><td></td><td></td><td></td></tr><tr><td>Vendor</td><td></td><td></td><td></td></tr></table>
</body></html>
"""
