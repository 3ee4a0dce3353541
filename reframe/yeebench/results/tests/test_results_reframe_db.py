"""ReFrame's results database: enabled by the suite's configuration, read by `yeebench results ingest`."""
import json
import os
import shlex
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from results_testutil import FIXTURES, run_cli

REPO = Path(__file__).resolve().parents[4]
REFRAME = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin" / "reframe"
PROBE = FIXTURES / "checks" / "storage_probe.py"


def _reframe(rfm_dir, *argv):
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(rfm_dir))
    env.pop("RFM_ENABLE_RESULTS_STORAGE", None)
    return subprocess.run([str(REFRAME), "-C", str(REPO / "reframe" / "config" / "settings.py"),
                           "--system", "local", *argv], capture_output=True, text=True, env=env,
                          cwd=rfm_dir.parent, timeout=300)


@pytest.fixture(scope="module")
def two_sessions(tmp_path_factory):
    if not REFRAME.exists():
        pytest.skip(f"no ReFrame at {REFRAME}")
    rfm_dir = tmp_path_factory.mktemp("rfm") / "reframe"
    for _ in range(2):
        proc = _reframe(rfm_dir, "-c", str(PROBE), "-r")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "results database:  [on]" in proc.stdout
    return rfm_dir


def _readme_commands(prefix):
    text = (REPO / "results" / "README.md").read_text()
    return [line.strip() for line in text.splitlines() if line.strip().startswith(prefix)]


def test_performance_compare_works_on_the_suites_sessions(two_sessions):
    """The README's ReFrame commands, exactly as written, on the suite's configuration."""
    commands = _readme_commands(".venv/bin/reframe -C reframe/config/settings.py")
    assert len(commands) == 2
    if not (REPO / ".venv" / "bin" / "reframe").exists():
        pytest.skip("no .venv in this checkout")
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(two_sessions))
    env.pop("RFM_ENABLE_RESULTS_STORAGE", None)
    listed, cmp = (subprocess.run(shlex.split(c), capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
                   for c in commands)
    assert listed.returncode == 0 and listed.stdout.count("20") >= 2, listed.stdout + listed.stderr
    assert cmp.returncode == 0, cmp.stdout + cmp.stderr
    assert "StorageProbe" in cmp.stdout and "probe_time_s" in cmp.stdout and "0.25" in cmp.stdout


def test_readme_ingest_command_runs_as_written(two_sessions, tmp_path):
    (command,) = _readme_commands("and `yeebench results ingest --reframe-db")
    argv = shlex.split(command.split("`")[1])
    db = tmp_path / argv[-1]
    db.parent.mkdir(parents=True)
    shutil.copy(two_sessions / "results-db" / "local.db", db)
    proc = run_cli(*argv[1:], cwd=tmp_path)   # yeebench results ingest ...: run_cli is `yeebench`
    assert proc.returncode == 0 and len(list((tmp_path / "results" / "local").iterdir())) == 2, proc.stderr


def test_ingest_reads_the_database_and_agrees_with_reframe(two_sessions, tmp_path):
    db = two_sessions / "results-db" / "local.db"
    results = tmp_path / "results"
    proc = run_cli("results", "ingest", "--reframe-db", db, "--results-dir", results)
    assert proc.returncode == 0 and "2 new session(s) recorded" in proc.stderr, proc.stderr
    runs = [Path(line) for line in proc.stdout.split()]
    assert len(runs) == 2 and all(r.is_dir() for r in runs)
    again = run_cli("results", "ingest", "--reframe-db", db, "--results-dir", results)
    assert again.returncode == 0 and again.stdout == "" and "2 already recorded" in again.stderr
    cmp = run_cli("results", "compare", "--baseline", runs[0], "--candidate", runs[1], "--format", "json")
    assert cmp.returncode == 0, cmp.stdout + cmp.stderr
    (result,) = json.loads(cmp.stdout)["results"]
    assert result["metric"] == "probe_time_s" and result["baseline_value"] == result["candidate_value"] == 0.25


def _bad_dbs(tmp_path):
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"SQLite format 2\0" + b"x" * 4000)
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE metadata (schema_version TEXT)")
    conn.execute("INSERT INTO metadata VALUES ('9.0')")
    conn.commit()
    conn.close()
    foreign = tmp_path / "foreign.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE accounts (id INTEGER)")
    conn.commit()
    conn.close()
    return {"garbage": (garbage, "not a ReFrame results database"),
            "other version": (other, "schema version '9.0'"),
            "foreign": (foreign, "not a ReFrame results database"),
            "absent": (tmp_path / "none.db", "no ReFrame results database")}


@pytest.mark.parametrize("kind", ["garbage", "other version", "foreign", "absent"])
def test_bad_database_is_one_line_and_writes_nothing(tmp_path, kind):
    db, message = _bad_dbs(tmp_path)[kind]
    before = db.read_bytes() if db.exists() else None
    results = tmp_path / "results"
    proc = run_cli("results", "ingest", "--reframe-db", db, "--results-dir", results)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert message in proc.stderr and not results.exists()
    assert (db.read_bytes() if db.exists() else None) == before   # opened read-only


def _db_with_blobs(tmp_path, blobs):
    """A database of ReFrame's layout whose sessions hold the given json_blob values (a column without
    ReFrame's TEXT type, so that a number stays a number, as in a database another program wrote)."""
    db = tmp_path / "sessions.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE metadata (schema_version TEXT)")
    conn.execute("INSERT INTO metadata VALUES ('1.0')")
    conn.execute("CREATE TABLE sessions (uuid TEXT, session_start_unix REAL, session_end_unix REAL, "
                 "json_blob, report_file TEXT)")
    for i, (uuid, blob) in enumerate(blobs):
        conn.execute("INSERT INTO sessions VALUES (?, ?, ?, ?, NULL)", (uuid, i, i + 1, blob))
    conn.commit()
    conn.close()
    return db


@pytest.mark.parametrize("blob, says", [
    (None, "json_blob) is null"),
    (42, "json_blob) is integer"),
    (4.5, "json_blob) is real"),
    (b"{\"session_info\": \xff\xfe}", "not UTF-8 text"),
    ("{\"session_info\": 1e", "not valid JSON"),
    ("[" * 100000 + "]" * 100000, "too deeply"),
    ("{\"a\": " + "9" * 5000 + "}", "number too long"),
], ids=["null", "integer", "real", "not-utf8", "truncated", "deep", "long-number"])
def test_a_damaged_session_is_one_line_naming_it(tmp_path, blob, says):
    db = _db_with_blobs(tmp_path, [("sess-1", blob)])
    if isinstance(blob, bytes):      # stored as TEXT that is not UTF-8, as a damaged file holds it
        conn = sqlite3.connect(db)
        conn.execute("UPDATE sessions SET json_blob = CAST(? AS TEXT)", (blob,))
        conn.commit()
        conn.close()
    proc = run_cli("results", "ingest", "--reframe-db", db, "--results-dir", tmp_path / "results")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and says in proc.stderr and "sess-1" in proc.stderr, proc.stderr
    assert not (tmp_path / "results").exists()
