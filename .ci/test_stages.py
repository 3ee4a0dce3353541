"""Tests of .ci/stages.py, the stage runner of `make test`, on a stand-in Makefile."""
import subprocess
import sys
from pathlib import Path

STAGES = Path(__file__).resolve().parent / "stages.py"

# waitfor.X.%: waits (up to 60 s) until stage X has written its line, so an order that needs two stages side
# by side is forced by hand-offs, not by timing.
MAKEFILE = """\
ok-%:
\t@echo "stage $@ ran"; echo "$@" >> order
waitfor.%:
\t@for i in $$(seq 600); do grep -qx "$(word 2,$(subst ., ,$@))" order 2> /dev/null && break; sleep 0.1; done; \\
\t  echo "$@" >> order
fail-%:
\t@echo "stage $@ breaks"; exit 3
nap-%:
\t@sleep 1; echo "$@" >> order
hang-%:
\t@trap 'echo "$@ got TERM" >> order; exit 143' TERM; echo "$@" >> order; sleep 60 & wait
"""


def run(tmp_path, *args):
    (tmp_path / "Makefile").write_text(MAKEFILE)
    return subprocess.run([sys.executable, str(STAGES), "--logs", str(tmp_path / "logs"), *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


def order(tmp_path):
    return (tmp_path / "order").read_text().splitlines()


def test_every_stage_runs_its_log_is_printed_whole_and_the_table_lists_each(tmp_path):
    out = run(tmp_path, "--background", "ok-b1 ok-b2", "--quiet", "ok-q1", "--measured", "ok-m1 ok-m2",
              "--done", "prepare=12")
    assert out.returncode == 0, out.stdout + out.stderr
    for stage in ("ok-b1", "ok-b2", "ok-q1", "ok-m1", "ok-m2"):
        assert f"stage {stage} ran" in out.stdout
        assert f"===== {stage}: passed in" in out.stdout
        assert (tmp_path / "logs" / f"{stage}.log").read_text() == f"stage {stage} ran\n"
    table = out.stdout.split("stage times")[1]
    assert "prepare" in table and "0:12" in table
    # the measured stages come after both lines of phase 1, in their order
    assert order(tmp_path)[-2:] == ["ok-m1", "ok-m2"]
    assert set(order(tmp_path)[:3]) == {"ok-b1", "ok-b2", "ok-q1"}


def test_phase_one_runs_its_two_lines_side_by_side(tmp_path):
    # the background stage can only end after the quiet one has run: side by side, or a 60 s wait
    out = run(tmp_path, "--background", "waitfor.ok-q.b", "--quiet", "ok-q", "--measured", "ok-m")
    assert out.returncode == 0, out.stdout
    assert order(tmp_path) == ["ok-q", "waitfor.ok-q.b", "ok-m"]
    minutes, seconds = out.stdout.split("total (wall)")[1].split()[0].split(":")
    assert int(minutes) * 60 + int(seconds) < 30


def test_jobs_one_runs_everything_in_one_line(tmp_path):
    out = run(tmp_path, "--jobs", "1", "--background", "ok-b", "--quiet", "ok-q", "--measured", "ok-m")
    assert out.returncode == 0, out.stdout
    assert order(tmp_path) == ["ok-b", "ok-q", "ok-m"]


def test_a_failure_stops_the_other_line_with_sigterm_and_nothing_new_starts(tmp_path):
    out = run(tmp_path, "--background", "hang-b ok-b2", "--quiet", "waitfor.hang-b.q fail-q ok-q3", "--measured", "ok-m")
    assert out.returncode == 1
    assert "make test: FAILED in fail-q" in out.stdout
    assert "stage fail-q breaks" in out.stdout
    assert order(tmp_path) == ["hang-b", "waitfor.hang-b.q", "hang-b got TERM"]
    table = out.stdout.split("stage times")[1]
    for stage in ("ok-b2", "ok-q3", "ok-m"):
        assert f"{stage}" in table and "not run" in table.split(stage)[1].splitlines()[0]


def test_a_run_over_its_budget_fails_naming_the_slowest_stage(tmp_path):
    (tmp_path / "Makefile").write_text(MAKEFILE)
    out = run(tmp_path, "--budget-min", "0.005", "--quiet", "nap-q ok-q", "--measured", "ok-m")
    assert out.returncode == 1
    assert "over its 0.005-minute budget" in out.stdout
    assert "slowest: nap-q" in out.stdout


def test_bad_arguments_are_one_line_and_exit_2(tmp_path):
    out = run(tmp_path, "--quiet", "ok-a ok-a")
    assert out.returncode == 2 and "a stage is listed twice: ok-a" in out.stderr
    out = run(tmp_path, "--done", "prepare")
    assert out.returncode != 0 and "--done 'prepare': expected NAME=SECONDS" in out.stderr + out.stdout
    assert "Traceback" not in out.stderr
