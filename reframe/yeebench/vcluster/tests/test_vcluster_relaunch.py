"""A case whose job failed at Open MPI's TCP start-up is launched once more; any other failure stands."""
import json
import os

import pytest

from yeebench.vcluster import relaunch

CURVE = "OsuCollectiveNodeCurve %case=allreduce:han"
TCP_ERR = ("WARNING: Open MPI failed to TCP connect to a peer MPI process.  This\nshould not happen.\n"
           "  Message:    connect() to 10.77.0.14:1027 failed\nsrun: error: vc3: task 6: Segmentation fault\n")


def case(tmp_path, name=CURVE, result="fail", partition="srun", err=TCP_ERR, stages="stage"):
    stage = tmp_path / stages / f"{name.split()[0]}-{partition}-{result}"
    stage.mkdir(parents=True, exist_ok=True)
    if err is not None:
        (stage / relaunch.JOB_ERR).write_text(err)
    return {"name": name, "display_name": name, "system": "vcluster", "partition": partition, "result": result,
            "stagedir": str(stage)}


def write(path, cases):
    path.write_text(json.dumps({"runs": [{"testcases": cases}]}))
    return str(path)


def test_a_failed_case_with_the_tcp_message_is_named_by_partition(tmp_path):
    report = write(tmp_path / "r.json", [case(tmp_path), case(tmp_path, "FdtdNodeScaling", partition="mpirun"),
                                         case(tmp_path, "VclusterNetPIPE %locality=inter", result="pass")])
    assert relaunch.tcp_start_up_failures(report) == {
        "vcluster:srun": ["OsuCollectiveNodeCurve%case=allreduce:han"],
        "vcluster:mpirun": ["FdtdNodeScaling"]}


@pytest.mark.parametrize("err", [None, "srun: error: vc3: task 6: Segmentation fault\n", ""])
def test_any_other_failure_is_not_launched_again(tmp_path, err):
    assert relaunch.tcp_start_up_failures(write(tmp_path / "r.json", [case(tmp_path, err=err)])) == {}


def test_a_job_error_file_that_is_a_link_or_missing_stage_is_not_read(tmp_path):
    c = case(tmp_path, err=None)
    target = tmp_path / "elsewhere.txt"
    target.write_text(TCP_ERR)
    os.symlink(target, os.path.join(c["stagedir"], relaunch.JOB_ERR))
    gone = dict(case(tmp_path, partition="mpirun"), stagedir=str(tmp_path / "no-such-stage"))
    odd = dict(case(tmp_path, partition="other"), stagedir=["not", "a", "path"])
    assert relaunch.tcp_start_up_failures(write(tmp_path / "r.json", [c, gone, odd])) == {}


def test_only_stage_directories_under_the_runs_folder_are_read(tmp_path):
    (tmp_path / "run").mkdir()
    report = write(tmp_path / "r.json", [case(tmp_path)])
    assert relaunch.tcp_start_up_failures(report, str(tmp_path / "run")) == {}
    assert relaunch.tcp_start_up_failures(report, str(tmp_path)) == {
        "vcluster:srun": ["OsuCollectiveNodeCurve%case=allreduce:han"]}


def test_the_job_error_file_the_report_names_is_read_when_it_is_a_plain_name(tmp_path):
    c = case(tmp_path, err=None)
    (tmp_path / "stage" / "job.err").write_text(TCP_ERR)      # beside the stage: never read
    with open(os.path.join(c["stagedir"], "my.err"), "w") as f:
        f.write(TCP_ERR)
    assert relaunch.tcp_start_up_failures(write(tmp_path / "r.json", [dict(c, job_stderr="my.err")]))
    assert not relaunch.tcp_start_up_failures(write(tmp_path / "r.json", [dict(c, job_stderr="../job.err")]))


@pytest.mark.parametrize("text", ["", "{", "[]", '{"runs": 3}', '{"runs": [[]]}', '{"runs": [{"testcases": [1]}]}'])
def test_a_broken_report_relaunches_nothing(tmp_path, text):
    (tmp_path / "r.json").write_text(text)
    assert relaunch.tcp_start_up_failures(str(tmp_path / "r.json")) == {}
    assert not relaunch.cleared(str(tmp_path / "r.json"), [str(tmp_path / "r.json")])


def test_cleared_only_when_every_failed_case_passed_again(tmp_path):
    first = write(tmp_path / "first.json", [case(tmp_path), case(tmp_path, "FdtdNodeScaling")])
    one = write(tmp_path / "one.json", [case(tmp_path, result="pass")])
    both = write(tmp_path / "both.json", [case(tmp_path, result="pass"), case(tmp_path, "FdtdNodeScaling", result="pass")])
    elsewhere = write(tmp_path / "elsewhere.json", [case(tmp_path, result="pass", partition="mpirun"),
                                                    case(tmp_path, "FdtdNodeScaling", result="pass")])
    assert not relaunch.cleared(first, [one])
    assert relaunch.cleared(first, [one, both])
    assert not relaunch.cleared(first, [elsewhere])      # passing on another partition clears nothing
    assert not relaunch.cleared(write(tmp_path / "none.json", [case(tmp_path, result="pass")]), [both])


def _netpipe(partition):
    return [{"name": f"VclusterNetPIPE %locality={loc}", "display_name": f"VclusterNetPIPE %locality={loc}",
             "locality": loc, "system": "vcluster", "partition": partition, "result": "pass",
             "perfvalues": {f"vcluster:{partition}:bw_large": [bw, 0, None, None, "MB/s", "pass"],
                            f"vcluster:{partition}:latency_1B": [lat, 0, None, None, "us", "pass"]}}
            for loc, bw, lat in (("intra", 5000.0, 0.5), ("inter", 120.0, 30.0))]


def _cluster_stand_in(monkeypatch):
    """The smoke module with no cluster behind it: ReFrame is whatever the test puts in subprocess.call."""
    from yeebench.vcluster import cluster, preflight, smoke
    monkeypatch.setattr(preflight, "check", lambda shaping=True: None)
    monkeypatch.setattr(cluster, "up", lambda layout: 0.1)
    monkeypatch.setattr(cluster, "down", lambda *a, **k: 0.0)
    monkeypatch.setattr(cluster, "head_command", lambda layout, argv: argv)
    monkeypatch.setattr(smoke, "ingest", lambda report, results: None)
    monkeypatch.setattr(smoke.coverage, "check", lambda reports, nodes: (True, []))
    return smoke


@pytest.mark.parametrize("again, rc", [("pass", 0), ("fail", 1)])
def test_smoke_launches_a_tcp_start_up_failure_once_more(tmp_path, monkeypatch, capsys, again, rc):
    smoke = _cluster_stand_in(monkeypatch)
    calls, rfm_dirs = [], []

    def fake_reframe(argv, **kwargs):
        calls.append(argv)
        rfm_dirs.append(kwargs["env"]["YEEBENCH_RFM_DIR"])
        out = argv[argv.index("--report-file") + 1]
        if len(calls) == 1:
            write_to = _netpipe("srun") + [case(tmp_path, stages="out/reframe/stage")]
        else:
            write_to = [case(tmp_path, result=again, err=TCP_ERR if again == "fail" else "", stages="out/reframe/stage")]
        with open(out, "w") as f:
            json.dump({"runs": [{"testcases": write_to}]}, f)
        return 0 if write_to[-1]["result"] == "pass" else 1
    monkeypatch.setattr(smoke.subprocess, "call", fake_reframe)
    assert smoke.run_smoke(2, "1gbit", str(tmp_path / "out"), "vcluster", True, 0.15, str(tmp_path / "vc"), True) == rc
    assert len(calls) == 2       # once more, never a third time
    relaunched = calls[1]
    assert relaunched[relaunched.index("-n") + 1] == "OsuCollectiveNodeCurve%case=allreduce:han"
    assert relaunched.count("-n") == 1 and relaunched[relaunched.index("--system") + 1] == "vcluster:srun"
    out = capsys.readouterr().out
    assert "launching once more" in out and ("every failed case passed when launched again" in out) == (rc == 0)
    assert (tmp_path / "out" / "report.json").exists() and (tmp_path / "out" / "report-relaunch1.json").exists()
    # the relaunch stages elsewhere: the first run's failed stage (its job output) stays
    assert rfm_dirs == [str(tmp_path / "out" / "reframe"), str(tmp_path / "out" / "reframe-relaunch1")]


def test_smoke_does_not_launch_again_a_failure_of_another_kind(tmp_path, monkeypatch):
    smoke = _cluster_stand_in(monkeypatch)
    calls = []

    def fake_reframe(argv, **kwargs):
        calls.append(argv)
        with open(argv[argv.index("--report-file") + 1], "w") as f:
            json.dump({"runs": [{"testcases": _netpipe("srun") + [case(tmp_path, err="sanity error\n")]}]}, f)
        return 1
    monkeypatch.setattr(smoke.subprocess, "call", fake_reframe)
    assert smoke.run_smoke(2, "1gbit", str(tmp_path / "out"), "vcluster", True, 0.15, str(tmp_path / "vc"), True) == 1
    assert len(calls) == 1


def test_a_later_report_stands_for_the_same_case_in_the_coverage(tmp_path):
    from yeebench.vcluster import coverage
    figures = coverage.expected_figures(5)
    full = [{"name": name, "partition": "srun", "result": "pass",
             "perfvalues": {f"vcluster:srun:host:{f}": [1.0, 0, None, None, "x"] for f in figs}}
            for name, figs in figures.items()]
    first = [dict(c, result="fail", perfvalues={}) if c["name"] == "OsuCollectiveNodeCurve" else c for c in full]
    a = write(tmp_path / "a.json", first)
    b = write(tmp_path / "b.json", [c for c in full if c["name"] == "OsuCollectiveNodeCurve"])
    assert not coverage.check(a, 5)[0]
    assert coverage.check([a, b], 5)[0]
    assert not coverage.check([b, a], 5)[0]
