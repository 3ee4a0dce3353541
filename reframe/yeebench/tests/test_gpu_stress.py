"""Paper 003's main failure (all GPUs of a node loaded together: Xid 48, a GPU off the bus): the parsers of
`nvidia-smi -q -d ECC`, the GPU list and the kernel log's NVRM lines on stand-in text written from the
documented formats, the comparison of two snapshots, and the node runner with a stand-in nvidia-smi,
kernel log and load program."""
import json
import stat

import pytest

from yeebench.checks.gpu import gpu_errors, gpu_stress

# The R5xx layout: SRAM/DRAM counters under Volatile and Aggregate, one section per GPU.
ECC_NEW = """
==============NVSMI LOG==============

Timestamp                                 : Sat Nov 28 08:12:45 2026
Driver Version                            : 550.54.15
CUDA Version                              : 12.4

Attached GPUs                             : 2
GPU 00000000:07:00.0
    ECC Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : {dbe}
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 0
            DRAM Correctable              : 3
            DRAM Uncorrectable            : {dbe}
            SRAM Threshold Exceeded       : No

GPU 00000000:08:00.0
    ECC Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
            SRAM Threshold Exceeded       : No
"""

# The Fermi-era layout (the paper's M2070s): Single Bit / Double Bit per memory, 4-digit PCI domain.
ECC_OLD = """
==============NVSMI LOG==============

Attached GPUs                       : 1
GPU 0000:03:00.0
    Ecc Mode
        Current                     : Enabled
        Pending                     : Enabled
    ECC Errors
        Volatile
            Single Bit
                Device Memory       : 0
                Register File       : 0
                L1 Cache            : 0
                L2 Cache            : 0
                Texture Memory      : N/A
                Total               : 0
            Double Bit
                Device Memory       : 1
                Register File       : 0
                L1 Cache            : 0
                L2 Cache            : 0
                Texture Memory      : N/A
                Total               : 1
        Aggregate
            Single Bit
                Device Memory       : 7
                Total               : 7
            Double Bit
                Device Memory       : 1
                Total               : 1
"""

# A GPU without ECC (a workstation card): every counter N/A.
ECC_NONE = """
Attached GPUs                             : 1
GPU 00000000:01:00.0
    ECC Mode
        Current                           : N/A
        Pending                           : N/A
    ECC Errors
        Volatile
            SRAM Correctable              : N/A
            DRAM Uncorrectable            : N/A
"""

GPU_LIST = ("0, 00000000:07:00.0, GPU-1b7e6c2a-0f3e-4a51-9c1d-1d2e3f4a5b6c, NVIDIA H200\n"
            "1, 00000000:08:00.0, GPU-9a8b7c6d-5e4f-4321-8765-43210fedcba9, NVIDIA H200\n")

KERNEL = [
    "[  102.118203] nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  550.54.15",
    "[ 5120.771204] NVRM: Xid (PCI:0000:07:00): 48, pid=4242, name=nbody, An uncorrectable double bit error "
    "(DBE) has been detected on GPU in the framebuffer at partition 0, subpartition 0.",
    "[ 5121.000012] NVRM: GPU at PCI:0000:08:00: GPU-9a8b7c6d-5e4f-4321-8765-43210fedcba9",
    "[ 5121.000015] NVRM: GPU Board Serial Number: 1320000000001",
    "[ 5121.000020] NVRM: Xid (PCI:0000:08:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    "[ 5121.000022] NVRM: GPU 0000:08:00.0: GPU has fallen off the bus.",
    "NVRM: Xid (0000:07:00): 48, An uncorrectable double bit error has been detected on GPU (00 03 00)",
]


def test_the_new_layout_names_each_counter_by_its_path_per_bus_id():
    ecc = gpu_errors.parse_ecc(ECC_NEW.format(dbe=0))
    assert sorted(ecc) == ["0000:07:00", "0000:08:00"]
    assert ecc["0000:07:00"]["Aggregate/DRAM Correctable"] == 3
    assert ecc["0000:07:00"]["Volatile/DRAM Uncorrectable"] == 0
    assert "Aggregate/SRAM Threshold Exceeded" not in ecc["0000:07:00"]  # Yes/No is no counter
    assert len(ecc["0000:08:00"]) == 10


def test_the_old_layout_nests_single_and_double_bit():
    ecc = gpu_errors.parse_ecc(ECC_OLD)
    assert ecc["0000:03:00"]["Volatile/Double Bit/Device Memory"] == 1
    assert ecc["0000:03:00"]["Aggregate/Single Bit/Device Memory"] == 7
    assert "Volatile/Single Bit/Texture Memory" not in ecc["0000:03:00"]   # N/A


def test_a_gpu_without_ecc_has_no_counters_and_other_text_is_refused():
    assert gpu_errors.parse_ecc(ECC_NONE) == {"0000:01:00": {}}
    with pytest.raises(ValueError, match="no 'GPU <bus id>' section"):
        gpu_errors.parse_ecc("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")


def test_gpu_list_and_bus_id_spellings():
    assert [g[:2] for g in gpu_errors.parse_gpu_list(GPU_LIST)] == [(0, "0000:07:00"), (1, "0000:08:00")]
    assert gpu_errors.bus_id("00000000:0A:00.0") == gpu_errors.bus_id("0000:0a:00") == "0000:0a:00"
    with pytest.raises(ValueError, match="unexpected nvidia-smi GPU line"):
        gpu_errors.parse_gpu_list("No devices were found\n")


def test_kernel_events_read_both_xid_spellings_and_the_fall_off_the_bus():
    events = gpu_errors.kernel_events(KERNEL)
    assert events[("0000:07:00", "Xid 48")] == 2      # today's "PCI:" form and the paper's own line
    assert events[("0000:08:00", "Xid 79")] == 1
    assert events[("0000:08:00", "fallen off the bus")] == 1
    assert sum(events.values()) == 4                 # the driver banner and board lines are no events


def test_only_lines_that_appeared_count():
    before = KERNEL[:2]
    assert gpu_errors.new_lines(before, KERNEL[1:4]) == KERNEL[2:4]
    assert gpu_errors.new_lines(["a", "a"], ["a", "a", "a"]) == ["a"]


def record(**changes):
    gpus = gpu_errors.parse_gpu_list(GPU_LIST)
    rec = {"gpus": gpus, "gpus_after": gpus, "ecc_before": gpu_errors.parse_ecc(ECC_NEW.format(dbe=0)),
           "ecc_after": gpu_errors.parse_ecc(ECC_NEW.format(dbe=0)), "kernel_log": "readable",
           "kernel_new": [], "runs": {"0": "VALID 3 run(s)", "1": "VALID 3 run(s)"}}
    rec.update(changes)
    return json.loads(json.dumps(rec))   # as the check reads it back: lists, string keys


def test_a_quiet_node_has_no_problem():
    assert gpu_errors.node_problems(record()) == ([], [])


def test_a_counter_that_rose_names_the_gpu_index_and_the_counter():
    problems, _ = gpu_errors.node_problems(record(ecc_after=gpu_errors.parse_ecc(ECC_NEW.format(dbe=1))))
    assert problems == ["GPU 0 (0000:07:00): uncorrectable ECC errors rose: DRAM Uncorrectable 0 -> 1"]


def test_xid_lines_and_a_gpu_gone_from_nvidia_smi_are_problems_of_their_gpu():
    gpus = gpu_errors.parse_gpu_list(GPU_LIST)
    problems, _ = gpu_errors.node_problems(record(kernel_new=KERNEL[1:6], gpus_after=gpus[:1],
                                                  runs={"0": "VALID 1 run(s)", "1": "failed (exit 1) in run 1: "
                                                        "nbody.cu:60: unspecified launch failure"}))
    assert problems[0] == "GPU 1 (0000:08:00) fell off: nvidia-smi no longer lists it after the load"
    assert problems[1].startswith("GPU 1 (0000:08:00): the load failed (exit 1)")
    assert problems[2] == "GPU 0 (0000:07:00): kernel log: Xid 48 (double bit ECC error)"
    assert problems[3] == "GPU 1 (0000:08:00): kernel log: Xid 79 (fallen off the bus), fallen off the bus"


def test_an_unreadable_kernel_log_or_no_ecc_is_a_note_not_a_pass_of_that_part():
    problems, notes = gpu_errors.node_problems(record(kernel_log="kernel log not readable (dmesg exited 1: "
                                                      "dmesg: read kernel buffer failed: Operation not permitted)",
                                                      kernel_new=KERNEL))
    assert problems == [] and notes == ["Xid lines not scanned: kernel log not readable (dmesg exited 1: "
                                        "dmesg: read kernel buffer failed: Operation not permitted)"]
    problems, notes = gpu_errors.node_problems(record(ecc_before=None, ecc_error="nvidia-smi exited 9"))
    assert problems == [] and notes == ["ECC counters not compared: nvidia-smi exited 9"]


def script(path, text):
    path.write_text("#!/bin/sh\n" + text + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_the_runner_loads_every_gpu_at_once_and_reads_what_changed(tmp_path, monkeypatch):
    # stand-ins: the load program marks the GPU it ran on and writes an Xid for GPU 1; nvidia-smi
    # reports GPU 0's double-bit counter at 1 once any load ran
    new, old = ECC_NEW.format(dbe=1), ECC_NEW.format(dbe=0)
    (tmp_path / "ecc-new").write_text(new)
    (tmp_path / "ecc-old").write_text(old)
    (tmp_path / "list").write_text(GPU_LIST)
    (tmp_path / "klog").write_text(KERNEL[0] + "\n")
    smi = script(tmp_path / "nvidia-smi", f'cd {tmp_path}; case "$1" in -q) if [ -e loaded ]; then cat ecc-new; '
                 'else cat ecc-old; fi;; --query-gpu=*) cat list;; *) exit 9;; esac')
    monkeypatch.setattr(gpu_stress, "KERNEL_LOGS", ([script(tmp_path / "dmesg", f"cat {tmp_path}/klog")],))
    program = script(tmp_path / "load", f'cd {tmp_path}; touch loaded "ran-$CUDA_VISIBLE_DEVICES"\n'
                     f'case "$CUDA_VISIBLE_DEVICES" in *fedcba9) echo "{KERNEL[4]}" >> klog;; esac\n'
                     'echo "nbody bodies 8 steps 1 max_rel_error 0 VALID"')
    rec = json.loads(json.dumps(gpu_stress.stress([program], 0.2, 20, smi)))
    assert sorted(p.name for p in tmp_path.glob("ran-*")) == ["ran-GPU-1b7e6c2a-0f3e-4a51-9c1d-1d2e3f4a5b6c",
                                                              "ran-GPU-9a8b7c6d-5e4f-4321-8765-43210fedcba9"]
    assert all(outcome.startswith("VALID") for outcome in rec["runs"].values())
    assert rec["kernel_new"] == [KERNEL[4]] * len(rec["kernel_new"]) and rec["kernel_new"]
    problems, _ = gpu_errors.node_problems(rec)
    assert problems[0] == "GPU 0 (0000:07:00): uncorrectable ECC errors rose: DRAM Uncorrectable 0 -> 1"
    assert problems[1].startswith("GPU 1 (0000:08:00): kernel log: Xid 79 (fallen off the bus)")


def test_a_hung_load_is_cut_at_the_time_limit_and_named(tmp_path):
    (tmp_path / "list").write_text(GPU_LIST.splitlines()[0] + "\n")
    smi = script(tmp_path / "nvidia-smi", f'case "$1" in --query-gpu=*) cat {tmp_path}/list;; *) exit 9;; esac')
    rec = gpu_stress.stress([script(tmp_path / "load", "exec sleep 30")], 0.1, 0.5, smi)
    assert rec["runs"][0].startswith("hung: still running at the time limit")
    assert rec["ecc_error"].startswith("nvidia-smi exited 9")


def test_a_node_without_gpus_says_so():
    rec = gpu_stress.stress(["true"], 0.1, 1, "/nonexistent/nvidia-smi")
    assert rec["error"].startswith("nvidia-smi lists no GPU")


def test_a_kernel_log_unreadable_after_the_load_is_said_so(tmp_path, monkeypatch):
    (tmp_path / "list").write_text(GPU_LIST)
    smi = script(tmp_path / "nvidia-smi", f'case "$1" in --query-gpu=*) cat {tmp_path}/list;; *) exit 9;; esac')
    # readable once: the second read (after the load) is refused
    dmesg = script(tmp_path / "dmesg", f'[ -e {tmp_path}/read ] && {{ echo "Operation not permitted" >&2; exit 1; }}\n'
                   f'touch {tmp_path}/read; echo "{KERNEL[0]}"')
    monkeypatch.setattr(gpu_stress, "KERNEL_LOGS", ([dmesg],))
    load = script(tmp_path / "load", 'echo "nbody bodies 8 steps 1 max_rel_error 0 VALID"')
    rec = gpu_stress.stress([load], 0.1, 10, smi)
    why = "read before the load, not after: kernel log not readable (dmesg exited 1: Operation not permitted)"
    assert rec["kernel_log"] == why
    _, notes = gpu_errors.node_problems(json.loads(json.dumps(rec)))
    assert f"Xid lines not scanned: {why}" in notes


@pytest.mark.parametrize("body, why", [
    ("{}", "no host"), ("[]", "not a JSON object"), ('"x"', "not a JSON object"), ('{"host": 3}', "no host"),
    ('{"host": "n1", "runs": []}', "runs"), ('{"host": "n1", "runs": {"0": 5}}', "runs"),
    ('{"host": "n1", "gpus": [[0, "0000:07:00"]]}', "gpus"), ('{"host": "n1", "gpus": "x"}', "gpus"),
    ('{"host": "n1", "ecc_after": {"0000:07:00": {"c": "1"}}}', "ecc_after"),
    ('{"host": "n1", "kernel_new": [1]}', "kernel_new"), ('{"host": "n1", "error": 1}', "error"),
    ("{not json", "not JSON")])
def test_a_marker_line_that_is_no_node_record_is_refused_naming_what_is_wrong(body, why):
    with pytest.raises(ValueError, match=why):
        gpu_stress.parse(f"noise\n{gpu_stress.MARKER} {body}\n")


def test_a_whole_record_reads_back_by_host():
    rec = dict(record(), host="n1", seconds=0.2)
    assert gpu_stress.parse(f"{gpu_stress.MARKER} {json.dumps(rec)}\n") == {"n1": rec}


def test_a_load_thread_that_raises_anything_is_that_gpus_failure(monkeypatch):
    def load_one(uuid, program, seconds, deadline):
        if uuid == "u1":
            raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
        return "VALID 1 run(s)"

    monkeypatch.setattr(gpu_stress, "load_one", load_one)
    outcomes = gpu_stress.load_all([(0, "b0", "u0", "n"), (1, "b1", "u1", "n")], ["x"], 0.1, 1)
    assert outcomes[0] == "VALID 1 run(s)"
    assert outcomes[1].startswith("failed: UnicodeDecodeError") and "invalid start byte" in outcomes[1]


def test_output_that_is_not_utf8_is_read_not_raised(tmp_path):
    load = script(tmp_path / "load", "printf '\\377\\376 nbody VALID\\n'")
    outcome = gpu_stress.load_one("u0", [load], 0.01, gpu_stress.time.monotonic() + 60)
    assert outcome.startswith("VALID") and outcome.endswith(" nbody VALID")


def test_a_listed_gpu_without_a_run_fails_the_node():
    problems, _ = gpu_errors.node_problems(record(runs={"0": "VALID 3 run(s)"}))
    assert problems == ["GPU 1 (0000:08:00): no load ran on it"]
    problems, _ = gpu_errors.node_problems(record(runs={}))
    assert problems == ["GPU 0 (0000:07:00): no load ran on it", "GPU 1 (0000:08:00): no load ran on it"]


def test_a_corrected_error_rise_is_a_note_and_each_counter_is_named_once_per_gpu():
    after = gpu_errors.parse_ecc(ECC_NEW.format(dbe=0).replace("DRAM Correctable              : 0",
                                                                  "DRAM Correctable              : 2"))
    problems, notes = gpu_errors.node_problems(record(ecc_after=after))
    assert problems == []
    assert notes == ["GPU 0 (0000:07:00): corrected ECC errors rose: DRAM Correctable 0 -> 2",
                     "GPU 1 (0000:08:00): corrected ECC errors rose: DRAM Correctable 0 -> 2"]


def test_old_layout_single_bit_is_corrected_and_double_bit_fails():
    before = gpu_errors.parse_ecc(ECC_OLD.replace("Device Memory       : 1", "Device Memory       : 0")
                                  .replace("Device Memory       : 7", "Device Memory       : 0"))
    after = gpu_errors.parse_ecc(ECC_OLD)
    rec = record(gpus=[[0, "0000:03:00", "u", "M2070"]], gpus_after=[[0, "0000:03:00", "u", "M2070"]],
                 ecc_before=before, ecc_after=after, runs={"0": "VALID 1 run(s)"})
    problems, notes = gpu_errors.node_problems(rec)
    assert problems == ["GPU 0 (0000:03:00): uncorrectable ECC errors rose: Double Bit/Device Memory 0 -> 1"]
    assert notes == ["GPU 0 (0000:03:00): corrected ECC errors rose: Single Bit/Device Memory 0 -> 7"]
