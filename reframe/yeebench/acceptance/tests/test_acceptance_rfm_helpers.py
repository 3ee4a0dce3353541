"""Helpers of the acceptance checks: node spanning, compile probes, GPU detection, output lines."""
import shutil
from types import SimpleNamespace

import pytest

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


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_compile_probe_reports_the_error_line():
    assert rfm.compiles(["gcc"], "int main(void) { return 0; }\n", ".c") == (True, "")
    ok, why = rfm.compiles(["gcc"], "int main(void) { return undefined_name; }\n", ".c")
    assert not ok and "undefined_name" in why


def test_compile_probe_without_compiler():
    assert rfm.compiles(["no-such-compiler-xyz"], "", ".c") == (False, "no-such-compiler-xyz not found")


def test_gpu_feature_or_nvidia_smi(monkeypatch):
    assert rfm.gpu_present(SimpleNamespace(features=["gpu"]))[0] is True
    monkeypatch.setattr(rfm.shutil, "which", lambda name: None)
    present, why = rfm.gpu_present(SimpleNamespace(features=[]))
    assert not present and "nvidia-smi not found" in why


def test_nodes_used_from_task_counts():
    job = SimpleNamespace(num_tasks=6, num_tasks_per_node=2)
    assert rfm.nodes_used(SimpleNamespace(job=job)) == 3
    assert rfm.nodes_used(SimpleNamespace(job=SimpleNamespace(num_tasks=1, num_tasks_per_node=None))) == 1
