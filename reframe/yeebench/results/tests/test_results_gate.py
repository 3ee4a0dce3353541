"""The gate's measuring wrapper (results/gate/cputime.py) and its ReFrame check's wiring."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

GATE = Path(__file__).resolve().parents[4] / "results" / "gate"
CPUTIME = GATE / "cputime.py"


def _run(*argv, env=None):
    return subprocess.run([sys.executable, str(CPUTIME), *argv], capture_output=True, text=True, timeout=60, env=env)


def test_cputime_reports_child_cpu_and_passes_output_through():
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2: pass\nprint('child out')"
    proc = _run(sys.executable, "-c", burn)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "child out"
    info = json.loads(lines[-1])
    assert 0.18 <= info["cpu_seconds"] < 5 and info["exit"] == 0
    assert info["scheduler"] in ("fifo", "other")


def test_cputime_realtime_can_be_turned_off():
    import os
    proc = _run("true", env=dict(os.environ, YEEBENCH_GATE_REALTIME="0"))
    assert json.loads(proc.stdout.splitlines()[-1])["scheduler"] == "other"


def test_cputime_passes_exit_status_and_refuses_bad_commands():
    assert _run("false").returncode == 1
    missing = _run("/nonexistent/program")
    assert missing.returncode == 127 and "cannot run /nonexistent/program" in missing.stderr
    empty = _run()
    assert empty.returncode == 2 and "no command" in empty.stderr


def test_gate_check_declares_directions_for_every_figure():
    source = (GATE / "gate_check.py").read_text()
    for figure in ("cpu_time_s", "loop_time_s", "mcells_per_s"):
        assert f"def {figure}(self)" in source and f'"{figure}":' in source


@pytest.mark.skipif(not any(Path(p, "cc").exists() for p in ("/usr/bin", "/usr/local/bin")), reason="no C compiler")
def test_fallback_stencil_builds_and_reports(tmp_path):
    binary = tmp_path / "stencil"
    subprocess.run(["cc", "-O2", "-o", str(binary), str(GATE / "stencil.c")], check=True)
    out = subprocess.run([str(binary), "--n", "16", "--steps", "20"], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["valid"] is True and report["cells"] == 16 ** 3 and report["steps"] == 20
    bad = subprocess.run([str(binary), "--n", "2"], capture_output=True, text=True)
    assert bad.returncode == 2 and "stencil: error" in bad.stderr


def test_readme_benchmark_slows_yee_by_a_build_option_that_leaves_the_fields_alone(tmp_path):
    import importlib.util
    prefix = GATE.parents[1] / "build" / "install"
    if not (prefix / "bin" / "yee").exists():
        pytest.skip(f"no yee in {prefix} (make build-solver)")
    spec = importlib.util.spec_from_file_location("readme_benchmark", GATE / "readme_benchmark.py")
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    slowed = benchmark.slow_prefix(prefix, tmp_path, 20)
    reports = {}
    for name, binary in (("normal", prefix / "bin" / "yee"), ("slowed", slowed / "bin" / "yee")):
        report = tmp_path / f"{name}.json"
        proc = subprocess.run([str(binary), "--n", "24", "--steps", "20", "--threads", "1", "--quiet",
                               "--report", str(report)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        reports[name] = json.loads(report.read_text())
    assert reports["slowed"]["build"]["injected_slowdown_percent"] == 20
    assert "injected_slowdown_percent" not in reports["normal"]["build"]     # a normal build says nothing
    assert reports["slowed"]["checksum"] == reports["normal"]["checksum"]
    assert (slowed / "bin" / "numa-bw").resolve() == (prefix / "bin" / "numa-bw").resolve()


def _false_alarm():
    import importlib.util
    spec = importlib.util.spec_from_file_location("false_alarm", GATE / "false_alarm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _result(metric, verdict, change):
    return {"check": "GateSolverRun", "parameters": "nx=32", "metric": metric, "verdict": verdict, "change": change}


def test_a_false_alarm_is_noise_only_where_a_third_run_of_the_same_code_agrees():
    fa = _false_alarm()
    slow = fa.flagged([_result("loop_time_s", "regressed", 0.056), _result("cpu_time_s", "unchanged", 0.01),
                       _result("mcells_per_s", "missing", None)])
    assert slow == {"GateSolverRun nx=32 loop_time_s": 0.056}
    assert fa.judge({}, slow, slow)[0] == "pass"                  # A vs B decides when it flags nothing
    outcome, reason = fa.judge(slow, {}, slow)                     # B was the disturbed run
    assert outcome == "noise" and "A vs C agree" in reason and "+5.6%" in reason
    assert fa.judge(slow, slow, {})[0] == "noise"                  # the load changed after A
    outcome, reason = fa.judge(slow, slow, {"GateSolverRun nx=32 loop_time_s": -0.07})
    assert outcome == "fail" and "every pair" in reason            # equal code called different everywhere
