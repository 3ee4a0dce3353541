"""Reports and settings are data: a generated corpus of hostile reports through ingest, compare,
baseline, report and `acceptance report`; killed ingests; concurrent compares on a missing or
damaged history cache. Every command either works or says what is wrong on one line (exit 2):
no traceback, no file outside the results tree, no command run, nothing half-written recorded."""
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from results_testutil import REPORT_A, REPORT_B, YEEBENCH, run_cli, synthetic_run

from yeebench.results import history, store

HOSTILE_NAMES = ["../../../../{tmp}/escape", "{tmp}/abs/escape", "a\u0000b", "..", ".", "",
                 "$(touch {tmp}/PWNED)", "`touch {tmp}/PWNED`", "x;touch {tmp}/PWNED", "<script>alert(1)</script>",
                 "\"'&<>|*?~ \t\n", "-rf", "a/../../b", "\u202e\u00e9\u4e2d", "x" * 5000]


def one_line_error(proc):
    return proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def write_report(path, mutate, source=REPORT_A):
    report = json.loads(Path(source).read_text())
    mutate(report)
    path.write_text(json.dumps(report))
    return path


def cases(report):
    return [c for run in report["runs"] for c in run["testcases"]]


def files_under(root):
    return {p for p in Path(root).rglob("*")}


def outside_writes(tmp_path, before, allowed):
    """Files that appeared under tmp_path outside the allowed folders."""
    return [p for p in files_under(tmp_path) - before
            if not any(a == p or a in p.parents for a in allowed)]


# -- 1. nothing from a report is executed ----------------------------------------------------------
def _trap_repository(where, marker):
    """A git repository whose fsmonitor command (run by `git status`) and hooks leave a marker."""
    where.mkdir()
    env = dict(os.environ, GIT_AUTHOR_NAME="x", GIT_AUTHOR_EMAIL="x@x", GIT_COMMITTER_NAME="x",
               GIT_COMMITTER_EMAIL="x@x")
    (where / "check.py").write_text("x = 1\n")
    for argv in (["git", "init", "-q"], ["git", "add", "check.py"], ["git", "commit", "-qm", "x"],
                 ["git", "config", "core.fsmonitor", f"id > {marker}; false"]):
        subprocess.run(argv, cwd=where, check=True, env=env)
    for hook in ("post-checkout", "post-index-change", "pre-commit", "fsmonitor-watchman"):
        path = where / ".git" / "hooks" / hook
        path.write_text(f"#!/bin/sh\nid > {marker}\n")
        path.chmod(0o755)
    (where / "check.py").write_text("x = 2\n")   # dirty: status has work to do
    assert not marker.exists()
    return where / "check.py"


def test_a_repository_named_by_a_report_runs_nothing(tmp_path):
    marker = tmp_path / "RAN"
    filename = _trap_repository(tmp_path / "trap", marker)

    def point_at_trap(report):
        for case in cases(report):
            case["filename"] = str(filename)
    report = write_report(tmp_path / "report.json", point_at_trap)
    proc = run_cli("results", "ingest", report, "--results-dir", tmp_path / "results")
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), f"ingest ran the report's repository's command: {marker.read_text()}"
    prov = json.loads(next((tmp_path / "results").rglob("provenance.json")).read_text())
    assert prov["git"]["source"] != "ingest-host" or str(tmp_path) not in json.dumps(prov["git"])
    page = tmp_path / "page"
    run_cli("acceptance", "report", report, "--format", "html", "-o", tmp_path / "a.html",
            "--results-page", page / "results.html")
    assert not marker.exists(), "acceptance report --results-page ran the report's repository's command"


# -- 2. no path outside the results tree -----------------------------------------------------------
@pytest.mark.parametrize("system", ["../../../../{tmp}/escape", "{tmp}/abs/escape", "a\u0000b", "..", "x/../../y"])
def test_baseline_never_writes_outside_its_directory(tmp_path, system):
    system = system.format(tmp=tmp_path)

    def rename(report):
        for case in cases(report):
            case["system"] = system
    report = write_report(tmp_path / "report.json", rename)
    results = tmp_path / "results"
    proc = run_cli("results", "ingest", report, "--results-dir", results)
    assert proc.returncode == 0, proc.stderr
    before = files_under(tmp_path)
    baselines = tmp_path / "results" / "baselines"
    proc = run_cli("results", "baseline", proc.stdout.strip(), "--baselines-dir", baselines)
    assert one_line_error(proc) and "system name" in proc.stderr, proc.stderr
    assert not outside_writes(tmp_path, before, [baselines]), outside_writes(tmp_path, before, [baselines])
    named = run_cli("results", "baseline", str(next(results.glob("*/*/"))), "--baselines-dir", baselines,
                    "--system", "site-a")
    assert named.returncode == 0 and (baselines / "site-a.json").is_file(), named.stderr


def run_in_process(capsys, *argv):
    """The CLI in this process (the corpus is large: no interpreter start per command)."""
    from yeebench.cli import main
    capsys.readouterr()
    try:
        code = main([str(a) for a in argv])
    except SystemExit as done:        # argparse's own usage errors
        code = done.code
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(argv, code, captured.out, captured.err)


@pytest.mark.parametrize("template", HOSTILE_NAMES)
def test_corpus_of_hostile_names_through_every_command(tmp_path, capsys, template):
    """A hostile name in every name field of every case (system, partition, environ, check, test
    case): each command works or refuses on one line, writes nothing outside the folders it was
    given, runs nothing, and escapes HTML."""
    results, out = tmp_path / "results", tmp_path / "out"
    name = template.format(tmp=tmp_path)

    def rename(report):
        for case in cases(report):
            for field in ("system", "partition", "environ", "unique_name"):
                case[field] = name
            case["display_name"] = f"{name} %transport=shm"
    report = write_report(tmp_path / "report.json", rename)
    before = files_under(tmp_path)
    ingest = run_in_process(capsys, "results", "ingest", report, "--results-dir", results)
    assert ingest.returncode in (0, 2) and "Traceback" not in ingest.stderr, ingest.stderr
    if ingest.returncode:
        assert one_line_error(ingest), ingest.stderr
        return
    run = ingest.stdout.strip().splitlines()[-1]
    assert Path(run).resolve().parent.parent == results.resolve(), run
    commands = [
        ("results", "compare", "--baseline", run, "--candidate", run, "--results-dir", results,
         "-o", out / "cmp.json", "--format", "json"),
        ("results", "baseline", run, "--baselines-dir", out / "baselines"),
        ("results", "report", run, "-o", out / "report.html"),
        ("acceptance", "report", report, "--format", "html", "-o", out / "acceptance.html"),
    ]
    for argv in commands:
        proc = run_in_process(capsys, *argv)
        assert proc.returncode in (0, 1, 2), (argv, proc.stderr)
        if proc.returncode == 2:
            assert one_line_error(proc), (argv, proc.stderr)
    assert not outside_writes(tmp_path, before, [results, out]), outside_writes(tmp_path, before, [results, out])
    assert not list(tmp_path.rglob("PWNED*"))
    for page in out.glob("*.html"):
        assert "<script>alert(1)</script>" not in page.read_text(errors="replace"), page


# -- 6. one line, never a traceback --------------------------------------------------------------
@pytest.mark.parametrize("case", ["deep-nesting", "session-info-list", "runs-dict", "testcase-list",
                                  "start-1e20", "start-nan", "start-text", "end-1e300", "job-time-1e20"])
def test_malformed_reports_get_one_line_and_exit_2(tmp_path, case):
    path = tmp_path / "report.json"
    if case == "deep-nesting":
        text = Path(REPORT_A).read_text()
        path.write_text(text.replace('"session_info": {', '"deep": ' + "[" * 100000 + "]" * 100000
                                     + ', "session_info": {', 1))
    else:
        def mutate(report):
            info = report["session_info"]
            if case == "session-info-list":
                report["session_info"] = [info]
            elif case == "runs-dict":
                report["runs"] = {"0": report["runs"][0]}
            elif case == "testcase-list":
                report["runs"][0]["testcases"][0] = [1, 2]
            elif case == "start-1e20":
                info["time_start_unix"] = 1e20
            elif case == "start-nan":
                info["time_start_unix"] = float("nan")
            elif case == "start-text":
                info["time_start_unix"] = "yesterday"
            elif case == "end-1e300":
                info["time_end_unix"] = 1e300
            elif case == "job-time-1e20":
                for c in cases(report):
                    c["job_completion_time_unix"] = 1e20
        write_report(path, mutate)
    proc = run_cli("results", "ingest", path, "--results-dir", tmp_path / "results")
    assert one_line_error(proc), proc.stderr[-2000:]
    assert not list((tmp_path / "results").rglob("rows.jsonl")) if (tmp_path / "results").exists() else True


@pytest.mark.parametrize("value", [1e308, float("nan"), float("inf"), 5e-324])
def test_huge_tiny_and_nan_figures_never_reach_json_as_nan(tmp_path, capsys, value):
    def extreme(report):
        for case in cases(report):
            for entry in (case.get("perfvalues") or {}).values():
                if entry[0] is not None:
                    entry[0] = value
    report = write_report(tmp_path / "report.json", extreme)
    ingest = run_in_process(capsys, "results", "ingest", report, "--results-dir", tmp_path / "results")
    assert ingest.returncode in (0, 2) and (ingest.returncode == 0 or one_line_error(ingest)), ingest.stderr
    if ingest.returncode:
        return
    run = ingest.stdout.strip().splitlines()[-1]
    out = tmp_path / "cmp.json"
    proc = run_in_process(capsys, "results", "compare", "--baseline", run, "--candidate", run, "--no-history",
                          "--format", "json", "-o", out)
    assert proc.returncode in (0, 1) or one_line_error(proc), proc.stderr
    if out.exists():
        text = out.read_text()
        assert "NaN" not in text and "Infinity" not in text
        json.loads(text)
    report_page = run_in_process(capsys, "results", "report", run, "-o", tmp_path / "r.html")
    assert report_page.returncode == 0 or one_line_error(report_page), report_page.stderr


AVAILABILITY_LOG = "date,node,scheduled_hours,operational_hours\n2026-01-01,n1,24,24\n2026-01-02,n1,24,23\n"


@pytest.mark.parametrize("argv", [["--start", "9999-12-31"], ["--end", "0001-01-01"], ["--days", "10000000"],
                                  ["--days", "99999999999999"], ["--start", "9999-12-01", "--days", "60"]])
def test_availability_windows_past_the_calendar_are_one_line(tmp_path, argv):
    log = tmp_path / "log.csv"
    log.write_text(AVAILABILITY_LOG)
    proc = run_cli("acceptance", "availability", log, *argv)
    assert one_line_error(proc), proc.stderr


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_availability_hours_that_overflow_never_reach_a_verdict(tmp_path, fmt):
    log = tmp_path / "log.csv"
    log.write_text("date,node,scheduled_hours,operational_hours\n"
                   "2026-01-01,n1,1e308,1e308\n2026-01-01,n2,1e308,1e308\n2026-01-02,n1,1e308,1e308\n")
    proc = run_cli("acceptance", "availability", log, "--format", fmt, "--days", "2")
    assert one_line_error(proc), proc.stdout + proc.stderr
    assert "NaN" not in proc.stdout and "Infinity" not in proc.stdout and "inf" not in proc.stdout


# -- 7. silent acceptance --------------------------------------------------------------------------
def test_a_negative_figure_that_cannot_be_negative_is_refused(tmp_path):
    def negative(report):
        for case in cases(report):
            for entry in (case.get("perfvalues") or {}).values():
                if entry[0] is not None:
                    entry[0] = -abs(entry[0]) - 5
    report = write_report(tmp_path / "report.json", negative)
    proc = run_cli("results", "ingest", report, "--results-dir", tmp_path / "results")
    assert one_line_error(proc) and "negative" in proc.stderr, proc.stderr
    assert not list(tmp_path.rglob("rows.jsonl"))


@pytest.mark.parametrize("hide", ["no-provenance", "null-version", "missing-key"])
def test_the_version_guard_holds_when_a_run_hides_its_version(tmp_path, hide):
    a = synthetic_run(tmp_path, "a", {"t": [1, 1, 1]})
    b = synthetic_run(tmp_path, "b", {"t": [1, 1, 1]})
    prov = json.loads((a / "provenance.json").read_text())
    prov["suite_version"] = "9.9.9"
    (a / "provenance.json").write_text(json.dumps(prov))
    if hide == "no-provenance":
        (b / "provenance.json").unlink()
    else:
        prov = json.loads((b / "provenance.json").read_text())
        if hide == "null-version":
            prov["suite_version"] = None
        else:
            prov.pop("suite_version")
        (b / "provenance.json").write_text(json.dumps(prov))
    for argv in (("compare", "--baseline", a, "--candidate", b, "--no-history"),
                 ("compare", "--baseline", b, "--candidate", a, "--no-history"),
                 ("report", a, b, "-o", tmp_path / "r.html")):
        proc = run_cli("results", *argv)
        assert one_line_error(proc) and "suite version" in proc.stderr, (argv, proc.stdout, proc.stderr)


@pytest.mark.parametrize("version", ["9.9.9", None])
def test_a_history_of_another_or_unknown_version_is_no_baseline(tmp_path, version):
    for name in "abcdef":
        synthetic_run(tmp_path, name, {"t": [1.0, 1.01, 0.99]})        # recorded by version 0.0.test
    candidate = synthetic_run(tmp_path, "new", {"t": [2.0, 2.0, 2.0]})
    prov = json.loads((candidate / "provenance.json").read_text())
    prov["suite_version"] = version
    (candidate / "provenance.json").write_text(json.dumps(prov))
    proc = run_cli("results", "compare", "--baseline", "history", "--candidate", candidate,
                   "--results-dir", tmp_path / "results")
    assert one_line_error(proc) and ("9.9.9" in proc.stderr if version else "no yeebench suite version"
                                     in proc.stderr), proc.stdout + proc.stderr


# -- 5. the history cache ---------------------------------------------------------------------------
def _history_tree(tmp_path):
    for name in "abcdef":
        synthetic_run(tmp_path, name, {"t": [1.0, 1.01, 0.99]})
    return tmp_path / "results"


def _compare(results):
    argv = YEEBENCH + ["results", "compare", "--baseline", str(results / "synth" / "a"), "--candidate",
                       str(results / "synth" / "b"), "--results-dir", str(results)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=results)
    return proc


def _damage_past_meta(path):
    """Garbage over every page after the schema and the meta table (and its index), which stay
    readable: only a check of the whole file sees the damage."""
    import sqlite3
    db = sqlite3.connect(path)
    last_meta = db.execute("SELECT MAX(rootpage) FROM sqlite_master WHERE tbl_name = 'meta'").fetchone()[0]
    page = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    data = bytearray(path.read_bytes())
    start = last_meta * page
    assert len(data) > start, "cache too small to damage past its meta table"
    data[start:] = bytes((i * 37 + 11) % 256 for i in range(len(data) - start))
    path.write_bytes(bytes(data))


def test_a_rebuild_clears_the_temporary_a_killed_build_left(tmp_path):
    results = _history_tree(tmp_path)
    (results / history.CACHE_NAME).write_bytes(b"damaged")
    left = results / f"{history.CACHE_NAME}.pid999999999.abc.tmp"     # no such process
    left.write_bytes(b"half a cache")
    proc = _compare(results)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert not left.exists() and not [p for p in results.iterdir() if store.is_temporary(p)]


def test_a_cache_damaged_past_its_meta_table_is_rebuilt(tmp_path):
    results = _history_tree(tmp_path)
    first = _compare(results)
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    cache = results / history.CACHE_NAME
    _damage_past_meta(cache)
    again = _compare(results)
    out2, err2 = again.communicate(timeout=120)
    assert again.returncode == 0 and "malformed" not in err2, err2
    assert out2 == out
    import sqlite3
    assert sqlite3.connect(cache).execute("PRAGMA quick_check").fetchone() == ("ok",)


@pytest.mark.parametrize("state", ["missing", "damaged", "not-a-database"])
def test_concurrent_compares_on_a_missing_or_damaged_cache_all_succeed(tmp_path, state):
    results = _history_tree(tmp_path)
    reference = _compare(results)
    expected, err = reference.communicate(timeout=120)
    assert reference.returncode == 0, err
    cache = results / history.CACHE_NAME
    for trial in range(3):
        if state == "missing":
            cache.unlink()
        elif state == "damaged":
            _damage_past_meta(cache)
        else:
            cache.write_bytes(b"not a database at all" * 300)
        procs = [_compare(results) for _ in range(3)]
        for proc in procs:
            out, err = proc.communicate(timeout=180)
            assert proc.returncode == 0 and out == expected, (trial, err)
        assert not [p for p in results.iterdir() if store.is_temporary(p)], trial


# -- killed ingests --------------------------------------------------------------------------------
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_an_ingest_killed_at_any_moment_leaves_nothing_recorded_half(tmp_path, sig):
    results = tmp_path / "results"
    argv = YEEBENCH + ["results", "ingest", str(REPORT_B), "--results-dir", str(results)]
    # python starts in ~0.3 s and the ingest takes ~1 s here: the kills land before, during and after
    for delay in (0.05, 0.3, 0.5, 0.7, 0.9, 1.1, 1.4):
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
        time.sleep(delay)
        proc.send_signal(sig)
        proc.communicate(timeout=60)
        for run in store.find_runs(results) if results.exists() else []:
            store.load_run(run)              # complete and valid, or not there at all
        recorded = store.find_runs(results) if results.exists() else []
        if recorded:
            break
    again = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    if recorded:
        assert one_line_error(again) and "already exists" in again.stderr, again.stderr
    else:
        assert again.returncode == 0, again.stderr
    runs = store.find_runs(results)
    assert len(runs) == 1 and store.load_run(runs[0]).rows
    leftovers = [p for p in results.rglob(".*") if store.is_temporary(p)]
    assert not leftovers, leftovers
    proc = run_cli("results", "compare", "--baseline", runs[0], "--candidate", runs[0],
                   "--results-dir", results)
    assert proc.returncode == 0, proc.stderr
