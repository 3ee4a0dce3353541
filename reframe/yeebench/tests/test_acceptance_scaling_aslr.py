"""AcceptanceScaling's ASLR comparison (paper 003 figs 2 and 4): whether a node can run a point with ASLR
off for its processes alone (`setarch -R`, the node's setting untouched), and ASLR's cost."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from yeebench import scaling
from yeebench.checks.acceptance import acceptance_scaling as acc


def probe(tmp_path, value=None, path=None):
    """(setting read, why not compared) of the probe line; `value`: a stand-in kernel.randomize_va_space,
    None for this machine's own."""
    sysctl = "/proc/sys/kernel/randomize_va_space"
    if value is not None:
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


def test_the_order_turns_round_every_pair():
    assert acc.aslr_order(3) == [("aslr-on", 0), ("aslr-off", 0), ("aslr-off", 1), ("aslr-on", 1),
                                 ("aslr-on", 2), ("aslr-off", 2)]
    order = acc.aslr_order(5)
    assert sorted(order) == [(m, r) for m in ("aslr-off", "aslr-on") for r in range(5)]


@pytest.mark.parametrize("on, off, at_most, above", [
    ([70.0, 72.0, 71.0, 69.0, 73.0], [95.0, 99.0, 97.0, 96.0, 98.0], 1 / 252 + 1e-12, None),  # every off beat every on
    ([70.0, 72.0, 71.0, 69.0, 95.5], [95.0, 99.0, 97.0, 96.0, 98.0], 0.01, None),   # one on ahead of one off
    ([70.0, 72.0, 71.0, 69.0, 96.5], [95.0, 99.0, 97.0, 96.0, 98.0], None, 0.01),   # ahead of two: noise
    ([70.0, 72.0, 71.0], [95.0, 99.0, 97.0], None, 0.049),                          # 3 pairs: never below 1/20
    ([99.0], [99.0], None, 0.99),
])
def test_a_cost_is_judged_by_the_chance_that_noise_ranked_the_runs_so(on, off, at_most, above):
    p = acc.aslr_p_value(on, off)
    assert (at_most is None or p <= at_most) and (above is None or p > above), p


# -- the whole check, run by ReFrame with a stand-in solver -------------------------------------------------
STAND_IN = r"""#!/bin/bash
# A stand-in yee: the rate of a run comes from its report's name (<mode>_<count>_<run>.out) and from
# whether ASLR is off for this process (personality flag ADDR_NO_RANDOMIZE).
while [ $# -gt 0 ]; do [ "$1" = --report ] && out=$2; shift; done
IFS=_ read -r mode n r <<< "${out%.out}"
rate=$(( 900 * n + 100 ))                    # below linear: no point looks superlinear
aslr_off=$(( 0x$(cat /proc/self/personality) & 0x0040000 ))
case $mode in aslr-on|aslr-off) @RULE@ ;; esac
printf '{"schema": "yee-report", "valid": true, "cells": 262144, "steps": 400, "ranks": 1, "threads": 1,
 "mcells_per_s": %s, "seconds": {"total": 0.1}, "energy": 1.5, "checksum": "0123456789abcdef"}
' "$rate" > "$out"
"""
RULES = {
    # ASLR on halves the rate, as the process itself sees it: setarch -R must reach the program
    "personality": "[ $aslr_off -ne 0 ] || rate=$(( rate / 2 ))",
    # the best ASLR-off run is 30 % ahead of the best ASLR-on run, but the other four ASLR-off runs are
    # behind two of the ASLR-on runs: a cost the runs' own spread explains
    "overlap": ("if [ $mode = aslr-off ]; then [ $r = 0 ] || rate=$(( rate * 3 / 5 )); "
                "elif [ $(( r % 2 )) = 1 ]; then rate=$(( rate * 7 / 10 )); else rate=$(( rate / 2 )); fi"),
    # no difference at all
    "none": ":",
}


def run_with_stand_in(tmp_path, rule, expect_rc):
    skip_unless_aslr_can_be_compared(tmp_path)
    from test_suite_checks import REPO, run_reframe
    prefix = stand_in_prefix(tmp_path, rule)
    out = run_reframe("-c", str(REPO / "reframe/yeebench/checks/acceptance/acceptance_scaling.py"),
                      "-n", "AcceptanceScaling%program=yee", "-p", "host", "-r", tmp_path=tmp_path / "rfm",
                      env_extra={"YEEBENCH_PREFIX": str(prefix)}, expect_rc=expect_rc)
    (line,) = [x for x in re.sub(r"\x1b\[[0-9;]*m", "", out.stdout).splitlines() if x.startswith("[acceptance]")]
    return line


def stand_in_prefix(tmp_path, rule):
    """A prefix whose bin/yee is the stand-in with `rule`."""
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    yee = prefix / "bin" / "yee"
    yee.write_text(STAND_IN.replace("@RULE@", RULES[rule]))
    yee.chmod(0o755)
    return prefix


def skip_unless_aslr_can_be_compared(tmp_path):
    """The check's own probe, on this machine: ASLR on, and `setarch -R` allowed (a container may refuse it)."""
    where = tmp_path / "probe"
    where.mkdir(exist_ok=True)
    _, why = probe(where)
    if why:
        pytest.skip(f"this machine cannot compare ASLR on and off: {why}")


def test_a_cost_beyond_the_noise_fails_and_the_log_ends_with_why(tmp_path):
    """Through the acceptance runner, as `make acceptance` runs it: its last lines give ReFrame's reason."""
    skip_unless_aslr_can_be_compared(tmp_path)
    from test_suite_checks import REPO
    prefix = stand_in_prefix(tmp_path, "personality")
    env = dict(os.environ, YEEBENCH_PREFIX=str(prefix), YEEBENCH_VENV=str(Path(sys.executable).parents[1]))
    out = subprocess.run(["bash", str(REPO / "reframe/yeebench/acceptance/run.sh"), str(tmp_path / "out"),
                          "-p", "host", "-n", "AcceptanceScaling%program=yee"],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode != 0, out.stdout + out.stderr
    (line,) = [x for x in out.stdout.splitlines() if x.startswith("[acceptance]")]
    assert line.startswith("[acceptance] FAIL AcceptanceScaling"), line
    assert "ASLR costs 50.0% > 20%" in line and "p = 0.00397" in line, line
    assert "* Reason: sanity error: FAIL: ASLR costs 50.0%" in "\n".join(out.stdout.splitlines()[-8:]), out.stdout


def test_a_cost_within_the_noise_is_not_measured(tmp_path):
    line = run_with_stand_in(tmp_path, "overlap", expect_rc=0)
    assert line.startswith("[acceptance] NOT MEASURED AcceptanceScaling"), line
    assert "within this node's noise" in line and "aslr_pairs=N" in line, line


def test_no_cost_passes(tmp_path):
    line = run_with_stand_in(tmp_path, "none", expect_rc=0)
    assert line.startswith("[acceptance] PASS AcceptanceScaling"), line
    assert "ASLR costs 0.0%" in line, line
