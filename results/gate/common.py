"""Helpers shared by the gate's CI step and its detection benchmark: find or build
the workload binary, record one ReFrame run of the gate check and ingest it."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECK = Path(__file__).resolve().parent / "gate_check.py"
STENCIL_SRC = Path(__file__).resolve().parent / "stencil.c"


def find_workload(build_dir):
    """yee from $YEEBENCH_PREFIX/bin, build/install/bin or PATH; else compile the stencil fallback."""
    candidates = [Path(p) / "bin" / "yee" for p in (os.environ.get("YEEBENCH_PREFIX"), os.environ.get("PREFIX"),
                                                   REPO / "build" / "install") if p]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    on_path = shutil.which("yee")
    if on_path:
        return on_path
    build_dir = Path(build_dir).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    target = build_dir / "stencil"
    if not target.exists() or target.stat().st_mtime < STENCIL_SRC.stat().st_mtime:
        cc = os.environ.get("CC", "cc")
        subprocess.run([cc, "-O2", "-o", str(target), str(STENCIL_SRC)], check=True)
    return str(target)


def _builtin_config_env():
    """ReFrame's built-in 'generic' system: the gate runs locally, whatever site config is set."""
    env = dict(os.environ)
    env.pop("RFM_CONFIG_FILES", None)
    env.pop("RFM_CONFIG_PATH", None)
    return env


def _remove_session_logs(report):
    """ReFrame's built-in config leaves one /tmp/rfm-*.log per session; the report keeps what matters."""
    try:
        logs = json.loads(Path(report).read_text())["session_info"].get("log_files", [])
    except (OSError, ValueError, KeyError):
        return
    for log in logs:
        if Path(log).name.startswith("rfm-") and Path(log).parent == Path(tempfile.gettempdir()):
            Path(log).unlink(missing_ok=True)


def record_run(binary, repeats, results_dir, extra_work=0.0, nx=None, base_steps=None, workdir=None):
    """Run the gate check `repeats` times in one ReFrame session (serially) and ingest it.

    Returns the run directory. Serial execution matters: ReFrame's default
    asynchronous policy would run the repeats side by side on the same cores.
    """
    reframe = str(Path(sys.executable).parent / "reframe")
    with tempfile.TemporaryDirectory(prefix="gate-", dir=workdir) as tmp:
        report = Path(tmp) / "report.json"
        argv = [reframe, "-c", str(CHECK), "-r", "--exec-policy=serial", f"--repeat={repeats}",
                "--prefix", tmp, "--report-file", str(report), "-S", f"GateSolverRun.binary={binary}",
                "-S", f"GateSolverRun.extra_work={extra_work}"]
        if nx:
            argv += ["-S", f"GateSolverRun.nx={nx}"]
        if base_steps:
            argv += ["-S", f"GateSolverRun.base_steps={base_steps}"]
        done = subprocess.run(argv, capture_output=True, text=True, env=_builtin_config_env())
        if done.returncode != 0:
            sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
            raise RuntimeError(f"gate check failed (reframe exit {done.returncode})")
        _remove_session_logs(report)
        ingest = subprocess.run([str(Path(sys.executable).parent / "yeebench"), "results", "ingest", str(report),
                                 "--results-dir", str(results_dir)], capture_output=True, text=True)
        if ingest.returncode != 0:
            raise RuntimeError(f"ingest failed: {ingest.stderr.strip()}")
        return ingest.stdout.strip().splitlines()[-1]
