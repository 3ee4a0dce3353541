"""One machine, two runs: `up` says whose cluster is up, `down` touches only the cluster it owns."""
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from yeebench.vcluster import cluster, cpusets, daemons, netns, owner, state
from yeebench.vcluster.layout import make_layout


def someone_elses_cluster(tmp_path):
    """A cluster up from another state directory: its state file and its claim on the names."""
    other = tmp_path / "other-run"
    other.mkdir()
    (other / state.STATE_FILE).write_text("{}")
    with open(owner.CLAIM_PATH, "w") as f:
        json.dump({"state_dir": str(other), "pid": 4242, "user": "alice", "cwd": "/home/alice/yeebench",
                   "started": "2026-01-01T00:00:00Z"}, f)
    return other


def test_up_while_another_cluster_is_up_says_whose_it_is(tmp_path, monkeypatch):
    other = someone_elses_cluster(tmp_path)
    monkeypatch.setattr(netns, "existing_namespaces", lambda: ["ybvc-switch", "ybvc-vc0"])
    monkeypatch.setattr(netns, "create", lambda layout: pytest.fail("must not create namespaces"))
    layout = make_layout(1, 1, "none", [0], state_dir=str(tmp_path / "mine"))
    with pytest.raises(cluster.AlreadyUp) as err:
        cluster.up(layout)
    assert str(other) in str(err.value) and "alice" in str(err.value) and "pid 4242" in str(err.value)
    assert f"down --state-dir {other}" in str(err.value)
    assert owner.read()["state_dir"] == str(other)           # the other run's claim is untouched


def test_down_leaves_a_cluster_another_run_started_alone(tmp_path, monkeypatch):
    other = someone_elses_cluster(tmp_path)
    monkeypatch.setattr(netns, "existing_namespaces", lambda: ["ybvc-switch", "ybvc-vc0"])
    touched = []
    monkeypatch.setattr(netns, "delete", touched.append)
    monkeypatch.setattr(netns, "namespace_pids", lambda ns: touched.append(ns) or [])
    monkeypatch.setattr(cpusets, "remove_all", touched.append)
    with pytest.raises(cluster.NotOwner, match="left it alone"):
        cluster.down(str(tmp_path / "mine"), log=lambda *_: None)
    assert touched == [] and (other / state.STATE_FILE).exists() and owner.read()["state_dir"] == str(other)


def test_the_cli_down_says_so_in_one_line_and_fails(tmp_path, monkeypatch, capsys):
    from yeebench.vcluster import cli
    someone_elses_cluster(tmp_path)
    monkeypatch.setattr(netns, "existing_namespaces", lambda: ["ybvc-switch"])
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    args = type("Args", (), {"state_dir": str(tmp_path / "mine")})()
    assert cli.cmd_down(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "started by user alice" in err


def test_a_claim_left_by_a_gone_cluster_is_taken_over(tmp_path, monkeypatch):
    with open(owner.CLAIM_PATH, "w") as f:      # its state directory is gone and its pid is not running
        json.dump({"state_dir": str(tmp_path / "gone"), "pid": 2 ** 22 + 7}, f)
    owner.claim(str(tmp_path / "mine"), stale=cluster._claim_is_stale)
    assert owner.read()["state_dir"] == str(tmp_path / "mine") and owner.read()["pid"] == os.getpid()
    assert owner.owns(str(tmp_path / "mine")) and not owner.owns(str(tmp_path / "gone"))


def _up_after(tmp_path, monkeypatch, other):
    """`up` of another state directory while `other` is claimed; returns what it deleted and said."""
    deleted, said = [], []
    monkeypatch.setattr(netns, "existing_namespaces", lambda: [] if deleted else ["ybvc-switch", "ybvc-vc0"])
    monkeypatch.setattr(netns, "namespace_pids", lambda ns: [])
    monkeypatch.setattr(netns, "delete", deleted.append)
    monkeypatch.setattr(cpusets, "remove_all", lambda parent: None)
    monkeypatch.setattr(cpusets, "detect_root", lambda: None)
    monkeypatch.setattr(netns, "create", lambda layout: (_ for _ in ()).throw(OSError("stop here")))
    layout = make_layout(1, 1, "none", [0], state_dir=str(tmp_path / "mine"))
    with pytest.raises((cluster.ClusterError, cluster.AlreadyUp)) as err:
        cluster.up(layout, log=said.append)
    return deleted, said, str(err.value)


def test_the_remains_of_a_cluster_whose_every_process_is_gone_are_cleared_by_the_next_up(tmp_path, monkeypatch):
    other = someone_elses_cluster(tmp_path)        # pid 4242 and the recorded daemons run nothing of it here
    state.save(make_layout(1, 1, "none", [0], state_dir=str(other)), {"munged": 4243, "slurmctld": 4244}, None, "up")
    monkeypatch.setattr(daemons, "alive", lambda pid: False)
    deleted, said, err = _up_after(tmp_path, monkeypatch, other)
    assert deleted == ["ybvc-switch", "ybvc-vc0"] and not (other / state.STATE_FILE).exists()
    assert "nothing of the virtual cluster of state directory" in said[0] and err == "stop here"


def test_a_cluster_with_a_daemon_still_running_is_left_alone(tmp_path, monkeypatch):
    other = someone_elses_cluster(tmp_path)
    munged = subprocess.Popen(["bash", "-c", f"exec -a 'munged --socket={other}/munge.socket' sleep 30"])
    try:
        # until bash has exec'd, the process's command line is bash's: on a loaded machine `up` would look
        # before that and rightly take the daemon for gone
        for _ in range(500):
            if Path(f"/proc/{munged.pid}/cmdline").read_bytes().startswith(b"munged"):
                break
            time.sleep(0.01)
        state.save(make_layout(1, 1, "none", [0], state_dir=str(other)), {"munged": munged.pid}, None, "up")
        deleted, said, err = _up_after(tmp_path, monkeypatch, other)
        assert deleted == [] and said == [] and "is up; stop it there" in err
        assert (other / state.STATE_FILE).exists() and munged.poll() is None
    finally:
        munged.kill()
        munged.wait()


def test_an_unreadable_record_of_another_cluster_is_not_taken_for_a_dead_one(tmp_path, monkeypatch):
    other = someone_elses_cluster(tmp_path)        # its state file holds "{}": which daemons it had is unknown
    monkeypatch.setattr(daemons, "alive", lambda pid: False)
    deleted, said, err = _up_after(tmp_path, monkeypatch, other)
    assert deleted == [] and "is up; stop it there" in err


def test_down_releases_its_own_claim_and_a_failed_up_too(tmp_path, monkeypatch):
    monkeypatch.setattr(netns, "existing_namespaces", lambda: [])
    monkeypatch.setattr(cpusets, "detect_root", lambda: None)
    monkeypatch.setattr(netns, "create", lambda layout: (_ for _ in ()).throw(OSError("no namespaces here")))
    layout = make_layout(1, 1, "none", [0], state_dir=str(tmp_path / "mine"))
    with pytest.raises(cluster.ClusterError, match="no namespaces here"):
        cluster.up(layout)
    assert owner.read() is None                      # the failed up gave the names back
    owner.claim(layout.state_dir, stale=lambda held: False)
    cluster.down(layout.state_dir, log=lambda *_: None)
    assert owner.read() is None


def test_a_recorded_daemon_of_another_state_directory_is_not_stopped(tmp_path):
    other_munged = subprocess.Popen(["bash", "-c", f"exec -a 'munged --socket={tmp_path}/other/munge.socket' "
                                                   "sleep 30"])
    try:
        assert daemons.stop_pids([other_munged.pid], expect_in_cmdline=["munged", str(tmp_path / "mine")]) == []
        assert other_munged.poll() is None
    finally:
        other_munged.kill()
        other_munged.wait()
