"""AcceptanceScaling's ASLR comparison (paper 003 figs 2 and 4): whether a node can run a point with ASLR
off for its processes alone (`setarch -R`, the node's setting untouched), and ASLR's cost."""
import shutil
import subprocess

import pytest

from yeebench import scaling
from yeebench.checks.acceptance import acceptance_scaling as acc


def probe(tmp_path, value, path=None):
    sysctl = tmp_path / "randomize_va_space"
    sysctl.write_text(f"{value}\n")
    env = {"PATH": path or "/usr/bin:/bin"}
    subprocess.run([shutil.which("bash"), "-c", acc.aslr_probe_line(sysctl=str(sysctl))], cwd=tmp_path, env=env, check=True)
    marker = tmp_path / acc.ASLR_NOT_COMPARED
    setting = (tmp_path / acc.ASLR_SETTING).read_text().strip()
    return setting, marker.read_text().strip() if marker.exists() else ""


def test_aslr_already_off_leaves_nothing_to_compare(tmp_path):
    setting, why = probe(tmp_path, 0)
    assert setting == "kernel.randomize_va_space 0" and "already off" in why


def test_no_setarch_is_not_compared(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    for tool in ("cat", "head", "uname"):
        (empty / tool).symlink_to(shutil.which(tool))
    _, why = probe(tmp_path, 2, path=str(empty))
    assert why.startswith("no setarch on the node")


def test_a_refused_personality_is_not_compared(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "setarch"
    fake.write_text("#!/bin/sh\necho 'setarch: failed to set personality to x86_64: Operation not permitted' >&2\n"
                    "exit 1\n")
    fake.chmod(0o755)
    _, why = probe(tmp_path, 2, path=f"{bin_dir}:/usr/bin:/bin")
    assert why == ("setarch -R could not turn ASLR off for a process: "
                   "setarch: failed to set personality to x86_64: Operation not permitted")


@pytest.mark.skipif(not shutil.which("setarch"), reason="no setarch here")
def test_this_node_can_compare_without_changing_its_setting(tmp_path):
    before = open("/proc/sys/kernel/randomize_va_space").read()
    setting, why = probe(tmp_path, 2)
    assert why == "" or "could not turn ASLR off" in why  # a container may refuse the personality flag
    assert open("/proc/sys/kernel/randomize_va_space").read() == before


def test_aslr_cost_is_the_share_of_the_aslr_off_figure_lost():
    assert scaling.aslr_cost(90.0, 100.0) == pytest.approx(10.0)
    assert scaling.aslr_cost(105.0, 100.0) == pytest.approx(-5.0)
    with pytest.raises(ValueError):
        scaling.aslr_cost(1.0, 0.0)


@pytest.mark.parametrize("on, off, judged", [
    ([70.0, 72.0, 71.0], [95.0, 99.0, 97.0], True),     # every ASLR-off run beats every ASLR-on run
    ([70.0, 96.0, 71.0], [95.0, 99.0, 97.0], False),    # one ASLR-on run among the ASLR-off ones: noise
    ([99.0], [99.0], False),
])
def test_an_aslr_cost_is_judged_only_beyond_the_runs_own_spread(on, off, judged):
    assert acc.beyond_noise(on, off) is judged
