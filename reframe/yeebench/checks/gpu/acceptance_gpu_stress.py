"""Acceptance checks, part 6: every GPU of a node under load at once, error counters before and after
(paper 003 section 3.4: its GPUs failed only when all four of a node ran together, with Xid 48
"uncorrectable double bit error" and a GPU that "fell off the bus"; the cause was the power backplane).

Tests 9 and 16 (acceptance_gpu.py) run one GPU at a time and never draw a node's full power.  Here one
task per node runs `gpu_stress.py`, which starts the N-body kernel (src/nbody.cu, built with nvcc in the
job) on every GPU of its node together for `stress_seconds`, reading `nvidia-smi -q -d ECC` and the
kernel log's NVRM lines before and after.  See acceptance.py for the whole set.
"""
import os
import shlex
import sys

import reframe as rfm
from reframe.core.backends import getlauncher
from reframe.core.builtins import run_after, sanity_function, variable

from yeebench import shell, stage_files
from yeebench.acceptance_check import (AcceptanceMixin, build_on_node_or_explain, gpu_present, last_line,
                                       nodes_used, span_all_nodes)
from yeebench.base import BUILT_IN_JOB, YeebenchCheck
from yeebench.checks.gpu import gpu_errors, gpu_stress
from yeebench.gpus import partition_gpus

#: Written by the job when the node has no nvcc (the reason).
NO_NVCC = "nvcc-missing.txt"


@rfm.simple_test
class AcceptanceGPUStress(AcceptanceMixin, YeebenchCheck):
    """All GPUs of every node loaded at once; a GPU whose uncorrectable ECC counters rose, that logged an
    Xid, whose load failed or that fell off the bus fails the check, named by node, index and bus id
    (corrected ECC errors are said in the verdict, not failed)."""

    descr = ("GPU stress: N-body on every GPU of a node at once; ECC counters and kernel Xid lines before "
             "and after (GPU nodes only)")
    sourcesdir = "src"  # beside this file (ReFrame resolves it against the check's folder)
    tags = {BUILT_IN_JOB}  # compiled with nvcc in the job
    time_limit = "10m"  # the load is stress_seconds; a hang is cut at stress_timeout, the job's limit is above
    #: How long each GPU is kept loaded (the kernel is relaunched until then; about 2-3 s a run on an H200).
    stress_seconds = variable(float, value=30.0)
    #: A run still going this many seconds after the load began hangs (the GPU is named).
    stress_timeout = variable(float, value=240.0)
    #: The N-body run repeated on each GPU: 131072 bodies keep an H200 busy (~12 ms a step).
    stress_opts = variable(str, value="--bodies 131072 --steps 200")
    #: nvcc target architectures (as AcceptanceGPU).
    nvcc_arch = variable(str, value="-gencode arch=compute_90,code=sm_90 "
                                    "-gencode arch=compute_80,code=compute_80")
    num_tasks = 1

    @run_after("setup")
    def require_gpu(self):
        present, why = gpu_present(self.current_partition)
        self.skip_if(not present, why)
        self.gpus, _ = partition_gpus(self.current_partition)
        self.num_gpus_per_node = self.gpus or None  # the scheduler's GPU request: every GPU of the node
        span_all_nodes(self, 1)  # one task per node: gpu_stress.py loads all of its node's GPUs
        if self.current_partition.scheduler.registered_name == "local":
            self.job.launcher = getlauncher("local")()
        self.prerun_cmds = build_on_node_or_explain(
            "nvcc", shell.words(["nvcc", "-O3", "-std=c++17", *shlex.split(self.nvcc_arch), "-o", "nbody",
                                 "nbody.cu"]), NO_NVCC, "the nbody kernel", " (CUDA toolkit)",
            failed_build_measures=True)
        # the program and its arguments as separate words: each is quoted on its own
        self.executable = sys.executable  # the Python that runs ReFrame (same venv) on the node
        self.executable_opts = ["-m", "yeebench.checks.gpu.gpu_stress", "--seconds", str(self.stress_seconds),
                                "--timeout", str(self.stress_timeout), "--", "./nbody",
                                *shlex.split(self.stress_opts)]

    @sanity_function
    def validate(self):
        if os.path.exists(os.path.join(self.stagedir, NO_NVCC)):
            return self.not_measured(last_line(self, NO_NVCC))
        try:
            records = gpu_stress.parse(stage_files.read_stage_file(self, self.stdout))
        except (OSError, ValueError) as err:
            return self.verdict(False, f"stress output unusable: {err}")
        reason, details, ok = stress_verdict(records, self.gpus, nodes_used(self))
        if not records:
            reason += f" ({last_line(self, self.stderr) or last_line(self, self.stdout) or 'no output'})"
        self._stressed = sum(len(r.get("gpus") or []) for r in records.values())
        return self.verdict(ok, reason, details)

    def collect_foms(self):
        if self.measured:
            self.add_fom("gpus_stressed", getattr(self, "_stressed", 0), "count", "higher")


def stress_verdict(records, declared, spanned):
    """(reason, details, ok) over every node's record: each problem names its node and GPU."""
    if not records:
        return "no node reported its GPU stress", [], False
    problems, details, corrected = [], [], []
    for host, rec in sorted(records.items()):
        if rec.get("error"):
            problems.append(f"{host}: {rec['error']}")
            continue
        shown = len(rec.get("gpus") or [])
        if declared and shown < declared:
            problems.append(f"{host}: the partition declares {declared} GPU(s) per node, nvidia-smi lists {shown}")
        bad, notes = gpu_errors.node_problems(rec)
        problems += [f"{host} {p}" for p in bad]
        corrected += [f"{host} {n}" for n in notes if gpu_errors.CORRECTED in n]
        details += [f"{host}: {n}" for n in notes]
        details += [f"{host} GPU {i}: {outcome}" for i, outcome in sorted((rec.get("runs") or {}).items(),
                                                                          key=lambda kv: int(kv[0]))]
    if len(records) < spanned:
        problems.append(f"{len(records)} of {spanned} node(s) answered")
    gpus = sum(len(r.get("gpus") or []) for r in records.values())
    seconds = max((r.get("seconds", 0) for r in records.values()), default=0)
    if problems:
        return "; ".join(problems), details, False
    # corrected errors pass (an occasional one is normal on HBM) but are said in the verdict itself
    return (f"{gpus} GPU(s) on {len(records)} node(s) loaded together for {seconds:g} s: no uncorrectable ECC "
            f"error, no Xid, none fell off" + ("" if all(r.get("kernel_log") == "readable" for r in records.values())
                                               else " (Xid lines not scanned where the kernel log is unreadable)")
            + ("; " + "; ".join(corrected) if corrected else ""), details, True)
