"""compare refuses what it cannot judge: unknown --ignore fields, other systems or suite versions."""
import json

import pytest

from results_testutil import run_cli, synthetic_run


def _one_line_error(proc):
    return proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_unknown_ignore_field_is_rejected(tmp_path):
    run = synthetic_run(tmp_path, "a", {"t": [1, 1, 1]}, params={"binding": "core"})
    proc = run_cli("results", "compare", "--baseline", run, "--candidate", run, "--ignore", "nonsense")
    assert _one_line_error(proc) and "unknown --ignore field 'nonsense'" in proc.stderr
    assert "parameters.binding" in proc.stderr
    ok = run_cli("results", "compare", "--baseline", run, "--candidate", run, "--ignore", "parameters.binding")
    assert ok.returncode == 0, ok.stderr


def test_different_systems_are_refused_and_nothing_is_written(tmp_path):
    a = synthetic_run(tmp_path, "a", {"t": [1, 1, 1]}, system="alpha")
    b = synthetic_run(tmp_path, "b", {"t": [1, 1, 1]}, system="beta")
    out = tmp_path / "cmp.json"
    proc = run_cli("results", "compare", "--baseline", a, "--candidate", b, "-o", out, "--format", "json")
    assert _one_line_error(proc) and "different systems" in proc.stderr and not out.exists()
    on_purpose = run_cli("results", "compare", "--baseline", a, "--candidate", b, "--ignore", "system")
    assert on_purpose.returncode == 0, on_purpose.stderr
    html = tmp_path / "r.html"
    proc = run_cli("results", "report", a, b, "-o", html)
    assert _one_line_error(proc) and "different systems" in proc.stderr and not html.exists()


def test_different_suite_versions_are_refused(tmp_path):
    a = synthetic_run(tmp_path, "a", {"t": [1, 1, 1]})
    b = synthetic_run(tmp_path, "b", {"t": [1, 1, 1]})
    for run, version in ((a, "0.1.0"), (b, "0.2.0")):
        prov = json.loads((run / "provenance.json").read_text())
        prov["suite_version"] = version
        (run / "provenance.json").write_text(json.dumps(prov))
    proc = run_cli("results", "compare", "--baseline", a, "--candidate", b)
    assert _one_line_error(proc) and "different yeebench suite versions" in proc.stderr
    proc = run_cli("results", "report", a, b, "-o", tmp_path / "r.html")
    assert _one_line_error(proc) and not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("command", ["compare", "report"])
def test_corrupt_rows_write_nothing(tmp_path, command):
    run = synthetic_run(tmp_path, "a", {"t": [1, 1, 1]})
    (run / "rows.jsonl").write_text('{"schema": "yeebench-row"}\n')
    out = tmp_path / "out.file"
    argv = (["compare", "--baseline", run, "--candidate", run] if command == "compare" else ["report", run])
    proc = run_cli("results", *argv, "-o", out)
    assert _one_line_error(proc) and "schema violation" in proc.stderr and not out.exists()


def test_unknown_noise_is_shown_as_unknown_not_zero(tmp_path):
    a = synthetic_run(tmp_path, "a", {"t": [1.0]})
    b = synthetic_run(tmp_path, "b", {"t": [1.5]})
    proc = run_cli("results", "compare", "--baseline", a, "--candidate", b)
    assert proc.returncode == 0, proc.stdout  # insufficient data is not a failure
    assert "insufficient data" in proc.stdout and "unknown" in proc.stdout and "±0.0%" not in proc.stdout
