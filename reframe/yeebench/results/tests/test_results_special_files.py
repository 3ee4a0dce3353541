"""Outputs never replace what is not theirs, inputs are bounded regular files, a shared results tree is
never written through a planted link and may be read-only, and a live ingest elsewhere keeps its
temporary. Links, FIFOs, devices, /proc files and sparse 3 GB files in every place a command reads
or writes: one line and exit 2 (or the command works), never a hang or a file replaced."""
import fcntl
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from results_testutil import REPORT_A, YEEBENCH, run_cli, synthetic_run
from test_results_hostile_inputs import one_line_error

from yeebench import safe_io
from yeebench.results import history

TIMEOUT_S = 120        # a command that blocks on a FIFO would wait forever: the test fails instead


def _run(*args, cwd=None):
    try:
        return run_cli(*args, cwd=cwd)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(map(str, args))} hung")


def _special(path, kind):
    """Make `path` a `kind` of file that is not a regular one; returns what a write must leave alone."""
    victim = path.parent / "victim.txt"
    victim.write_text("mine\n")
    if kind == "symlink":
        path.symlink_to(victim)
    elif kind == "dangling-symlink":
        path.symlink_to(path.parent / "created-through-link")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return victim


def _unchanged(path, before, victim):
    after = os.lstat(path)
    return ((after.st_ino, after.st_mode) == (before.st_ino, before.st_mode) and victim.read_text() == "mine\n"
            and not (path.parent / "created-through-link").exists())


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    base = tmp_path_factory.mktemp("tree")
    proc = run_cli("results", "ingest", REPORT_A, "--results-dir", base / "results")
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip().splitlines()[-1])


# -- outputs ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["symlink", "dangling-symlink", "fifo", "device"])
@pytest.mark.parametrize("command", ["report", "compare", "baseline"])
def test_an_output_that_is_not_a_regular_file_is_refused_and_kept(tmp_path, run_dir, command, kind):
    if command == "baseline":
        target = tmp_path / "baselines" / "generic.json"
        target.parent.mkdir()
        argv = ("results", "baseline", run_dir, "--baselines-dir", target.parent)
    else:
        target = tmp_path / "out"
        argv = ("results", "report", run_dir, "-o", target) if command == "report" else \
            ("results", "compare", "--baseline", run_dir, "--candidate", run_dir, "--no-history", "-o", target)
    victim = _special(target, kind)
    before = os.lstat(target)
    proc = _run(*argv)
    assert one_line_error(proc) and "not a regular file" in proc.stderr, proc.stderr
    assert _unchanged(target, before, victim)


# -- inputs -----------------------------------------------------------------------------------------
def _input(tmp_path, kind):
    path = tmp_path / "input.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "proc":
        path.symlink_to("/proc/self/status")
    elif kind == "sparse-huge":
        with open(path, "wb") as fh:
            fh.truncate(3 * 1024 ** 3)
    return path


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "proc", "sparse-huge"])
def test_a_report_that_is_not_a_bounded_regular_file_is_one_line(tmp_path, kind):
    path = _input(tmp_path, kind)
    for argv in (("results", "ingest", path, "--results-dir", tmp_path / "results"),
                 ("acceptance", "report", path)):
        proc = _run(*argv)
        assert one_line_error(proc) and str(path) in proc.stderr, (argv, proc.stderr)
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "proc", "sparse-huge"])
@pytest.mark.parametrize("name", ["rows.jsonl", "provenance.json"])
def test_a_recorded_file_that_is_not_a_bounded_regular_file_is_one_line(tmp_path, run_dir, kind, name):
    run = tmp_path / "results" / "generic" / "r1"
    shutil.copytree(run_dir, run)
    (run / name).unlink()
    special = _input(tmp_path, kind)
    os.rename(special, run / name)
    proc = _run("results", "compare", "--baseline", run, "--candidate", run, "--no-history")
    assert one_line_error(proc) or (name == "rows.jsonl" and proc.returncode == 2), proc.stderr


def test_a_baseline_file_that_is_a_sparse_3gb_file_is_one_line(tmp_path, run_dir):
    huge = tmp_path / "generic.json"
    with open(huge, "wb") as fh:
        fh.truncate(3 * 1024 ** 3)
    proc = _run("results", "compare", "--baseline", huge, "--candidate", run_dir, "--no-history")
    assert one_line_error(proc) and "MiB limit" in proc.stderr, proc.stderr


@pytest.mark.parametrize("kind", ["fifo", "proc", "dev-zero"])
def test_a_job_output_that_blocks_or_never_ends_is_not_read(tmp_path, kind):
    out_dir = tmp_path / "output"
    out_dir.mkdir()
    job_out = out_dir / "rfm_job.out"
    if kind == "fifo":
        os.mkfifo(job_out)                     # as a link to /proc/kmsg would: a read that never returns
    else:
        job_out.symlink_to("/proc/self/status" if kind == "proc" else "/dev/zero")
    report = json.loads(Path(REPORT_A).read_text())
    for run in report["runs"]:
        for case in run["testcases"]:
            case["outputdir"] = str(out_dir)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    proc = _run("results", "ingest", path, "--results-dir", tmp_path / "results")
    assert proc.returncode == 0, proc.stderr


# -- a shared results tree --------------------------------------------------------------------------
def test_a_live_ingests_temporary_survives_a_concurrent_ingest_whatever_its_pid(tmp_path):
    system_dir = tmp_path / "results" / "generic"
    system_dir.mkdir(parents=True)
    # a run being written by an ingest in another PID namespace or on another host: its name claims a
    # PID that is not alive here; its writer holds the lock of its owner file
    live = system_dir / ".20260101T000000Z-eeee.pid999999999.abc.tmp"
    live.mkdir()
    owner = os.open(live / safe_io.OWNER_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(owner, fcntl.LOCK_EX)
    try:
        proc = _run("results", "ingest", REPORT_A, "--results-dir", tmp_path / "results")
        assert proc.returncode == 0, proc.stderr
        assert live.is_dir() and (live / safe_io.OWNER_FILE).exists()
    finally:
        os.close(owner)


def test_an_ingest_cleans_no_folder_a_link_in_the_tree_leads_to(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    foreign = elsewhere / ".notes.txt.tmp"          # someone's own temporary, named like ours
    foreign.write_text("theirs\n")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "linked-system").symlink_to(elsewhere)
    proc = _run("results", "ingest", REPORT_A, "--results-dir", tmp_path / "results")
    assert proc.returncode == 0, proc.stderr
    assert foreign.read_text() == "theirs\n"


def _history_tree(tmp_path):
    for name in "abcdef":
        synthetic_run(tmp_path, name, {"t": [1.0, 1.01, 0.99]})
    return tmp_path / "results"


def _compare_argv(results):
    return YEEBENCH + ["results", "compare", "--baseline", str(results / "synth" / "a"), "--candidate",
                       str(results / "synth" / "b"), "--results-dir", str(results), "--format", "json"]


def _compare(results):
    return subprocess.run(_compare_argv(results), capture_output=True, text=True, cwd="/", timeout=TIMEOUT_S)


_READ_ONLY_MOUNT = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" || exit 97; shift; exec "$@"'


def _compare_read_only(results):
    """compare with the tree read-only: a read-only bind mount in a mount namespace of its own (root
    writes through any mode), or the tree's write bits taken away (anyone else)."""
    if os.geteuid() != 0:
        for path in [results, *results.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
        try:
            return _compare(results)
        finally:
            for path in [results, *results.rglob("*")]:
                path.chmod(path.stat().st_mode | 0o200)
    if not shutil.which("unshare"):
        pytest.skip("no unshare to mount the tree read-only")
    proc = subprocess.run(["unshare", "-m", "sh", "-c", _READ_ONLY_MOUNT, "sh", str(results), *_compare_argv(results)],
                          capture_output=True, text=True, cwd="/", timeout=TIMEOUT_S)
    if proc.returncode == 97 or "unshare:" in proc.stderr:
        pytest.skip(f"cannot mount the tree read-only here: {proc.stderr.strip()[-200:]}")
    return proc


def _files(root):
    return {str(p): (p.lstat().st_mtime_ns, p.lstat().st_size) for p in Path(root).rglob("*")}


@pytest.mark.parametrize("cache", ["valid", "absent"])
def test_compare_reads_a_tree_it_cannot_write(tmp_path, cache):
    results = _history_tree(tmp_path)
    first = _compare(results)
    assert first.returncode == 0, first.stderr
    if cache == "absent":
        (results / history.CACHE_NAME).unlink()
    (results / f"{history.CACHE_NAME}.lock").unlink()
    before = _files(results)
    proc = _compare_read_only(results)
    assert proc.returncode == 0, proc.stderr
    assert "cannot be written" in proc.stderr and "Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["results"] == json.loads(first.stdout)["results"]
    assert _files(results) == before


@pytest.mark.parametrize("kind", ["dangling-symlink", "symlink", "fifo"])
@pytest.mark.parametrize("name", [".history.sqlite.lock", ".history.sqlite", ".history.sqlite-journal"])
def test_a_planted_link_beside_the_cache_is_never_followed(tmp_path, name, kind):
    results = _history_tree(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    aim = outside / "created-by-compare"
    plant = results / name
    if kind == "fifo":
        os.mkfifo(plant)
    else:
        if kind == "symlink":
            aim.write_text("mine\n")
        plant.symlink_to(aim)
    proc = _compare(results)
    assert proc.returncode == 0, proc.stderr
    assert "not a regular file" in proc.stderr or "symbolic link" in proc.stderr, proc.stderr
    assert os.path.islink(plant) if kind != "fifo" else stat.S_ISFIFO(os.lstat(plant).st_mode)
    if kind == "symlink":
        assert aim.read_text() == "mine\n"
    else:
        assert not aim.exists()
