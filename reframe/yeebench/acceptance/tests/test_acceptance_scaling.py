"""Speedup, efficiency and the knee (paper 003: scaling stops past 12 threads per node)."""
import os
import shutil
import subprocess

import pytest

from yeebench import scaling
from yeebench.scaling import analyse, powers_of_two_upto, summary

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "checks", "acceptance", "src")


def test_paper_like_curve_has_knee_past_twelve():
    # ideal up to 12 threads, flat beyond (shared instruction cache thrashing)
    points = {1: 10.0, 2: 20.0, 4: 40.0, 8: 80.0, 12: 120.0, 16: 125.0, 24: 126.0}
    rows, knee = analyse(points)
    assert knee == 16
    assert rows[4]["speedup"] == pytest.approx(12) and rows[4]["efficiency"] == pytest.approx(1)
    assert rows[-1]["efficiency"] == pytest.approx(126 / 10 / 24)
    assert "knee at 16 workers" in summary("threads", rows, knee, "Mcells/s")


def test_ideal_scaling_has_no_knee_and_base_other_than_one():
    rows, knee = analyse({2: 4.0, 4: 8.0, 8: 16.0})
    assert knee is None and all(r["efficiency"] == pytest.approx(1) for r in rows)
    assert summary("p", rows, knee, "GB/s").endswith("no knee")


def test_slowdown_is_a_knee_at_once():
    rows, knee = analyse({1: 10.0, 2: 5.0})
    assert knee == 2 and rows[1]["speedup"] == 0.5


def test_single_point():
    rows, knee = analyse({1: 3.0})
    assert knee is None and rows[0]["speedup"] == 1.0 and rows[0]["marginal"] is None


@pytest.mark.parametrize("points, message", [
    ({}, "no scaling points"), ({0: 1.0}, "not a positive integer"), ({1: 0.0}, "not positive"),
    ({1: None}, "not positive"), ({1.5: 1.0}, "not a positive integer"),
])
def test_bad_points(points, message):
    with pytest.raises(ValueError, match=message):
        analyse(points)


def test_counts():
    assert powers_of_two_upto(1) == [1]
    assert powers_of_two_upto(2) == [1, 2]
    assert powers_of_two_upto(24) == [1, 2, 4, 8, 16, 24]
    with pytest.raises(ValueError):
        powers_of_two_upto(0)


def fake_sysfs(root, caches):
    """cpu*/cache/index*/ entries: caches = [(cpu, index, level, type, size, shared_cpu_list)]."""
    for cpu, index, level, kind, size, shared in caches:
        d = root / f"cpu{cpu}" / "cache" / f"index{index}"
        d.mkdir(parents=True)
        for name, value in (("level", level), ("type", kind), ("size", size), ("shared_cpu_list", shared)):
            (d / name).write_text(f"{value}\n")
    return str(root)


def test_llc_of_a_two_socket_node_counts_both_instances(tmp_path):
    caches = [(c, i, lvl, kind, size, shared) for c in range(4) for i, lvl, kind, size, shared in (
        (0, 1, "Data", "32K", str(c)), (1, 1, "Instruction", "32K", str(c)), (2, 2, "Unified", "1024K", str(c)),
        (3, 3, "Unified", "32768K", "0-1" if c < 2 else "2-3"))]
    llc, how = scaling.llc_from_sysfs(fake_sysfs(tmp_path, caches))
    assert llc == 2 * 32 * 2**20 and how == "L3 2 x 32 MiB"
    assert scaling.triad_array_bytes(llc) == 256 * 2**20  # 4x: never the cache's own bandwidth
    assert scaling.llc_from_sysfs(str(tmp_path / "none"))[0] is None


def test_llc_from_a_reframe_processor_entry():
    info = {"topology": {"caches": [{"type": "L2", "size": 2**20, "cpusets": ["0x1", "0x2"]},
                                    {"type": "L3", "size": 32 * 2**20, "cpusets": ["0x3"]}]}}
    assert scaling.llc_from_reframe(info)[0] == 32 * 2**20
    assert scaling.llc_from_reframe({})[0] is None
    assert scaling.triad_array_bytes(3 * 2**20 + 1) == 13 * 2**20


def test_triad_line_must_match_the_launch():
    line = "triad ranks 2 threads 1 bytes_per_array 134217728 best_GBs 12.5 avg_GBs 11.0 VALID\n"
    assert scaling.parse_triad("mpirun noise\n" + line, 2, 1) == 12.5
    with pytest.raises(ValueError, match="ran 2 rank"):
        scaling.parse_triad(line, 1, 2)
    with pytest.raises(ValueError, match="INVALID"):
        scaling.parse_triad(line.replace(" VALID", " INVALID"), 2, 1)
    with pytest.raises(ValueError, match="no 'triad ranks"):
        scaling.parse_triad("", 2, 1)


@pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None, reason="no MPI")
def test_processes_are_one_job_timed_over_one_interval(tmp_path):
    # two ranks report one aggregate line from one communicator, not two figures to add up
    exe = tmp_path / "triad_mpi"
    subprocess.run(["mpicc", "-O2", "-fopenmp", "-Wall", "-Werror", "-o", str(exe), os.path.join(SRC, "triad_mpi.c")],
                   check=True, timeout=120)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")
    done = subprocess.run(["mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none", str(exe),
                           "--bytes", str(8 * 2**20), "--repeats", "3"], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(scaling.TRIAD_LINE.findall(done.stdout)) == 1
    assert scaling.parse_triad(done.stdout, 2, 1) > 0
    bad = subprocess.run([str(exe), "--bytes", "10"], capture_output=True, text=True, timeout=60, env=env)
    assert bad.returncode == 2 and "out of range" in bad.stderr


def test_efficiency_above_ideal_is_flagged():
    rows, _ = analyse({1: 10.0, 2: 25.6})  # two processes "summed" from runs that did not overlap
    assert scaling.superlinear({"processes": rows}) == "processes 2: efficiency 128%"
    rows, _ = analyse({1: 10.0, 2: 21.0})  # 105%: within the noise slack
    assert scaling.superlinear({"threads": rows}) == ""
