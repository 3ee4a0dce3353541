"""The CI smoke run of the multi-node path: up, ReFrame through Slurm, ingest, verify, always down.

    yeebench vcluster smoke --nodes 2 --link-rate 1gbit --out build/vcluster-smoke
"""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Optional

from . import cluster, coverage, preflight, relaunch, verify
from .layout import make_layout

REPO_ROOT = Path(__file__).resolve().parents[3]
OWN_CHECK = "reframe/yeebench/checks/pt2pt/vcluster_pt2pt.py"
SUITE_PT2PT = "reframe/yeebench/checks/pt2pt/pt2pt.py"
# The suite's own NetPIPE and OSU pairs (run unchanged; the OSU ones skip, with the reason, where
# OSU is not found).  NetPIPE repeats are fixed so a 4 MiB sweep stays short; OSU stops at 1 MiB
# (bw_large: the best of 256 KiB-1 MiB, each a 64-message window far beyond the link's 64 KiB
# token bucket) with 20 windows per size, so a shaped 1 Gbit/s osu_bw takes seconds, not minutes;
# osu_latency gets 200 round trips per size.
SUITE_SELECTION = ["NetPIPEPt2Pt%transport=ob1-vader%locality=intra",
                   "NetPIPEPt2Pt%transport=ob1-tcp%locality=inter"] + [
    f"OsuPt2Pt%transport={transport}%locality={locality}%benchmark={benchmark}%buffers=host"
    for transport, locality in (("ob1-vader", "intra"), ("ob1-tcp", "inter"))
    for benchmark in ("osu_latency", "osu_bw")]
SUITE_SETTINGS = ["NetPIPEPt2Pt.repeats=10", "OsuPt2Pt.max_size=1048576",
                  "OsuPt2Pt.iterations_for=osu_latency:200,osu_bw:20"]
# The papers' comparisons across nodes (paper 000 Figs. 6, 7 and 12 on all of the partition's nodes,
# paper 002 Fig. 3, paper 004's collective over node counts), at a size that keeps each a few seconds on
# shared virtual nodes: they show the like-for-like pipeline across nodes, not the papers' speeds
# (reframe/papers/). On 5 nodes or more the node curves reach counts that are not powers of two and
# Fig. 12's baseline of 4 nodes is measured. The binding and NUMA sweeps skip on a partition that declares
# no CPU binding, and the OSU collective where OSU is not found, each with the reason.
PAPER_CHECKS = ("reframe/yeebench/checks/binding/binding_sweep.py", "reframe/yeebench/checks/numa/numa_sweep.py",
                "reframe/yeebench/checks/fdtd/node_scaling.py", "reframe/yeebench/checks/fdtd/fdtd_messages.py",
                "reframe/yeebench/checks/collectives/osu_node_curve.py")
PAPER_SWEEPS = ("FdtdBindingSweep", "FdtdNumaSweep", "FdtdNodeScaling", "FdtdPackingSweep")
PAPER_SELECTION = ["FdtdBindingSweep", "FdtdNumaSweep%placement=per-socket", "FdtdNodeScaling",
                   "FdtdPackingSweep%ranks=2", "FdtdMessageStats%ranks=2", "OsuCollectiveNodeCurve%case=allreduce:han"]
PAPER_SETTINGS = [f"{check}.{var}" for check in PAPER_SWEEPS
                  for var in ("grid=48", "steps=100", "rounds=1")] + ["FdtdMessageStats.steps=50"] + [
    f"OsuCollectiveNodeCurve.{var}" for var in ("max_size=4096", "iterations=50", "warmup=5", "rounds=1")]
SKIPPED = 0
# Runs of a check again when its comparisons failed the way a busy machine fails them (verify.noise_suspects);
# each figure is then the best of its runs.
RETRIES = 2


def _papers_here() -> bool:
    """The papers' multi-node checks ship with this tree (a trimmed copy may lack them)."""
    return all((REPO_ROOT / f).exists() for f in PAPER_CHECKS)


def _tool(name: str) -> str:
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.path.exists(beside) else (shutil.which(name) or name)


def relaunch_command(out_dir: str, partition: str, selections: List[str], report: str) -> List[str]:
    """ReFrame on `partition` ("system:partition") for exactly the cases `selections` (-n), with the
    smoke run's check files and settings, into `report`."""
    cmd = [_tool("reframe"), "-C", str(REPO_ROOT / "reframe/config/settings.py"), "-c", str(REPO_ROOT / OWN_CHECK)]
    for path in (SUITE_PT2PT, *PAPER_CHECKS):
        if (REPO_ROOT / path).exists():
            cmd += ["-c", str(REPO_ROOT / path)]
    for setting in SUITE_SETTINGS + PAPER_SETTINGS:
        cmd += ["-S", setting]
    for name in selections:
        cmd += ["-n", name]
    return cmd + ["--system", partition, "-p", "host", "--exec-policy=serial", "-r",
                  "--report-file", os.path.join(out_dir, report)]


def reframe_command(out_dir: str, partitions: str, with_suite: bool, only: Optional[List[str]] = None,
                    report: str = "report.json") -> List[str]:
    """The smoke run's ReFrame command; `only`: just these pt2pt checks again (a rerun), into `report`."""
    cmd = [_tool("reframe"), "-C", str(REPO_ROOT / "reframe/config/settings.py")]
    if only is None or "VclusterNetPIPE" in only:
        cmd += ["-c", str(REPO_ROOT / OWN_CHECK), "-n", "^VclusterNetPIPE"]
    suite = [name for name in SUITE_SELECTION if only is None or name.split("%")[0] in only]
    if with_suite and suite and (REPO_ROOT / SUITE_PT2PT).exists():
        cmd += ["-c", str(REPO_ROOT / SUITE_PT2PT)]
        for name in suite:
            cmd += ["-n", name]
        for setting in SUITE_SETTINGS:
            cmd += ["-S", setting]
    if with_suite and only is None and _papers_here():
        for path in PAPER_CHECKS:
            cmd += ["-c", str(REPO_ROOT / path)]
        for name in PAPER_SELECTION:
            cmd += ["-n", name]
        for setting in PAPER_SETTINGS:
            cmd += ["-S", setting]
    return cmd + ["--system", partitions, "-p", "host", "--exec-policy=serial", "-r",
                  "--report-file", os.path.join(out_dir, report)]


def ingest(report: str, results_dir: str) -> Optional[str]:
    """Run directory from `yeebench results ingest`, or None when that tool is not installed."""
    try:
        import yeebench.results.cli  # noqa: F401  (present only with the results tooling)
    except ImportError:
        return None
    proc = subprocess.run([sys.executable, "-m", "yeebench", "results", "ingest", report,
                           "--results-dir", results_dir], stdout=subprocess.PIPE, text=True)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"yeebench results ingest {report} failed (exit {proc.returncode})")
    return lines[-1]


def run_smoke(nodes: int, link_rate: str, out_dir: str, partitions: str, with_suite: bool,
              tolerance: float, state_dir: str, skip_unsupported: bool) -> int:
    out_dir = os.path.abspath(out_dir)
    layout = make_layout(nodes, None, link_rate, cluster.host_cpus(), state_dir=state_dir)
    reason = preflight.check(shaping=layout.link_rate_bps is not None)
    if reason and layout.link_rate_bps is not None and preflight.check(shaping=False) is None:
        # Namespaces work but links cannot be shaped: keep the Slurm path and the locality check.
        print(f"vcluster smoke: link-rate check SKIPPED, links left unshaped: {reason}")
        layout = make_layout(nodes, None, "none", cluster.host_cpus(), state_dir=state_dir)
        reason = None
    if reason:
        print(f"vcluster smoke: SKIPPED: this machine cannot host the virtual cluster: {reason}")
        return SKIPPED if skip_unsupported else 2
    _clear_outputs(out_dir)
    timings, rc = {}, 1
    try:
        timings["up"] = cluster.up(layout)
    except cluster.AlreadyUp as err:     # someone else's cluster: never tear it down from here
        print(f"vcluster smoke: {err}")
        return 1
    except cluster.ClusterError as err:  # up already removed what it had started
        print(f"vcluster smoke: cluster did not come up: {err}")
        return 1
    previous_sigterm = signal.signal(signal.SIGTERM, _terminate)   # so `finally` runs on kill
    try:
        print(f"vcluster smoke: {nodes} nodes up in {timings['up']:.1f} s")
        env = dict(os.environ, YEEBENCH_RFM_DIR=os.path.join(out_dir, "reframe"),
                   YEEBENCH_VCLUSTER_DIR=layout.state_dir)
        t0 = time.monotonic()

        def run_reframe(command, name, rfm_dir=None):
            run_env = dict(env, SLURM_CONF=layout.slurm_conf)
            if rfm_dir:   # its own stage and output folders: a relaunch keeps the first run's stage
                run_env["YEEBENCH_RFM_DIR"] = rfm_dir
            with open(os.path.join(out_dir, name), "w") as log:
                return subprocess.call(cluster.head_command(layout, command), env=run_env,
                                       stdout=log, stderr=subprocess.STDOUT, cwd=str(REPO_ROOT))
        rfm_rc = run_reframe(reframe_command(out_dir, partitions, with_suite), "reframe.out")
        timings["reframe"] = time.monotonic() - t0
        _print_reframe_summary(os.path.join(out_dir, "reframe.out"))
        report = os.path.join(out_dir, "report.json")
        if not os.path.exists(report):
            print(f"vcluster smoke: ReFrame wrote no report (see {out_dir}/reframe.out)")
            return 1
        reports = [report] + _relaunch_tcp_start_up_failures(report, out_dir, run_reframe)
        rows = []
        try:
            for path in reports:
                rows += _rows_of(path, out_dir)
            ok, lines = verify.verify(rows, layout.link_rate_bps, tolerance)
            for attempt in range(1, RETRIES + 1):
                suspects = [] if ok else verify.noise_suspects(rows, layout.link_rate_bps, tolerance)
                if not suspects:
                    break
                print("\n".join(lines))
                print(f"vcluster smoke: {', '.join(suspects)} failed only as a busy machine fails them (a slower "
                      f"side): measuring again ({attempt} of {RETRIES}); each figure is the best of its runs")
                again = f"report-retry{attempt}.json"
                run_reframe(reframe_command(out_dir, partitions, with_suite, suspects, again), f"reframe-retry{attempt}.out")
                if os.path.exists(os.path.join(out_dir, again)):
                    rows += _rows_of(os.path.join(out_dir, again), out_dir)
                ok, lines = verify.verify(rows, layout.link_rate_bps, tolerance)
        except (RuntimeError, verify.VerifyError) as err:
            print(f"vcluster smoke: {err}")
            return 1
        print("\n".join(lines))
        if with_suite and _papers_here():
            covered, cover_lines = coverage.check(reports, nodes)
            print("\n".join(cover_lines))
            ok = ok and covered
        if rfm_rc != 0 and len(reports) > 1 and relaunch.cleared(report, reports[1:]):
            print("vcluster smoke: every failed case passed when launched again")
            rfm_rc = 0
        if rfm_rc != 0:
            print(f"vcluster smoke: ReFrame exit status {rfm_rc} (a check failed; see {out_dir}/reframe.out)")
        rc = 0 if ok and rfm_rc == 0 else 1
        return rc
    finally:
        timings["down"] = cluster.down(layout.state_dir, log=lambda *_: None)
        signal.signal(signal.SIGTERM, previous_sigterm)
        print(f"vcluster smoke: {'PASSED' if rc == 0 else 'FAILED'}; up {timings.get('up', 0):.1f} s, "
              f"ReFrame {timings.get('reframe', 0):.1f} s, down {timings['down']:.1f} s")


OUTPUTS = ("report.json", "reframe.out", "reframe", "results") + tuple(
    name for k in range(1, RETRIES + 1) for name in (f"report-retry{k}.json", f"reframe-retry{k}.out")) + tuple(
    name for k in range(1, 9) for name in (f"report-relaunch{k}.json", f"reframe-relaunch{k}.out",
                                           f"reframe-relaunch{k}"))


def _relaunch_tcp_start_up_failures(report: str, out_dir: str, run_reframe) -> List[str]:
    """Launch once more the failed cases whose job hit Open MPI's TCP start-up failure (relaunch.py), one
    ReFrame run per partition (at most 8); returns the relaunch reports written."""
    written = []
    for k, (partition, selections) in enumerate(sorted(relaunch.tcp_start_up_failures(report, out_dir).items())[:8], 1):
        print(f"vcluster smoke: {', '.join(selections)} on {partition}: the job failed at Open MPI's TCP start-up "
              f"(\"{relaunch.TCP_CONNECT_FAILED}\": ranks on oversubscribed virtual nodes missed each other): "
              f"launching once more; the first run stays in {os.path.basename(report)}")
        name = f"report-relaunch{k}.json"
        run_reframe(relaunch_command(out_dir, partition, selections, name), f"reframe-relaunch{k}.out",
                    os.path.join(out_dir, f"reframe-relaunch{k}"))
        if os.path.exists(os.path.join(out_dir, name)):
            written.append(os.path.join(out_dir, name))
    return written


def _rows_of(report: str, out_dir: str) -> List[verify.Row]:
    """The verify rows of one ReFrame report, ingested into the smoke run's results where the tool exists."""
    run_dir = ingest(report, os.path.join(out_dir, "results"))
    print(f"vcluster smoke: results of {os.path.basename(report)} "
          f"{'ingested into ' + run_dir if run_dir else 'read from the report'}")
    return verify.load_rows(run_dir or report)


def _clear_outputs(out_dir: str) -> None:
    """Remove the previous run's outputs only: --out may name a directory holding other things."""
    os.makedirs(out_dir, exist_ok=True)
    for name in OUTPUTS:
        path = os.path.join(out_dir, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)


def _terminate(signum, frame):
    raise KeyboardInterrupt


def _print_reframe_summary(path: str) -> None:
    with open(path, errors="replace") as f:
        for line in f:
            clean = line.replace("\x1b[32m", "").replace("\x1b[31m", "").replace("\x1b[33m", "") \
                .replace("\x1b[0m", "").rstrip()
            if any(tag in clean for tag in ("[       OK ]", "[     FAIL ]", "[     SKIP ]", "PASSED ]",
                                            "FAILED ]", "      OK", "FAIL ", "SKIP ", "P: ")):
                print("  " + clean.strip())
