"""The acceptance sign-off page: every acceptance check with its verdict, reason and FOMs.

Input: ReFrame JSON run report(s) (read and validated by the results tooling's
report reader).  Output: one self-contained HTML page (inline CSS, no scripts,
no external files), or text / JSON for terminals and scripts.
"""
import datetime as dt
import html
import json

from yeebench.results.report_reader import check_name, iter_testcases, load_report, perf_figures

#: A skip the acceptance checks did not explain (ReFrame's own, e.g. no idle nodes for a
#: flexible job, or the check library's): not acceptable until someone says why.
UNEXPLAINED_SKIP = ("skipped by ReFrame or the check library without a recorded reason "
                    "(see ReFrame's output, e.g. no idle nodes for a job spanning the partition)")
VERDICTS = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP", "abort": "ABORTED", "xfail": "FAIL (expected)"}
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
            reason = case.get("acceptance_reason") or ""
            fail_reason = (case.get("fail_reason") or "").strip().splitlines()
            fail_reason = fail_reason[0].rstrip(":") if fail_reason else ""
            unexplained = result == "skip" and not reason
            if not reason:
                reason = fail_reason or (UNEXPLAINED_SKIP if result == "skip" else "no reason recorded")
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
                          "verdict": "SKIP?" if unexplained else VERDICTS.get(result, result.upper()),
                          "reason": reason,
                          "details": list(case.get("acceptance_details") or []),
                          "description": case.get("descr") or "", "foms": foms}
    ordered = sorted(cases.values(), key=lambda c: (c["check"], c["name"], c["where"]))
    return {"cases": ordered, "systems": sorted(systems), "sessions": sessions}


def counts(summary):
    """Verdict tallies; unexplained skips ('SKIP?') and aborts count as 'other'."""
    out = {"PASS": 0, "FAIL": 0, "SKIP": 0, "other": 0}
    for case in summary["cases"]:
        key = case["verdict"] if case["verdict"] in out else "other"
        out[key] += 1
    return out


def overall(summary):
    """The page's headline verdict: ACCEPTABLE only when nothing failed and something passed."""
    c = counts(summary)
    if not summary["cases"]:
        return "NO ACCEPTANCE CHECKS"
    if c["FAIL"] or any(case["verdict"] not in ("PASS", "SKIP", "SKIP?") for case in summary["cases"]):
        return "NOT ACCEPTABLE"
    if c["other"]:
        return "INCOMPLETE"  # nothing failed, but something did not run and nobody said why
    return "ACCEPTABLE" if c["PASS"] else "NOTHING RAN"


def _fmt(value):
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def as_text(summary):
    c = counts(summary)
    lines = [f"acceptance: {overall(summary)} ({c['PASS']} passed, {c['FAIL']} failed, "
             f"{c['SKIP']} skipped, {c['other']} other) on {', '.join(summary['systems']) or '-'}"]
    for case in summary["cases"]:
        foms = ", ".join(f"{f['metric']} {_fmt(f['value'])} {f['unit']}".rstrip() for f in case["foms"])
        lines.append(f"{case['verdict']:<5} {case['name']} [{case['where']}]: {case['reason']}"
                     + (f" | {foms}" if foms else ""))
    return "\n".join(lines) + "\n"


def as_json(summary):
    return json.dumps({"overall": overall(summary), "counts": counts(summary), **{
        k: summary[k] for k in ("systems", "cases")}}, indent=2, sort_keys=True) + "\n"


CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:72em;color:#222}
h1{font-size:1.5em;margin-bottom:.2em} .meta{color:#555;font-size:.9em}
.headline{font-size:1.3em;font-weight:bold;padding:.4em .8em;display:inline-block;border-radius:4px;margin:.6em 0}
table{border-collapse:collapse;width:100%;font-size:.9em;table-layout:fixed}
th,td{border:1px solid #ccc;padding:.35em .5em;vertical-align:top;text-align:left;overflow-wrap:anywhere}
col.v{width:6em} col.c{width:17em} col.w{width:12em} col.f{width:16em}
th{background:#f2f2f2} .PASS{background:#dff0d8} .FAIL,.ABORTED,.NOT{background:#f2dede} .SKIP{background:#fcf8e3}
.ACCEPTABLE{background:#dff0d8} .INCOMPLETE{background:#fcf8e3} details{margin-top:.3em} details li{font-family:monospace;font-size:.85em}
.sign td{height:2.5em} ul.failures li{margin:.2em 0}
"""


def write_results_page(report_paths, output):
    """The results tooling's report (all figures, provenance) of the same run(s), for the link."""
    import tempfile
    from pathlib import Path

    from yeebench.results import ingest, report as results_report, sources
    with tempfile.TemporaryDirectory(prefix="yeebench-acceptance-") as tmp:
        runs = [sources.load_source(str(ingest.ingest(p, results_dir=tmp))) for p in report_paths]
        return results_report.write_report(runs, Path(output))


def as_html(summary, title="Acceptance report", results_link=None):
    esc = html.escape
    c = counts(summary)
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
        rows.append(f"<tr><td class='{esc(case['verdict'].split()[0].rstrip('?'))}'><b>{esc(case['verdict'])}</b></td>"
                    f"<td><b>{esc(case['name'])}</b><br><small>{esc(case['description'])}</small></td>"
                    f"<td>{esc(case['where'])}</td><td>{esc(case['reason'])}{details}</td>"
                    f"<td>{foms}</td></tr>")
    failing = [c for c in summary["cases"] if c["verdict"] not in ("PASS", "SKIP")]  # SKIP? too
    failures = ""
    if failing:
        items = "".join(f"<li><b>{esc(c['name'])}</b> [{esc(c['where'])}]: {esc(c['reason'])}</li>"
                        for c in failing)
        failures = f"<h2>Not passed</h2><ul class='failures'>{items}</ul>"
    body = "\n".join(rows) or "<tr><td colspan='5'>no acceptance checks in the report(s)</td></tr>"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title><style>{CSS}</style></head>
<body>
<h1>{esc(title)}</h1>
<div class="meta">System(s): {esc(', '.join(summary['systems']) or '-')} &middot; run on {esc(', '.join(hosts) or '-')}
 &middot; page made {when} by yeebench acceptance report</div>
<div class="headline {esc(css_class)}">{esc(head)}: {c['PASS']} passed, {c['FAIL']} failed, {c['SKIP']} skipped{
f", {c['other']} other" if c['other'] else ""}</div>
<p>Every acceptance check with its verdict and reason; skipped checks say what this system lacks.
Figures of merit are as measured in this run.{
f' All figures with their provenance (versions, topology, bindings): <a href="{esc(results_link)}">{esc(results_link)}</a>.'
if results_link else ''}</p>
{failures}
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
