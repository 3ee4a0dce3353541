"""results/export_ci.py (`make test-export`) against a real VictoriaMetrics: a recorded smoke run pushed
in every format and read back equal, the dashboard's queries answered, the database stopped by its PID
when the stage passes, fails, or is sent SIGTERM. Skipped where the victoria-metrics package is missing."""
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from results_testutil import FIXTURES, ingested

REPO = Path(__file__).resolve().parents[4]
SMOKE = FIXTURES / "reports" / "suite_smoke_run.json"

pytestmark = pytest.mark.skipif(shutil.which("victoria-metrics") is None,
                                reason="victoria-metrics not installed (Debian package victoria-metrics)")


def _export_ci():
    spec = importlib.util.spec_from_file_location("export_ci", REPO / "results" / "export_ci.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:   # a zombie is gone for this purpose: it holds no port and no data
        with open(f"/proc/{pid}/stat") as fp:
            return fp.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def _vm_pid(text):
    return int(re.search(r"victoria-metrics PID (\d+)", text).group(1))


def test_smoke_run_round_trips_and_the_dashboard_answers(tmp_path, capsys):
    run_dir = ingested(tmp_path, SMOKE)
    rc = _export_ci().main(["--run", str(run_dir), "--out", str(tmp_path / "out")])
    out = capsys.readouterr()
    assert rc == 0, out.err
    summary = json.loads((tmp_path / "out" / "export-ci.json").read_text())
    assert summary["figures"] == 175 and summary["formats"] == ["openmetrics", "vm-jsonl", "influx"]
    assert summary["dashboard_queries"] == 7
    assert "refused as expected (exit 3)" in out.out and "HTTP 400" in out.out
    assert not _alive(_vm_pid(out.out))


def test_a_dashboard_query_without_data_fails_and_still_stops_the_database(tmp_path, capsys):
    dashboard = json.loads((REPO / "results" / "grafana_dashboard.json").read_text())
    dashboard["panels"][0]["targets"][0]["expr"] = 'max(yeebench_figure{check="NoSuchCheck"})'
    path = tmp_path / "dashboard.json"
    path.write_text(json.dumps(dashboard))
    rc = _export_ci().main(["--run", str(ingested(tmp_path, SMOKE)), "--out", str(tmp_path / "out"),
                            "--dashboard", str(path)])
    out = capsys.readouterr()
    assert rc == 1 and "returns no series" in out.err
    assert not _alive(_vm_pid(out.out))


def test_sigterm_stops_the_database(tmp_path):
    proc = subprocess.Popen([sys.executable, str(REPO / "results" / "export_ci.py"), "--run",
                             str(ingested(tmp_path, SMOKE)), "--out", str(tmp_path / "out")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline()
    while line and "victoria-metrics PID" not in line:
        line = proc.stdout.readline()
    pid = _vm_pid(line)
    proc.send_signal(signal.SIGTERM)
    rest = proc.communicate(timeout=60)[0]
    assert proc.returncode == 143, rest
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid) and "stopped" in rest


def test_sigterm_between_the_start_and_its_pid_being_recorded_still_stops_the_database(tmp_path, monkeypatch,
                                                                                       capsys):
    module = _export_ci()
    started = []
    real_popen = module.subprocess.Popen

    def popen_then_signal(argv, **kwargs):   # the signal lands before Popen returns to its caller
        proc = real_popen(argv, **kwargs)
        if "victoria-metrics" in os.path.basename(argv[0]):
            started.append(proc.pid)
            os.kill(os.getpid(), signal.SIGTERM)
        return proc

    run_dir = ingested(tmp_path, SMOKE)
    monkeypatch.setattr(module.subprocess, "Popen", popen_then_signal)
    previous = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as stop:
        module.main(["--run", str(run_dir), "--out", str(tmp_path / "out")])
    assert signal.getsignal(signal.SIGTERM) is previous
    assert stop.value.code == 143 and len(started) == 1
    assert not _alive(started[0]), "the database outlived the SIGTERM"
    assert f"victoria-metrics PID {started[0]} stopped" in capsys.readouterr().out
