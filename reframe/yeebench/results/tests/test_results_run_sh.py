"""reframe/run.sh (`make run`) prints only paths that exist, with a stand-in ReFrame."""
import os
import re
import subprocess
import sys
from pathlib import Path

from results_testutil import REPORT_A

REPO = Path(__file__).resolve().parents[4]
RUN_SH = REPO / "reframe" / "run.sh"


def _fake_venv(tmp_path, writes_report):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    body = '[ -n "${PREFIX_SEEN:-}" ] && echo "$YEEBENCH_PREFIX" > "$PREFIX_SEEN"\n' + ('for a in "$@"; do [ "$prev" = --report-file ] && cp "$REPORT_SRC" "$a"; prev=$a; done\n'
            if writes_report else "") + "exit 0\n"
    reframe = venv / "bin" / "reframe"
    reframe.write_text("#!/bin/sh\n" + body)
    yeebench = venv / "bin" / "yeebench"
    yeebench.write_text(f"#!/bin/sh\nexec {sys.executable} -m yeebench \"$@\"\n")
    for f in (reframe, yeebench):
        f.chmod(0o755)
    return venv


def _run(tmp_path, writes_report):
    env = dict(os.environ, VENV=str(_fake_venv(tmp_path, writes_report)), YEEBENCH_RFM_DIR=str(tmp_path / "rfm"),
               RESULTS_DIR=str(tmp_path / "results"), REPORT_SRC=str(REPORT_A), PREFIX=str(tmp_path / "prefix"))
    return subprocess.run(["bash", str(RUN_SH)], capture_output=True, text=True, env=env, timeout=300)


def _printed_paths(stdout):
    section = stdout.split("run: where everything is", 1)[1]
    return [Path(m.group(1)) for m in re.finditer(r"^  \S.*?\s{2,}(/\S+)$", section, re.M)]


def test_no_report_means_no_report_path(tmp_path):
    proc = _run(tmp_path, writes_report=False)
    assert "ReFrame wrote no report" in proc.stderr
    assert "ReFrame report" not in proc.stdout and "HTML report" not in proc.stdout
    assert all(p.exists() for p in _printed_paths(proc.stdout))


def test_every_printed_path_exists(tmp_path):
    log = tmp_path / "rfm" / "reframe.log"   # as ReFrame leaves it
    log.parent.mkdir(parents=True)
    log.write_text("[2026-01-01T00:00:00] info: reframe: ran\n")
    proc = _run(tmp_path, writes_report=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    paths = _printed_paths(proc.stdout)
    assert "results run" in proc.stdout and "HTML report" in proc.stdout
    assert paths and all(p.exists() for p in paths), paths
    # the run's plausibility warnings reach the ReFrame log (the fixture's pt2pt repeats swing x20)
    assert "warning: ingest: plausibility warning: FixturePt2pt" in log.read_text()


def test_a_relative_prefix_is_the_callers_folder(tmp_path):
    # the checks' build jobs look for $YEEBENCH_PREFIX/bin/yee from their stage directories
    env = dict(os.environ, VENV=str(_fake_venv(tmp_path, False)), YEEBENCH_RFM_DIR="rfm", RESULTS_DIR="results",
               PREFIX="prefix", PREFIX_SEEN=str(tmp_path / "seen"))
    subprocess.run(["bash", str(RUN_SH)], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert (tmp_path / "seen").read_text().strip() == str(tmp_path / "prefix")
    assert (tmp_path / "rfm" / "reports").is_dir() and not (REPO / "rfm").exists()
