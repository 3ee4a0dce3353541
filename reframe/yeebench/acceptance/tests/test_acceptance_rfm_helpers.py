"""Helpers of the acceptance checks: node spanning, compile probes, GPU detection, output lines."""
import os
import subprocess
from types import SimpleNamespace


from yeebench import acceptance_check as rfm


def fake_test(scheduler, stagedir="."):
    part = SimpleNamespace(scheduler=SimpleNamespace(registered_name=scheduler))
    return SimpleNamespace(current_partition=part, num_tasks=None, num_tasks_per_node=None, stagedir=stagedir)


def test_local_scheduler_gets_an_explicit_task_count():
    t = fake_test("local")
    rfm.span_all_nodes(t, 4)
    assert (t.num_tasks, t.num_tasks_per_node) == (4, 4)


def test_batch_schedulers_get_flexible_allocation():
    t = fake_test("squeue")
    rfm.span_all_nodes(t, 1)
    assert (t.num_tasks, t.num_tasks_per_node) == (0, 1)


def test_last_line(tmp_path):
    (tmp_path / "out").write_text("a\n\nlast line  \n\n")
    t = fake_test("local", stagedir=str(tmp_path))
    assert rfm.last_line(t, "out") == "last line"
    assert rfm.last_line(t, "absent") == ""


def test_gpu_from_the_partition_feature_only(tmp_path, monkeypatch):
    assert rfm.gpu_present(SimpleNamespace(features=["gpu"]))[0] is True
    # an nvidia-smi on the launch host says nothing about the partition's nodes
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H100'\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    present, why = rfm.gpu_present(SimpleNamespace(features=[], fullname="c:gpu"))
    assert not present and "partition c:gpu declares none: add 'gpu' to its features" in why


def test_nodes_used_from_task_counts():
    job = SimpleNamespace(num_tasks=6, num_tasks_per_node=2)
    assert rfm.nodes_used(SimpleNamespace(job=job)) == 3
    assert rfm.nodes_used(SimpleNamespace(job=SimpleNamespace(num_tasks=1, num_tasks_per_node=None))) == 1


# -- building a probe on the node (multicast's mpicc, the GPU kernels' nvcc) -------------------------
def _run_build_lines(tmp_path, tool_body, **kwargs):
    tools = tmp_path / "tools"
    tools.mkdir()
    if tool_body is not None:
        (tools / "cc-wrapper").write_text("#!/bin/sh\n" + tool_body)
        (tools / "cc-wrapper").chmod(0o755)
    lines = rfm.build_on_node_or_explain("cc-wrapper", "cc-wrapper -o probe probe.c", "why.txt", "the probe", **kwargs)
    out = subprocess.run(["bash", "-c", "\n".join(lines + ["echo LAUNCHED"])], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60, env={"PATH": f"{tools}:/usr/bin:/bin"})
    why = tmp_path / "why.txt"
    return out, why.read_text().strip() if why.exists() else None


def test_a_node_without_the_compiler_ends_the_job_with_the_reason(tmp_path):
    out, why = _run_build_lines(tmp_path, None, missing_hint=" (a toolkit)")
    assert out.returncode == 0 and "LAUNCHED" not in out.stdout
    assert why == "cc-wrapper not found on the node PATH (a toolkit): no compiler to build the probe"


def test_a_compiler_that_cannot_build_ends_the_job_with_its_last_message(tmp_path):
    out, why = _run_build_lines(tmp_path, 'echo "warning: x" >&2; echo "wrapper: no underlying compiler" >&2; exit 1\n')
    assert out.returncode == 0 and "LAUNCHED" not in out.stdout
    assert why == "cc-wrapper could not build the probe: wrapper: no underlying compiler"


def test_a_build_that_works_launches_and_a_failing_one_can_be_left_to_fail_the_check(tmp_path):
    (tmp_path / "ok").mkdir()
    out, why = _run_build_lines(tmp_path / "ok", "touch probe\n")
    assert "LAUNCHED" in out.stdout and why is None and (tmp_path / "ok" / "probe").exists()
    (tmp_path / "measures").mkdir()
    out, why = _run_build_lines(tmp_path / "measures", "exit 1\n", failed_build_measures=True)
    assert "LAUNCHED" in out.stdout and why is None


def _build_job(tmp_path, tool_body):
    """A probe's build script as ReFrame runs it (ERR trap, stderr to a file), with a stand-in compiler."""
    tools = tmp_path / "tools"
    tools.mkdir()
    if tool_body is not None:
        (tools / "cc-wrapper").write_text("#!/bin/sh\n" + tool_body)
        (tools / "cc-wrapper").chmod(0o755)
    pre, post = rfm.probe_build_lines("cc-wrapper", "probe", "rfm_build.err")
    script = "\n".join(["trap 'exit 97' ERR", *pre, "cc-wrapper -O2 probe.c -o probe", *post])
    with open(tmp_path / "rfm_build.err", "w") as err:
        out = subprocess.run(["bash", "-c", script], cwd=tmp_path, stdout=subprocess.PIPE, stderr=err, text=True,
                             timeout=60, env={"PATH": f"{tools}:/usr/bin:/bin"})
    marker = tmp_path / rfm.PROBE_NOT_BUILT
    return out.returncode, marker.read_text().strip() if marker.exists() else None


def test_a_probe_build_job_ends_normally_with_the_reason_where_the_node_cannot_build(tmp_path):
    (tmp_path / "none").mkdir()
    assert _build_job(tmp_path / "none", None) == (
        0, "cc-wrapper not found on the node PATH: no compiler to build the probe probe")
    (tmp_path / "broken").mkdir()
    assert _build_job(tmp_path / "broken", 'echo "wrapper: no underlying compiler" >&2; exit 1\n') == (
        0, "cc-wrapper could not build the probe probe: wrapper: no underlying compiler")
    (tmp_path / "ok").mkdir()
    assert _build_job(tmp_path / "ok", "touch probe; chmod +x probe\n") == (0, None)


def test_a_build_failure_is_named_by_its_message_not_by_open_mpis_frame(tmp_path):
    # mpicc in an image without a compiler: Open MPI frames its help text in lines of dashes
    from yeebench.acceptance_check import _could_not_build
    errors = tmp_path / "errors"
    errors.write_text("-" * 74 + "\nThe Open MPI wrapper compiler was unable to find the specified compiler\n"
                      "gcc in your PATH.\n" + "-" * 74 + "\n")
    out = subprocess.run(["bash", "-c", _could_not_build("mpicc", "the mcast probe", errors)],
                         capture_output=True, text=True).stdout
    assert out == ("mpicc could not build the mcast probe: The Open MPI wrapper compiler was unable to find "
                   "the specified compiler\n")
    errors.write_text("probe.c:3:1: warning: unused\ncollect2: ld returned 1 exit status\n" + "-" * 10 + "\n")
    out = subprocess.run(["bash", "-c", _could_not_build("cc", "x", errors)], capture_output=True, text=True).stdout
    assert out == "cc could not build x: collect2: ld returned 1 exit status\n"
