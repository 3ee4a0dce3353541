"""Command-line errors are one line and exit 2; nothing here touches the machine's network."""
import subprocess
import sys

import pytest

from yeebench.cli import main


def run_cli(*argv):
    proc = subprocess.run([sys.executable, "-m", "yeebench", "vcluster", *argv],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("argv,needle", [
    (["up", "--nodes", "0"], "must be at least 1"),
    (["up", "--nodes", "two"], "not an integer"),
    (["up", "--cpus-per-node", "0"], "must be at least 1"),
    (["up", "--link-rate", "fast"], "bad --link-rate 'fast'"),
    (["up", "--nodes", "65"], "--nodes must be between 1 and 64"),
    (["smoke", "--link-rate", "1gb"], "bad --link-rate '1gb'"),
    (["verify", "/nonexistent/run"], "cannot read results"),
    (["verify", "x", "--tolerance", "2"], "--tolerance must be between 0 and 1"),
])
def test_bad_arguments_exit_2_with_one_line(argv, needle, tmp_path):
    rc, out, err = run_cli(*argv, "--state-dir", str(tmp_path / "state"))
    assert rc == 2
    assert needle in err.strip().splitlines()[-1]   # the error is one line (argparse puts usage above)
    assert "Traceback" not in err


def test_exec_needs_a_command(tmp_path):
    rc, _, err = run_cli("exec", "--state-dir", str(tmp_path))
    assert rc == 2 and "exec needs a command" in err


def test_exec_without_a_cluster_says_so(tmp_path):
    rc, _, err = run_cli("exec", "--state-dir", str(tmp_path), "--", "true")
    assert rc == 2 and "no virtual cluster is up" in err


def test_status_of_no_cluster_is_down_and_nonzero(tmp_path):
    rc, out, _ = run_cli("status", "--state-dir", str(tmp_path))
    assert rc == 1 and out.startswith("vcluster: down")


def test_vcluster_without_action_prints_help(capsys):
    assert main(["vcluster"]) == 2
    assert "up" in capsys.readouterr().out


def test_help_lists_every_action():
    rc, out, _ = run_cli("--help")
    assert rc == 0
    for action in ("up", "down", "status", "exec", "smoke", "verify", "preflight"):
        assert action in out


def test_smoke_runs_the_papers_multi_node_comparisons_small():
    from yeebench.vcluster import smoke
    cmd = smoke.reframe_command("/tmp/out", "vcluster", with_suite=True)
    for path in smoke.PAPER_CHECKS:
        assert cmd[cmd.index(str(smoke.REPO_ROOT / path)) - 1] == "-c"
    names = [cmd[i + 1] for i, word in enumerate(cmd) if word == "-n"]
    assert {"FdtdBindingSweep", "FdtdNumaSweep%placement=per-socket", "FdtdNodeScaling",
            "FdtdPackingSweep%ranks=2", "OsuCollectiveNodeCurve%case=allreduce:han", "^VclusterNetPIPE"} <= set(names)
    assert "OsuCollectiveNodeCurve.rounds=1" in cmd and "OsuCollectiveNodeCurve.max_size=4096" in cmd
    for check in ("FdtdBindingSweep", "FdtdNumaSweep", "FdtdNodeScaling", "FdtdPackingSweep"):
        assert f"{check}.rounds=1" in cmd and f"{check}.grid=48" in cmd
    bare = smoke.reframe_command("/tmp/out", "vcluster", with_suite=False)
    assert not any("fdtd_" in word for word in bare)
