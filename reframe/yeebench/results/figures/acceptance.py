"""Acceptance (paper 003): not a chart but the sign-off table, one line per acceptance check with
its verdict, the reason it gave and its figures; verdict words as the acceptance page's
(yeebench.acceptance.report)."""
from yeebench.acceptance.verdicts import FAIL, NOT_MEASURED, PASS, UNEXPLAINED_SKIP, VERDICTS
from yeebench import stats
from yeebench.results.figures import common

PREFIX = "Acceptance"


def is_acceptance(check):
    return str(check or "").startswith(PREFIX)


def _figures(rows, testcase):
    mine = [r for r in rows if r.get("testcase") == testcase]
    shown = []
    for metric in dict.fromkeys(r["metric"] for r in mine):
        values = [r["value"] for r in mine if r["metric"] == metric]
        unit = next(r["unit"] for r in mine if r["metric"] == metric)
        shown.append(f"{metric} {common.fmt(stats.median(values), 4)} {unit}".strip())
    return "; ".join(shown)


def signoff(runs):
    """[{check, verdict, reason, figures}] for the acceptance cases in the runs' provenance, in name order."""
    lines = []
    for run in runs:
        for prov in run.provenances:
            for case in prov.get("jobs", {}).get("cases", []):
                if not is_acceptance(case.get("check")):
                    continue
                result = case.get("result") or "unknown"
                verdict = VERDICTS.get(result, NOT_MEASURED)
                if verdict == PASS and case.get("acceptance_verdict") == NOT_MEASURED:
                    verdict = NOT_MEASURED  # it ran, but had nothing it could honestly measure
                reason = case.get("skip_reason") or (case.get("fail_reason") or "").strip().split("\n")[0]
                if not reason:
                    reason = {"skip": UNEXPLAINED_SKIP}.get(result, "-" if verdict == PASS else "no reason recorded")
                lines.append({"check": case.get("testcase") or case.get("check"), "verdict": verdict,
                              "verdict_class": {PASS: "improved", FAIL: "regressed"}.get(verdict, "missing"),
                              "reason": reason, "figures": _figures(run.rows, case.get("testcase"))})
    return sorted(lines, key=lambda line: line["check"])
