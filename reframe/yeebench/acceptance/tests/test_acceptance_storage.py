"""Storage figures: fio JSON, dd summaries, the solver's I/O feature probe."""
import json
import mmap
import subprocess
import sys

import pytest

from yeebench.checks.io import pagecache
from yeebench.checks.io.storage import dd_bandwidth, fio_bandwidth, read_method, solver_io_options


def fio_doc(**kinds):
    return json.dumps({"fio version": "fio-3.33", "jobs": [
        {"jobname": "j", "error": 0, **{k: {"bw_bytes": v} for k, v in kinds.items()}}]})


def test_fio_write_and_read():
    assert fio_bandwidth(fio_doc(write=2e9, read=0)) == {"write": 2.0}
    assert fio_bandwidth("note: a banner line\n" + fio_doc(read=5e8)) == {"read": 0.5}


@pytest.mark.parametrize("text, message", [
    ("", "no JSON"), ("{not json", "not JSON"), ('{"jobs": []}', "no jobs"),
    (json.dumps({"jobs": [{"jobname": "j", "error": 5}]}), "failed with error 5"),
    (fio_doc(write=0), "no job moved any data"),
])
def test_fio_bad_output(text, message):
    with pytest.raises(ValueError, match=message):
        fio_bandwidth(text)


def test_dd_summary_lines():
    text = ("128+0 records in\n128+0 records out\n"
            "134217728 bytes (134 MB, 128 MiB) copied, 0.5 s, 268 MB/s\n")
    assert dd_bandwidth(text) == pytest.approx(134217728 / 0.5 / 1e9)
    assert dd_bandwidth("1000000000 bytes (1.0 GB) copied, 2,5 s, 400 MB/s") == pytest.approx(0.4)


@pytest.mark.parametrize("text", ["", "dd: error writing: No space left on device",
                                  "100 bytes (100 B) copied, 0 s, inf B/s"])
def test_dd_bad_output(text):
    with pytest.raises(ValueError):
        dd_bandwidth(text)


def test_solver_io_probe():
    assert solver_io_options("--nx N  --steps K") is None
    assert solver_io_options("--output none|ascii|binary|hdf5") is None
    help_text = "--output none|ascii|binary|hdf5\n--output-strategy gather|per-rank|shared"
    assert solver_io_options(help_text) == ["--output", "binary", "--output-strategy", "per-rank"]
    help_text = "--output none|binary\n--output-strategy gather-to-root|file-per-rank|shared"
    assert solver_io_options(help_text)[-1] == "file-per-rank"


def test_solver_io_probe_asks_for_fsync_when_offered():
    help_text = "--output none|binary\n--output-strategy root|per-rank|shared\n--output-fsync  fsync every file"
    assert solver_io_options(help_text) == ["--output", "binary", "--output-strategy", "per-rank",
                                            "--output-fsync"]


def test_read_counts_only_when_the_page_cache_could_not_serve_it():
    assert read_method("O_DIRECT\n")["measured"]
    dropped = read_method("pagecache 0 of 32768 pages resident\n")
    assert dropped["measured"] and "0 of 32768 pages resident" in dropped["why"]
    cached = read_method("pagecache 32768 of 32768 pages resident\n")
    assert not cached["measured"] and "would measure memory" in cached["why"]
    assert not read_method("")["measured"]


def test_dropping_a_file_from_the_page_cache(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"y" * (4 * 2**20))
    path.read_bytes()
    left, total = pagecache.drop(str(path))
    assert total == 4 * 2**20 // mmap.PAGESIZE
    assert left <= total  # tmpfs keeps its pages (that is what the check then reports)
    done = subprocess.run([sys.executable, "-m", "yeebench.checks.io.pagecache", "drop", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and pagecache.parse(done.stdout)[1] == total
    done = subprocess.run([sys.executable, "-m", "yeebench.checks.io.pagecache", "drop", str(tmp_path / "no")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "No such file" in done.stderr


def test_solver_io_options_are_read_in_the_job_from_the_saved_help(tmp_path):
    # the job runs `yee --help > yee-help.txt` on the node and this module turns it into options
    help_file = tmp_path / "yee-help.txt"
    help_file.write_text("--output none|binary\n--output-strategy root|per-rank|shared\n--output-fsync\n")
    cmd = [sys.executable, "-m", "yeebench.checks.io.storage", str(help_file)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.split() == ["--output", "binary", "--output-strategy",
                                                            "per-rank", "--output-fsync"]
    help_file.write_text("--output none|ascii\n")
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 1 and "no binary per-rank output" in done.stderr and done.stdout == ""
    done = subprocess.run(cmd[:-1] + [str(tmp_path / "absent")], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
