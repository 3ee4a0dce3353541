"""`down` is idempotent, survives a crashed `up`, and only stops processes that are ours."""
import os
import subprocess
import time

import pytest

from yeebench.vcluster import cluster, cpusets, daemons, netns, state
from yeebench.vcluster.layout import make_layout


@pytest.fixture
def no_real_network(monkeypatch):
    """Keep the tests away from namespaces and cgroups of a cluster that may really be up."""
    monkeypatch.setattr(netns, "existing_namespaces", lambda: [])
    monkeypatch.setattr(cpusets, "remove_all", lambda parent: None)
    monkeypatch.setattr(cpusets, "cgroup_pids", lambda parent: [])


def _spawn(argv0, *args):
    return subprocess.Popen(["bash", "-c", f'exec -a {argv0} sleep 30'] if not args else list(args))


def test_down_twice_and_without_anything(tmp_path, no_real_network):
    state_dir = tmp_path / "vc"
    cluster.down(str(state_dir), log=lambda *_: None)          # nothing there: fine
    layout = make_layout(1, 1, "none", [0], state_dir=str(state_dir))
    os.makedirs(layout.path("etc"))
    state.save(layout, {}, None, "starting")
    cluster.down(str(state_dir), log=lambda *_: None)
    assert not state_dir.exists()
    cluster.down(str(state_dir), log=lambda *_: None)          # and again


def test_down_after_crash_stops_recorded_daemon_but_not_a_reused_pid(tmp_path, no_real_network):
    state_dir = tmp_path / "vc"
    ours = _spawn(f"'munged --socket={state_dir}/munge/munge.socket'")   # our munged, by its command line
    stranger = _spawn("unrelated")             # a PID the crashed run recorded, now reused
    try:
        layout = make_layout(1, 1, "none", [0], state_dir=str(state_dir))
        os.makedirs(layout.path("etc"))
        state.save(layout, {"munged": ours.pid, "slurmctld": stranger.pid}, None, "starting")
        cluster.down(layout.state_dir, log=lambda *_: None)
        time.sleep(0.2)
        assert ours.poll() is not None
        assert stranger.poll() is None
    finally:
        for p in (ours, stranger):
            p.kill()
            p.wait()


def test_stop_pids_escalates_to_kill(tmp_path):
    stubborn = subprocess.Popen(["bash", "-c", "trap '' TERM; echo ready; sleep 30 & wait"],
                                stdout=subprocess.PIPE, text=True)
    assert stubborn.stdout.readline().strip() == "ready"         # TERM is ignored from here on
    t0 = time.monotonic()
    assert daemons.stop_pids([stubborn.pid], grace=0.5) == [stubborn.pid]
    # stop_pids reaps its own children, so ask the kernel rather than Popen's return code
    assert not daemons.alive(stubborn.pid)
    assert time.monotonic() - t0 >= 0.5                          # it waited, then killed


def test_up_refuses_a_second_cluster(tmp_path, monkeypatch):
    layout = make_layout(1, 1, "none", [0], state_dir=str(tmp_path))
    (tmp_path / state.STATE_FILE).write_text("{}")
    monkeypatch.setattr(netns, "existing_namespaces", lambda: [])
    with pytest.raises(cluster.ClusterError, match="already up"):
        cluster.up(layout)


def test_state_is_written_atomically_and_read_back(tmp_path):
    layout = make_layout(2, 1, "1gbit", [0, 1], state_dir=str(tmp_path))
    state.save(layout, {"munged": 12}, "/sys/fs/cgroup/x", "up")
    assert [p.name for p in tmp_path.iterdir()] == [state.STATE_FILE]   # no temp file left
    record = state.load(str(tmp_path))
    assert record["layout"] == layout and record["daemons"] == {"munged": 12}
    (tmp_path / state.STATE_FILE).write_text("{broken")
    assert state.load(str(tmp_path)) is None


def test_daemons_are_wrapped_into_their_namespaces():
    layout = make_layout(1, 2, "none", [0, 1], state_dir="/run/yb")
    node = layout.nodes[0]
    cmd = daemons.wrap_in_namespaces(layout, node.netns, node.name, ["slurmd", "-D"],
                                     binds=[("/run/yb/nodes/vc0/tmp", "/run/yb/tmp")],
                                     cgroup_procs="/sys/fs/cgroup/cpuset/x/cgroup.procs", cpus=node.cpus)
    assert cmd[:2] == ["nsenter", "--net=/run/netns/ybvc-vc0"]
    assert "--uts" in cmd and "--mount" in cmd
    script = cmd[-1]
    assert "hostname vc0" in script
    assert "mount --bind /run/yb/etc/hosts /etc/hosts" in script
    assert "mount --bind /run/yb/nodes/vc0/tmp /run/yb/tmp" in script
    assert script.endswith("exec taskset -c 0,1 slurmd -D")
    assert script.index("cgroup.procs") < script.index("exec")


def test_smoke_leaves_an_existing_cluster_alone(tmp_path, monkeypatch):
    from yeebench.vcluster import preflight, smoke
    monkeypatch.setattr(preflight, "check", lambda shaping=True: None)
    monkeypatch.setattr(netns, "existing_namespaces", lambda: ["ybvc-switch"])
    downs = []
    monkeypatch.setattr(cluster, "down", lambda *a, **k: downs.append(a) or 0.0)
    rc = smoke.run_smoke(2, "1gbit", str(tmp_path / "out"), "vcluster", False, 0.15, str(tmp_path / "vc"), True)
    assert rc == 1 and downs == []


def test_smoke_skips_with_reason_where_unsupported(tmp_path, monkeypatch, capsys):
    from yeebench.vcluster import preflight, smoke
    monkeypatch.setattr(preflight, "check", lambda shaping=True: "the kernel has no network namespaces")
    monkeypatch.setattr(cluster, "up", lambda layout: pytest.fail("must not start a cluster"))
    assert smoke.run_smoke(2, "1gbit", str(tmp_path), "vcluster", False, 0.15, str(tmp_path), True) == 0
    assert "SKIPPED" in capsys.readouterr().out
    assert smoke.run_smoke(2, "1gbit", str(tmp_path), "vcluster", False, 0.15, str(tmp_path), False) == 2


def test_down_removes_only_what_up_creates(tmp_path, no_real_network):
    shared = tmp_path / "shared"
    (shared / "nodes" / "vc0").mkdir(parents=True)
    (shared / "etc").mkdir()
    (shared / state.STATE_FILE).write_text("{}")
    (shared / "someone-elses-file").write_text("keep me")
    cluster.down(str(shared), log=lambda *_: None)
    assert sorted(p.name for p in shared.iterdir()) == ["someone-elses-file"]


def test_failed_up_keeps_logs_but_not_the_state_file(tmp_path):
    (tmp_path / "ctld").mkdir()
    (tmp_path / "ctld" / "slurmctld.log").write_text("why it failed")
    (tmp_path / state.STATE_FILE).write_text("{}")
    cluster.remove_state_tree(str(tmp_path), keep_logs=True)
    assert (tmp_path / "ctld" / "slurmctld.log").exists()
    assert not (tmp_path / state.STATE_FILE).exists()


def test_smoke_without_shaping_support_still_runs_unshaped(tmp_path, monkeypatch, capsys):
    from yeebench.vcluster import preflight, smoke
    monkeypatch.setattr(preflight, "check", lambda shaping=True: "no ifb" if shaping else None)
    started = []

    def fake_up(layout):
        started.append(layout.link_rate_bps)
        raise cluster.ClusterError("stop here")
    monkeypatch.setattr(cluster, "up", fake_up)
    assert smoke.run_smoke(2, "1gbit", str(tmp_path / "o"), "vcluster", False, 0.15, str(tmp_path / "s"), True) == 1
    assert started == [None]
    assert "link-rate check SKIPPED" in capsys.readouterr().out


def test_smoke_clears_only_its_own_outputs(tmp_path):
    from yeebench.vcluster import smoke
    (tmp_path / "reframe").mkdir()
    (tmp_path / "report.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("keep")
    smoke._clear_outputs(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_sigterm_half_way_through_up_tears_down_what_it_started(tmp_path, monkeypatch, capsys):
    """A stage runner or a batch system stops `up` with SIGTERM: it takes Ctrl-C's path, not Python's
    default death, which would leave munge and slurmd running in their namespaces."""
    import signal
    from yeebench import cli
    from yeebench.vcluster import owner, preflight
    monkeypatch.setattr(preflight, "check", lambda shaping=True: None)
    monkeypatch.setattr(owner, "read", lambda: None)
    monkeypatch.setattr(owner, "claim", lambda state_dir, stale=None: None)
    monkeypatch.setattr(netns, "existing_namespaces", lambda: [])
    monkeypatch.setattr(cpusets, "detect_root", lambda: None)
    monkeypatch.setattr(netns, "create", lambda layout: os.kill(os.getpid(), signal.SIGTERM))
    downs = []
    monkeypatch.setattr(cluster, "down", lambda state_dir, **kw: downs.append(state_dir) or 0.0)
    previous = signal.getsignal(signal.SIGTERM)
    rc = cli.main(["vcluster", "up", "--nodes", "3", "--state-dir", str(tmp_path / "vc")])
    assert rc == 143 and downs == [str(tmp_path / "vc")]
    assert "stopped by a signal" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is previous
