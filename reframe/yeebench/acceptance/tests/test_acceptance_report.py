"""Sign-off summary from a recorded ReFrame report (trimmed from a run on the local system)."""
import os

from yeebench.acceptance import report

REPORT = os.path.join(os.path.dirname(__file__), "data", "reframe_report_acceptance.json")


def test_collect_reads_verdicts_reasons_and_foms():
    summary = report.collect([REPORT])
    cases = {c["name"]: c for c in summary["cases"]}
    assert summary["systems"] == ["local:default"]
    assert cases["AcceptanceGPU %kernel=nbody"]["verdict"] == "SKIP"
    assert "nvidia-smi" in cases["AcceptanceGPU %kernel=nbody"]["reason"]
    assert cases["AcceptanceNetwork"]["verdict"] == "FAIL"
    foms = {f["metric"]: f for f in cases["AcceptanceStorage %tool=dd"]["foms"]}
    assert foms["write_bandwidth"]["value"] == 0.147 and foms["write_bandwidth"]["direction"] == "higher"
    assert report.overall(summary) == "NOT ACCEPTABLE"


def test_rerun_keeps_last_result_and_overall_rules():
    summary = report.collect([REPORT, REPORT])
    assert len(summary["cases"]) == 5
    passing = {"cases": [c for c in summary["cases"] if c["verdict"] != "FAIL"], "systems": [], "sessions": []}
    assert report.overall(passing) == "ACCEPTABLE"
    skipped = {"cases": [c for c in summary["cases"] if c["verdict"] == "SKIP"], "systems": [], "sessions": []}
    assert report.overall(skipped) == "NOTHING RAN"
    assert report.overall({"cases": [], "systems": [], "sessions": []}) == "NO ACCEPTANCE CHECKS"


def test_html_escapes_text():
    summary = report.collect([REPORT])
    summary["cases"][0]["reason"] = "<script>alert(1)</script>"
    page = report.as_html(summary)
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_unexplained_skip_makes_the_run_incomplete(tmp_path):
    import json
    with open(REPORT) as f:
        doc = json.load(f)
    cases = doc["runs"][0]["testcases"]
    doc["runs"][0]["testcases"] = [c for c in cases if c["result"] != "fail"]
    gpu = next(c for c in doc["runs"][0]["testcases"] if c["result"] == "skip")
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    assert report.overall(report.collect([str(path)])) == "ACCEPTABLE"
    del gpu["acceptance_reason"]  # e.g. ReFrame found no idle nodes for a flexible job
    path.write_text(json.dumps(doc))
    summary = report.collect([str(path)])
    skipped = next(c for c in summary["cases"] if c["result"] == "skip")
    assert skipped["verdict"] == "SKIP?" and "without a recorded reason" in skipped["reason"]
    assert report.overall(summary) == "INCOMPLETE"
    assert "class='SKIP'" in report.as_html(summary)
