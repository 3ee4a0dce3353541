"""Helpers of the acceptance checks: node spanning, compile probes, GPU detection, output lines."""
import os
from types import SimpleNamespace


from yeebench.acceptance import rfm


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
    assert not present and "partition c:gpu has no 'gpu' feature" in why


def test_nodes_used_from_task_counts():
    job = SimpleNamespace(num_tasks=6, num_tasks_per_node=2)
    assert rfm.nodes_used(SimpleNamespace(job=job)) == 3
    assert rfm.nodes_used(SimpleNamespace(job=SimpleNamespace(num_tasks=1, num_tasks_per_node=None))) == 1
