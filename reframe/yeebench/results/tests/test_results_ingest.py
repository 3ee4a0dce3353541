"""ingest: recorded ReFrame 4.10.4 reports -> rows + provenance; every bad-input path."""
import fcntl
import json
import os
import shutil
import time

import pytest

from results_testutil import REPORT_A, REPORT_B, ingested, run_cli
from yeebench import safe_io
from yeebench.results import store
from yeebench.results.errors import ResultsError
from yeebench.results.ingest import ingest


def test_rows_from_recorded_report(tmp_path):
    run_dir = ingested(tmp_path)
    assert run_dir.parent.name == "generic"
    assert sorted(p.name for p in run_dir.iterdir()) == ["provenance.json", "report.json", "rows.jsonl"]
    rows = store.read_rows(run_dir / "rows.jsonl")
    report = json.loads(REPORT_A.read_text())
    passing = [c for c in report["runs"][0]["testcases"] if c["result"] == "pass"]
    assert len(rows) == sum(len(c["perfvalues"]) for c in passing)
    checks = {r["check"] for r in rows}
    assert checks == {"FixturePt2pt", "FixtureSolver"}  # FixtureFailing failed sanity: no rows
    shm_lat = [r for r in rows if r["metric"] == "latency_1B" and r["parameters"]["transport"] == "shm"]
    assert sorted(r["repeat"] for r in shm_lat) == [0, 1, 2]
    assert all(r["parameters"]["placement"] == "intra-node" for r in shm_lat)  # loggable variable kept
    assert shm_lat[0]["unit"] == "us" and shm_lat[0]["direction"] == "lower"


def test_directions_declared_or_inferred(tmp_path):
    rows = store.read_rows(ingested(tmp_path) / "rows.jsonl")
    by_metric = {r["metric"]: r for r in rows}
    assert by_metric["bandwidth_peak"]["direction"] == "higher"
    assert by_metric["bandwidth_peak"]["direction_source"] == "declared"
    # the fixture check leaves elapsed_s out of perf_directions on purpose
    assert by_metric["elapsed_s"]["direction"] == "lower"
    assert by_metric["elapsed_s"]["direction_source"] == "inferred"


def test_provenance_block(tmp_path):
    prov = json.loads((ingested(tmp_path) / "provenance.json").read_text())
    assert prov["reframe"]["version"] == "4.10.4" and prov["reframe"]["source"] == "report"
    assert prov["counts"] == {"testcases": 15, "passed": 12, "skipped": 0, "failed": 3, "rows": 36}
    failed = [c for c in prov["jobs"]["cases"] if c["result"] != "pass"]
    assert {c["check"] for c in failed} == {"FixtureFailing"}
    assert all(c["fail_phase"] == "sanity" for c in failed)
    assert all(c["jobid"] and c["nodelist"] for c in prov["jobs"]["cases"])
    assert prov["topology"]["source"] == "ingest-host"
    if shutil.which("numactl"):
        assert prov["topology"]["numa_nodes"] >= 1 and prov["topology"]["numa_distances"]


def test_provenance_from_program_output_files(tmp_path):
    report = json.loads(REPORT_A.read_text())
    out = tmp_path / "out"
    out.mkdir()
    (out / "rfm_job.out").write_text(json.dumps({
        "schema": "yee-report", "schema_version": 1, "valid": True,
        "build": {"version": "0.1.0", "git_sha": "abc123", "dirty": True, "compiler": "GNU 12.2.0", "flags": "-O3"},
        "placement": [{"rank": 0, "host": "vm", "cpus": [0], "numa_nodes": [0]}]}) + "\n")
    for case in report["runs"][0]["testcases"]:
        case["outputdir"] = str(out)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    prov = json.loads((ingest(path, tmp_path / "results") / "provenance.json").read_text())
    assert prov["git"] == {"source": "output-files", "sha": "abc123", "dirty": True}
    assert prov["build"]["programs"]["yee"]["flags"] == "-O3"
    assert prov["bindings"]["source"] == "output-files"
    assert prov["bindings"]["observed"][0]["placement"][0]["cpus"] == [0]
    assert prov["software"]["compiler"] == "GNU 12.2.0"


def test_never_overwrites_a_run(tmp_path):
    run_dir = ingested(tmp_path)
    before = (run_dir / "rows.jsonl").read_bytes()
    with pytest.raises(ResultsError, match="already exists"):
        ingested(tmp_path)
    assert (run_dir / "rows.jsonl").read_bytes() == before
    proc = run_cli("results", "ingest", REPORT_A, "--results-dir", tmp_path / "results")
    assert proc.returncode == 2 and "already exists" in proc.stderr


def test_two_reports_two_runs(tmp_path):
    a, b = ingested(tmp_path, REPORT_A), ingested(tmp_path, REPORT_B)
    assert a != b and a.parent == b.parent


def _bad(tmp_path, text, name="bad.json"):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def _mutated(tmp_path, mutate):
    report = json.loads(REPORT_A.read_text())
    mutate(report)
    return _bad(tmp_path, json.dumps(report))


BAD_INPUTS = {
    "truncated": lambda tmp: _bad(tmp, REPORT_A.read_text()[: len(REPORT_A.read_text()) // 2]),
    "empty": lambda tmp: _bad(tmp, ""),
    "binary": lambda tmp: _bad(tmp, b"\x89PNG\r\n\x1a\n\xff\xfe"),
    "not a report": lambda tmp: _bad(tmp, json.dumps({"hello": "world"})),
    "unknown data version": lambda tmp: _mutated(tmp, lambda r: r["session_info"].update(data_version="9.0")),
    "schema violation": lambda tmp: _mutated(tmp, lambda r: r["runs"][0]["testcases"][0].pop("perfvalues")),
    "no test cases": lambda tmp: _mutated(tmp, lambda r: r["runs"][0].update(testcases=[])),
    "only failures": lambda tmp: _mutated(tmp, lambda r: r["runs"][0].update(
        testcases=[c for c in r["runs"][0]["testcases"] if c["result"] != "pass"])),
    "non-numeric perfvalue": lambda tmp: _mutated(tmp, lambda r: r["runs"][0]["testcases"][6]["perfvalues"].update(
        {"generic:default:mcells_per_s": ["fast", 0, None, None, "Mcells/s", "pass"]})),
    "missing file": lambda tmp: tmp / "does-not-exist.json",
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_refused_cleanly(tmp_path, case):
    path = BAD_INPUTS[case](tmp_path)
    results = tmp_path / "results"
    proc = run_cli("results", "ingest", path, "--results-dir", results)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("yeebench results ingest: error:"), proc.stderr
    assert "Traceback" not in proc.stderr
    # nothing half-written: no run directory, no temporary leftovers
    leftovers = [p for p in results.rglob("*")] if results.exists() else []
    assert leftovers in ([], [results / "generic"]), leftovers
    if (results / "generic").exists():
        assert not any((results / "generic").iterdir())


def test_failed_write_leaves_nothing(tmp_path, monkeypatch):
    real_rename = os.rename

    def broken_rename(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "rename", broken_rename)
    with pytest.raises(ResultsError, match="No space left"):
        ingested(tmp_path)
    monkeypatch.setattr(os, "rename", real_rename)
    assert list((tmp_path / "results" / "generic").iterdir()) == []


def test_a_run_too_large_to_read_back_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    # a machine-sized run with whole pt2pt curves (600,000 figures) wrote 365 MB of rows that no tool read
    monkeypatch.setattr(store, "ROWS_LIMIT", 2048)
    with pytest.raises(ResultsError, match=r"figures make a rows file of .* more than the .* results tools read back; "
                                           r"record it in parts \(a ReFrame --report-file per partition"):
        ingested(tmp_path)
    assert not (tmp_path / "results" / "generic").exists() or not list((tmp_path / "results" / "generic").iterdir())


def test_read_validates_rows(tmp_path):
    run_dir = ingested(tmp_path)
    rows_file = run_dir / "rows.jsonl"
    lines = rows_file.read_text().splitlines()
    rows_file.write_text("\n".join(lines[:3] + [lines[3][:40]]) + "\n")  # truncated last line
    with pytest.raises(ResultsError, match=r"rows.jsonl:4: not valid JSON"):
        store.load_run(run_dir)
    row = json.loads(lines[0])
    row["schema_version"] = 7
    rows_file.write_text(json.dumps(row) + "\n")
    with pytest.raises(ResultsError, match="unknown row schema_version 7"):
        store.load_run(run_dir)
    row["schema_version"] = 1
    del row["unit"]
    rows_file.write_text(json.dumps(row) + "\n")
    with pytest.raises(ResultsError, match="schema violation"):
        store.load_run(run_dir)


def test_check_observations_reach_the_provenance(tmp_path):
    report = json.loads(REPORT_A.read_text())
    report["runs"][0]["testcases"][6]["observations"] = {"numa_distances": [[10, 21], [21, 10]]}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    prov = json.loads((ingest(path, tmp_path / "results") / "provenance.json").read_text())
    assert prov["observations"]["source"] == "report"
    assert prov["observations"]["cases"] == [{"testcase": "FixtureSolver_0",
                                              "facts": {"numa_distances": [[10, 21], [21, 10]]}}]


def test_missed_reference_keeps_the_figure_marked(tmp_path):
    report = json.loads(REPORT_A.read_text())
    case = report["runs"][0]["testcases"][6]
    case.update(result="fail", fail_phase="performance", fail_reason="reference missed")
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    rows = store.read_rows(ingest(path, tmp_path / "results") / "rows.jsonl")
    marked = [r for r in rows if r["testcase"] == case["unique_name"]]
    assert marked and {r["status"] for r in marked} == {"perf-fail"}
    assert {r["status"] for r in rows if r["testcase"] != case["unique_name"]} == {"pass"}


def test_topology_parsing_of_a_two_socket_machine(monkeypatch):
    from yeebench.results import host_info
    outputs = {
        "lscpu": "CPU(s):              32\nModel name:          Xeon X5550\nCore(s) per socket:  8\n"
                 "Socket(s):           2\nNUMA node(s):        2\n",
        "numactl": "available: 2 nodes (0-1)\nnode 0 cpus: 0 1\nnode distances:\nnode   0   1 \n"
                   "  0:  10  21 \n  1:  21  10 \n",
    }
    monkeypatch.setattr(host_info, "_run", lambda argv, cwd=None: outputs.get(argv[0]))
    topo = host_info.topology.__wrapped__()
    assert topo == {"sockets": 2, "cores": 16, "cpus": 32, "numa_nodes": 2,
                    "numa_distances": [[10, 21], [21, 10]], "model": "Xeon X5550"}


def test_missing_tools_give_nulls(monkeypatch):
    from yeebench.results import host_info
    monkeypatch.setattr(host_info, "_run", lambda argv, cwd=None: None)
    assert host_info.mpi_version.__wrapped__() is None and host_info.ucx_version.__wrapped__() is None
    assert host_info.topology.__wrapped__()["numa_nodes"] is None
    assert host_info.git_state("/nonexistent") == (None, None)


def test_skipped_cases_are_counted_as_skipped_not_failed(tmp_path):
    report = json.loads(REPORT_A.read_text())
    case = next(c for c in report["runs"][0]["testcases"] if c["name"].startswith("FixtureFailing"))
    case.update(result="skip", fail_phase=None, fail_reason=None)
    edited = tmp_path / "skip.json"
    edited.write_text(json.dumps(report))
    prov = json.loads((ingest(edited, results_dir=tmp_path / "results") / "provenance.json").read_text())
    assert prov["counts"]["skipped"] == 1 and prov["counts"]["failed"] == 2


def test_skipped_only_report_says_skipped_not_failed(tmp_path):
    report = json.loads(REPORT_A.read_text())
    for case in report["runs"][0]["testcases"]:
        case.update(result="skip", fail_phase=None, fail_reason="NetPIPE not found")
    edited = tmp_path / "skip.json"
    edited.write_text(json.dumps(report))
    proc = run_cli("results", "ingest", edited, "--results-dir", tmp_path / "results")
    n = len(report["runs"][0]["testcases"])
    assert proc.returncode == 2 and f"{n} cases: 0 passed, {n} skipped, 0 failed" in proc.stderr, proc.stderr


def _leftover(system_dir, name, age_s=0, owner=True):
    """A run's temporary directory as an ingest leaves it: with its owner file (whose lock the writer
    held while alive) unless `owner` is False (a writer killed before it locked, or an older yeebench)."""
    tmp = system_dir / f".{name}.0123456789abcdef.tmp"
    tmp.mkdir(parents=True)
    if owner:
        (tmp / safe_io.OWNER_FILE).write_text("")
    (tmp / "rows.jsonl").write_text('{"schema": "yeebench-row", "trunc')   # a write cut short by SIGKILL
    if age_s:
        old = time.time() - age_s
        os.utime(tmp, (old, old))
    return tmp


def test_ingest_removes_temporaries_of_killed_ingests_and_never_reads_them(tmp_path):
    system_dir = tmp_path / "results" / "generic"
    killed = _leftover(system_dir, "20260101T000000Z-aaaa")                     # its lock is free
    ancient = _leftover(system_dir, "20260101T000000Z-bbbb", age_s=3 * 24 * 3600, owner=False)
    unowned = _leftover(system_dir, "20260101T000000Z-dddd", owner=False)        # young: kept a while
    in_progress = _leftover(system_dir, "20260101T000000Z-cccc")   # a live ingest's (any PID namespace)
    writer = os.open(in_progress / safe_io.OWNER_FILE, os.O_RDWR)
    fcntl.flock(writer, fcntl.LOCK_EX)
    try:
        proc = run_cli("results", "compare", "--baseline", killed, "--candidate", killed)
        assert proc.returncode == 2 and "temporary directory of an unfinished ingest" in proc.stderr
        run = ingested(tmp_path)
        assert run.parent == system_dir
        assert not killed.exists() and not ancient.exists()
        assert in_progress.exists() and unowned.exists()
        proc = run_cli("results", "compare", "--baseline", system_dir, "--candidate", run)
        assert proc.returncode == 0, proc.stderr   # the folder's only run: the leftovers are not read
    finally:
        os.close(writer)


def test_variables_made_parameters_with_reframe_P_stay_apart():
    # `reframe -P array_size=4Mi,128Mi`: a cache-sized and a memory-sized run of one check are two
    # figures, not ten repeats of one (measured: merged, their triad_bw "repeats" ranged 24.6-63.8 GB/s)
    from yeebench.results import report_reader
    case = {"display_name": "NumaBandwidth %policy=none %.array_size=4Mi %.repeat_no=3", "array_size": "4Mi",
            "policy": "none"}
    assert report_reader.parameters(case) == {"policy": "none", "array_size": "4Mi"}
