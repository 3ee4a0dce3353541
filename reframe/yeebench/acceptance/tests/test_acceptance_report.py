"""Sign-off summary from a recorded ReFrame report (trimmed from a run on the local system)."""
import json
import os

import pytest

from yeebench.acceptance import report, waivers

DATA = os.path.join(os.path.dirname(__file__), "data")
REPORT = os.path.join(DATA, "reframe_report_acceptance.json")


def test_collect_reads_verdicts_reasons_and_foms():
    summary = report.collect([REPORT])
    cases = {c["name"]: c for c in summary["cases"]}
    assert summary["systems"] == ["local:default"]
    assert cases["AcceptanceGPU %kernel=nbody"]["verdict"] == "NOT MEASURED"
    assert "nvidia-smi" in cases["AcceptanceGPU %kernel=nbody"]["reason"]
    assert cases["AcceptanceNetwork"]["verdict"] == "FAIL"
    foms = {f["metric"]: f for f in cases["AcceptanceStorage %tool=dd"]["foms"]}
    assert foms["write_bandwidth"]["value"] == 0.147 and foms["write_bandwidth"]["direction"] == "higher"
    assert report.overall(summary) == "NOT ACCEPTABLE"


def _summary(cases):
    return {"cases": cases, "systems": [], "sessions": []}


def test_rerun_keeps_last_result_and_overall_rules():
    summary = report.collect([REPORT, REPORT])
    assert len(summary["cases"]) == 5
    passing = _summary([c for c in summary["cases"] if c["verdict"] == "PASS"])
    assert report.overall(passing) == "ACCEPTABLE"
    unmeasured = _summary([c for c in summary["cases"] if c["verdict"] == "NOT MEASURED"])
    assert report.overall(unmeasured) == "NOT ACCEPTABLE"
    assert report.overall(_summary([])) == "NO ACCEPTANCE CHECKS"


def test_not_measured_is_not_accepted_unless_waived(tmp_path):
    summary = report.collect([REPORT])
    summary["cases"] = [c for c in summary["cases"] if c["verdict"] != "FAIL"]
    assert report.overall(summary) == "NOT ACCEPTABLE"  # the GPU check measured nothing
    assert report.counts(summary) == {"PASS": 3, "FAIL": 0, "NOT MEASURED": 1, "WAIVED": 0}
    path = tmp_path / "waivers.yaml"
    path.write_text('waived_by: "A. Operator"\nwaivers:\n  - check: "AcceptanceGPU*"\n'
                    '    reason: "no GPUs in this system"\n  - check: AcceptanceNUMACosts\n'
                    '    reason: "one NUMA node"\n')
    waivers.apply(summary, waivers.load(str(path)))
    assert report.overall(summary) == "ACCEPTABLE"
    assert report.counts(summary)["WAIVED"] == 1
    assert summary["waiver_notes"] == ["waiver 'AcceptanceNUMACosts' matches no check that was not measured"]
    page = report.as_html(summary)
    assert "NOT MEASURED (waived)" in page and "A. Operator" in page and "no GPUs in this system" in page
    assert "1 not measured but waived" in report.as_text(summary)


def test_a_fail_cannot_be_waived(tmp_path):
    summary = report.collect([REPORT])
    path = tmp_path / "w.yaml"
    path.write_text("waived_by: me\nwaivers:\n  - {check: AcceptanceNetwork, reason: flaky}\n")
    waivers.apply(summary, waivers.load(str(path)))
    assert report.overall(summary) == "NOT ACCEPTABLE"
    assert "a FAIL cannot be waived" in summary["waiver_notes"][0]


@pytest.mark.parametrize("text, message", [
    ("waivers: []\n", "waived_by"),
    ("waived_by: me\n", "non-empty list"),
    ("waived_by: me\nwaivers:\n  - {check: X}\n", "waiver 1 (X) has no reason"),
    ("waived_by: me\nwaivers: [1]\n", "not a mapping"),
    ("[unclosed\n", "not valid YAML"),
])
def test_bad_waiver_files_name_the_problem(tmp_path, text, message):
    path = tmp_path / "w.yaml"
    path.write_text(text)
    with pytest.raises(waivers.WaiverError, match=message.replace("(", r"\(").replace(")", r"\)")):
        waivers.load(str(path))


def test_check_that_ran_but_measured_nothing_is_not_measured(tmp_path):
    with open(REPORT) as f:
        doc = json.load(f)
    topo = next(c for c in doc["runs"][0]["testcases"] if c["name"] == "AcceptanceTopology")
    topo["acceptance_verdict"] = "NOT MEASURED"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    case = next(c for c in report.collect([str(path)])["cases"] if c["name"] == "AcceptanceTopology")
    assert case["result"] == "pass" and case["verdict"] == "NOT MEASURED"


def test_html_escapes_text():
    summary = report.collect([REPORT])
    summary["cases"][0]["reason"] = "<script>alert(1)</script>"
    page = report.as_html(summary)
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_unexplained_skip_is_not_measured_with_a_reason(tmp_path):
    with open(REPORT) as f:
        doc = json.load(f)
    gpu = next(c for c in doc["runs"][0]["testcases"] if c["result"] == "skip")
    del gpu["acceptance_reason"]  # e.g. ReFrame found no idle nodes for a flexible job
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    summary = report.collect([str(path)])
    skipped = next(c for c in summary["cases"] if c["result"] == "skip")
    assert skipped["verdict"] == "NOT MEASURED" and "without a recorded reason" in skipped["reason"]
    assert "class='NOT-MEASURED'" in report.as_html(summary)


def test_availability_row_from_the_log_or_not_measured():
    absent = report.availability_case(None)
    assert absent["verdict"] == "NOT MEASURED" and "--availability" in absent["reason"]
    passing = report.availability_case(os.path.join(DATA, "availability_30days_pass.csv"))
    assert passing["verdict"] == "PASS" and passing["foms"][0]["value"] == pytest.approx(99.444, abs=1e-3)
    failing = report.availability_case(os.path.join(DATA, "availability_30days_fail.csv"))
    assert failing["verdict"] == "FAIL"
    missing = report.availability_case(os.path.join(DATA, "availability_node_missing_10_days.csv"))
    assert missing["verdict"] == "NOT MEASURED" and missing["reason"].startswith("INSUFFICIENT DATA")
    broken = report.availability_case("/nonexistent.csv")
    assert broken["verdict"] == "NOT MEASURED" and "unusable" in broken["reason"]
