"""Tests of .ci/stages.py, the stage runner of `make test`, on a stand-in Makefile."""
import importlib.util
import subprocess
import sys
import time
from pathlib import Path

STAGES = Path(__file__).resolve().parent / "stages.py"
spec = importlib.util.spec_from_file_location("stages", STAGES)
stages = importlib.util.module_from_spec(spec)
spec.loader.exec_module(stages)

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


def table(out):
    return out.stdout.split("stage times")[1]


def test_every_stage_runs_its_log_is_printed_whole_and_the_table_lists_each(tmp_path):
    out = run(tmp_path, "--shared", "ok-b1 ok-b2 ok-q1", "--measured", "ok-m1 ok-m2", "--done", "prepare=12")
    assert out.returncode == 0, out.stdout + out.stderr
    for stage in ("ok-b1", "ok-b2", "ok-q1", "ok-m1", "ok-m2"):
        assert f"stage {stage} ran" in out.stdout
        assert f"===== {stage}: passed in" in out.stdout
        assert (tmp_path / "logs" / f"{stage}.log").read_text() == f"stage {stage} ran\n"
    assert "prepare" in table(out) and "0:12" in table(out)
    # the measured stages come after every shared one, in their order
    assert order(tmp_path)[-2:] == ["ok-m1", "ok-m2"]
    assert set(order(tmp_path)[:3]) == {"ok-b1", "ok-b2", "ok-q1"}


def test_shared_stages_run_side_by_side(tmp_path):
    # the first stage can only end after the second has run: side by side, or a 60 s wait
    out = run(tmp_path, "--shared", "waitfor.ok-q.b ok-q", "--measured", "ok-m")
    assert out.returncode == 0, out.stdout
    assert order(tmp_path) == ["ok-q", "waitfor.ok-q.b", "ok-m"]
    minutes, seconds = table(out).split("total (wall)")[1].split()[0].split(":")
    assert int(minutes) * 60 + int(seconds) < 30


def test_jobs_one_runs_everything_in_one_line_in_order(tmp_path):
    out = run(tmp_path, "--jobs", "1", "--shared", "ok-b ok-q", "--measured", "ok-m")
    assert out.returncode == 0, out.stdout
    assert order(tmp_path) == ["ok-b", "ok-q", "ok-m"]


def test_a_stage_waits_for_what_it_is_after_and_a_free_worker_takes_the_next(tmp_path):
    # ok-c is after nap-a: the second worker skips it and runs ok-d first
    out = run(tmp_path, "--shared", "nap-a ok-c ok-d", "--after", "ok-c:nap-a", "--measured", "")
    assert out.returncode == 0, out.stdout
    assert order(tmp_path) == ["ok-d", "nap-a", "ok-c"]


def test_stages_holding_one_resource_never_run_at_once(tmp_path):
    out = run(tmp_path, "--shared", "nap-a nap-b ok-c", "--holds", "vcluster:nap-a,nap-b", "--measured", "")
    assert out.returncode == 0, out.stdout
    assert order(tmp_path) == ["ok-c", "nap-a", "nap-b"]


def test_a_failure_stops_the_other_worker_with_sigterm_and_nothing_new_starts(tmp_path):
    out = run(tmp_path, "--shared", "hang-b waitfor.hang-b.q fail-q ok-q3 ok-b2",
              "--after", "fail-q:waitfor.hang-b.q", "--measured", "ok-m")
    assert out.returncode == 1
    assert "make test: FAILED in fail-q" in out.stdout
    assert "stage fail-q breaks" in out.stdout
    assert order(tmp_path) == ["hang-b", "waitfor.hang-b.q", "hang-b got TERM"]
    for stage in ("ok-b2", "ok-q3", "ok-m"):
        assert "not run" in table(out).split(stage)[1].splitlines()[0]


def test_a_dependency_on_a_failed_stage_is_not_run(tmp_path):
    out = run(tmp_path, "--jobs", "1", "--shared", "fail-a ok-b", "--after", "ok-b:fail-a", "--measured", "")
    assert out.returncode == 1
    assert not (tmp_path / "order").exists()


def test_a_run_over_its_budget_fails_naming_the_slowest_stage(tmp_path):
    out = run(tmp_path, "--budget-min", "0.005", "--shared", "nap-q ok-q", "--measured", "ok-m")
    assert out.returncode == 1
    assert "over its 0.005-minute budget" in out.stdout
    assert "slowest: nap-q" in out.stdout


def test_bad_arguments_are_one_line_and_exit_2(tmp_path):
    cases = [(["--shared", "ok-a ok-a"], "a stage is listed twice: ok-a"),
             (["--done", "prepare"], "--done 'prepare': expected NAME=SECONDS"),
             (["--shared", "ok-a", "--after", "ok-a:ok-typo"], "not a stage of this run: ok-typo"),
             (["--shared", "ok-a", "--after", "ok-a"], "expected NAME:NAME[,NAME]"),
             (["--shared", "ok-a", "--measured", "ok-m", "--after", "ok-a:ok-m"], "cannot wait for a measured one"),
             (["--measured", "ok-m ok-n", "--after", "ok-m:ok-n"], "comes after it in --measured"),
             (["--shared", "ok-a", "--holds", "docker:ok-z"], "--holds: not a stage of this run: ok-z"),
             (["--jobs", "0"], "--jobs must be 1 or more")]
    for argv, message in cases:
        out = run(tmp_path, *argv)
        assert out.returncode == 2, (argv, out.stdout, out.stderr)
        assert message in out.stderr, (argv, out.stderr)
        assert "Traceback" not in out.stderr


def test_an_after_cycle_is_reported_not_a_hang(tmp_path):
    out = run(tmp_path, "--shared", "ok-a ok-b", "--after", "ok-a:ok-b ok-b:ok-a", "--measured", "")
    assert out.returncode == 1
    assert "no stage can start: ok-a ok-b" in out.stdout


def test_the_plan_picks_the_first_stage_that_may_start():
    plan = stages.Plan(["a", "b", "c", "d"], [], {"b": {"a"}}, {"a": {"docker"}, "c": {"docker"}})
    assert plan.next_shared({}) == "a"
    plan.started.add("a")
    assert plan.next_shared({"a": None}) == "d"     # b waits for a, c needs docker which a holds
    plan.passed.add("a")
    assert plan.next_shared({}) == "b"


def test_keep_going_runs_every_stage_whose_prerequisites_passed(tmp_path):
    out = run(tmp_path, "--keep-going", "--jobs", "1", "--shared", "fail-a ok-b ok-c",
              "--after", "ok-c:fail-a", "--measured", "ok-m fail-n")
    assert out.returncode == 1
    assert order(tmp_path) == ["ok-b", "ok-m"]
    assert "make test: FAILED in fail-a fail-n" in out.stdout
    assert "not run" in table(out).split("ok-c")[1].splitlines()[0]


def test_sigterm_reaches_the_running_stages(tmp_path):
    (tmp_path / "Makefile").write_text(MAKEFILE)
    proc = subprocess.Popen([sys.executable, str(STAGES), "--logs", str(tmp_path / "logs"), "--shared", "hang-a",
                             "--measured", "ok-m"], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    for _ in range(600):
        if (tmp_path / "order").exists():
            break
        time.sleep(0.1)
    proc.terminate()
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert order(tmp_path) == ["hang-a", "hang-a got TERM"]
    assert "FAILED in interrupted" in out


def test_the_makefiles_plan_runs_every_stage_once_longest_quiet_stages_first():
    repo = STAGES.parents[1]
    plan = subprocess.run(["make", "-s", "--no-print-directory", "test-plan"], cwd=repo, capture_output=True,
                          text=True, timeout=60)
    assert plan.returncode == 0, plan.stderr
    lines = plan.stdout.splitlines()
    shared = next(line for line in lines if line.startswith("phase 1")).split(": ", 1)[1].split()
    measured = next(line for line in lines if line.startswith("phase 2")).split(": ", 1)[1].split()
    targets = subprocess.run(["make", "-s", "--no-print-directory", "-pn", "test-plan"], cwd=repo,
                             capture_output=True, text=True, timeout=60).stdout
    declared = set()
    for name in ("TEST_TARGETS", "TEST_BACKGROUND", "TEST_QUIET"):
        declared.update(next(line for line in targets.splitlines() if line.startswith(f"{name} :=")).split(":=", 1)[1].split())
    assert len(shared + measured) == len(set(shared + measured)), (shared, measured)
    assert set(shared + measured) == declared, (sorted(declared - set(shared + measured)), sorted(set(shared + measured) - declared))
    long_first = [s for s in ("test-solver", "test-package") if s in shared]
    short = [s for s in ("lint", "test-microbench", "test-scale") if s in shared]
    assert all(shared.index(a) < shared.index(b) for a in long_first for b in short), shared
