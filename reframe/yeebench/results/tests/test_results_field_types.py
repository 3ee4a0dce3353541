"""A report's fields of unexpected types, huge integers and lone surrogates: ingest and every report
work or refuse on one line (exit 2), never a traceback; what they write and print is valid text."""
import json
import os
from pathlib import Path

import pytest

from results_testutil import REPORT_A
from test_results_hostile_inputs import one_line_error, run_in_process

ACCEPTANCE_REPORT = (Path(__file__).resolve().parents[2] / "acceptance" / "tests" / "data"
                     / "reframe_report_acceptance.json")
LONE = "\ud800"

# field -> values of a type the tools do not expect there
ODD_VALUES = {
    "display_name": [5, ["a"], {"a": 1}, True, f"Check{LONE} %x=1"],
    "name": [5, ["a"]],
    "descr": [5, ["x"], {"x": 1}, f"d{LONE}"],
    "tags": ["acceptance", 5, [5, "acceptance"], {"acceptance": 1}],
    "perf_directions": [["x"], 5, {"a": 5}, "higher"],
    "observations": [["x"], 5, "text", {"skip_reason": 5}, {"skip_reason": ["x"]}],
    "acceptance_reason": [5, ["x"]],
    "acceptance_details": [5, [5, None, "ok"], "text"],
    "acceptance_verdict": [["x"], 5],
    "fail_reason": [5, ["x"]],
    "result": [5, ["pass"]],
    "system": [["x"], 5, f"s{LONE}"],
    "unit": [5, ["x"], {"u": 1}, None, f"u{LONE}"],
    "value": [10 ** 400, -(10 ** 400), 2 ** 1024],
}


def _mutated(tmp_path, source, field, value):
    report = json.loads(Path(source).read_text())
    for run in report["runs"]:
        for case in run["testcases"]:
            if field in ("unit", "value"):
                for entry in (case.get("perfvalues") or {}).values():
                    if field == "unit":
                        entry[4] = value
                    elif entry[0] is not None:
                        entry[0] = value
            else:
                case[field] = value
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))       # ensure_ascii: a lone surrogate as its escape
    return path


CASES = [(field, value) for field, values in ODD_VALUES.items() for value in values]


@pytest.mark.parametrize("field, value", CASES, ids=[f"{f}-{i}" for f, vs in ODD_VALUES.items() for i in range(len(vs))])
def test_odd_field_types_through_ingest_and_the_reports(tmp_path, capsys, field, value):
    results, out = tmp_path / "results", tmp_path / "out"
    report = _mutated(tmp_path, REPORT_A, field, value)
    ingest = run_in_process(capsys, "results", "ingest", report, "--results-dir", results)
    assert ingest.returncode == 0 or one_line_error(ingest), ingest.stderr
    if ingest.returncode == 0:
        run = ingest.stdout.strip().splitlines()[-1]
        commands = [("results", "compare", "--baseline", run, "--candidate", run, "--no-history")]
        if isinstance(value, str) or field in ("unit", "display_name"):      # what the page shows
            commands.append(("results", "report", run, "-o", out / "r.html"))
        for argv in commands:
            proc = run_in_process(capsys, *argv)
            assert proc.returncode in (0, 1) or one_line_error(proc), (argv, proc.stderr)
    acceptance = _mutated(tmp_path, ACCEPTANCE_REPORT, field, value)
    for fmt in ("text", "json", "html"):
        proc = run_in_process(capsys, "acceptance", "report", acceptance, "--format", fmt)
        assert proc.returncode in (0, 1) or one_line_error(proc), (fmt, proc.stderr)
        proc.stdout.encode("utf-8")               # printable: no lone surrogate reached the page
        if fmt == "json" and proc.returncode == 0:
            json.loads(proc.stdout)


def test_a_huge_figure_is_no_figure_and_a_number_of_5000_digits_is_one_line(tmp_path, capsys):
    report = _mutated(tmp_path, ACCEPTANCE_REPORT, "value", 10 ** 400)
    proc = run_in_process(capsys, "acceptance", "report", report, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    values = [f["value"] for c in json.loads(proc.stdout)["cases"] for f in c["foms"]]
    assert values == [] or all(abs(v) < 1e308 for v in values)
    text = Path(REPORT_A).read_text().replace('"session_info": {', '"session_info": {"big": ' + "9" * 5000 + ", ", 1)
    (tmp_path / "big.json").write_text(text)
    for argv in (("results", "ingest", tmp_path / "big.json", "--results-dir", tmp_path / "results"),
                 ("acceptance", "report", tmp_path / "big.json")):
        proc = run_in_process(capsys, *argv)
        assert one_line_error(proc) and "number too long" in proc.stderr, proc.stderr


def test_a_lone_surrogate_in_a_name_is_replaced_in_what_is_recorded(tmp_path, capsys):
    report = _mutated(tmp_path, REPORT_A, "system", f"site{LONE}")
    ingest = run_in_process(capsys, "results", "ingest", report, "--results-dir", tmp_path / "results")
    assert ingest.returncode == 0, ingest.stderr
    rows = (Path(ingest.stdout.strip().splitlines()[-1]) / "rows.jsonl").read_text()
    assert json.loads(rows.splitlines()[0])["system"] == "site\ufffd"


def test_a_line_break_in_a_check_name_cannot_forge_a_plausibility_line(tmp_path, capsys):
    from yeebench.results import cli, store
    forged = "Real\ningest: plausibility warning: Forged {} x: all is well [none]"
    prov = {"plausibility": {"warnings": [
        {"check": forged, "parameters": {"p": "a\rb"}, "metric": "bw\u2028", "message": "too fast\n", "rule": "peak"}]}}
    run = tmp_path / "run"
    run.mkdir()
    (run / store.PROVENANCE_FILE).write_text(json.dumps(prov))
    cli._print_plausibility(run)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ingest: plausibility warning: Real\\ningest:"), lines


def test_a_lone_surrogate_in_a_recorded_row_is_refused_on_one_line(tmp_path):
    from results_testutil import run_cli, synthetic_run
    run = synthetic_run(tmp_path, "r1", {"time_s": [1.0, 1.1]}, params={"label": f"x{LONE}y"})
    other = synthetic_run(tmp_path, "r2", {"time_s": [1.0, 1.1]})
    for argv in (("compare", "--baseline", run, "--candidate", run, "--no-history"),
                 ("compare", "--baseline", other, "--candidate", other, "--results-dir", tmp_path / "results")):
        proc = run_cli("results", *argv)
        assert "Traceback" not in proc.stderr, proc.stderr
        if run in argv:
            assert one_line_error(proc) and "not valid Unicode" in proc.stderr, proc.stderr
        else:           # the history leaves the run out, and says so
            assert proc.returncode == 0 and "left out of the history" in proc.stderr, proc.stderr


def test_a_file_name_that_is_not_utf8_is_printed_as_its_bytes(tmp_path):
    import subprocess
    from results_testutil import YEEBENCH, synthetic_run
    run = synthetic_run(tmp_path, "r1", {"time_s": [1.0, 1.1]})
    folder = os.fsencode(tmp_path) + b"/\xffbaselines"
    proc = subprocess.run([os.fsencode(a) for a in YEEBENCH] + [b"results", b"baseline", os.fsencode(run),
                                                                b"--baselines-dir", folder],
                          capture_output=True, timeout=300, cwd=tmp_path,
                          env=dict(os.environ, PYTHONIOENCODING="utf-8:strict"))   # as in a UTF-8 locale
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.strip() == folder + b"/synth.json" and os.path.isfile(folder + b"/synth.json")
