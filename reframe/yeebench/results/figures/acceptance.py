"""Acceptance (paper 003): not a chart but the sign-off table, one line per acceptance check with
its verdict, the reason it gave and its figures; verdict words as the acceptance page's
(yeebench.acceptance.report)."""
from yeebench.acceptance.verdicts import FAIL, NOT_MEASURED, PASS, UNEXPLAINED_SKIP, VERDICTS
from yeebench import stats
from yeebench.results.figures import common
from yeebench.results.machine import grouped

PREFIX = "Acceptance"


def is_acceptance(check):
    return str(check or "").startswith(PREFIX)


def _figures(mine):
    shown = []
    for metric in dict.fromkeys(r["metric"] for r in mine):
        values = [r["value"] for r in mine if r["metric"] == metric]
        unit = next(r["unit"] for r in mine if r["metric"] == metric)
        shown.append(f"{metric} {common.fmt(stats.median(values), 4)} {unit}".strip())
    return "; ".join(shown)


def signoff(runs):
    """[{check, verdict, reason, figures, count, names}] for the acceptance cases in the runs' provenance,
    in name order; the cases of one check with one verdict and reason (a check run on every node) as one
    line, its figures the medians over them."""
    lines = []
    for run in runs:
        by_testcase = {}
        for row in run.rows:
            by_testcase.setdefault(row.get("testcase"), []).append(row)
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
                lines.append({"check": case.get("testcase") or case.get("check"), "name": case.get("check"),
                              "verdict": verdict,
                              "verdict_class": {PASS: "improved", FAIL: "regressed"}.get(verdict, "missing"),
                              "reason": reason, "rows": by_testcase.get(case.get("testcase"), [])})
    lines.sort(key=lambda line: line["check"])
    groups = {}
    for line in lines:
        groups.setdefault((line["name"], line["verdict"], line["reason"]), []).append(line)
    out = []
    for first, count, names in grouped(lines, key=lambda line: (line["name"], line["verdict"], line["reason"]),
                                       name=lambda line: line["check"]):
        rows = [r for line in groups[(first["name"], first["verdict"], first["reason"])] for r in line["rows"]]
        out.append({k: v for k, v in first.items() if k != "rows"} | {
            "count": count, "names": names, "check": first["check"] if count == 1 else first["name"],
            "figures": _figures(rows)})
    return out
