"""Plausibility rules (declared in yeebench.metrics.FIGURES): each flags what it should and only that."""
import json

from results_testutil import run_cli
from yeebench import metrics
from yeebench.results import plausibility

MiB = 2**20


def _rows(metric, values, unit="%", testcase="T", check="Check", params="p=1"):
    return [{"check": check, "metric": metric, "value": v, "unit": unit, "direction": "higher",
             "system": "s", "partition": "p", "environ": "e", "parameters": {"p": params},
             "testcase": testcase} for v in values]


def _rules(warnings):
    return sorted(w["rule"] for w in warnings)


def test_every_figure_declares_its_rules_in_one_place():
    assert metrics.figure("parallel_efficiency").non_negative and not metrics.figure("anything_else").non_negative
    assert metrics.AT_MOST_100_PERCENT in metrics.figure("parallel_efficiency").rules
    assert metrics.WITHIN_MODEL_BOUND in metrics.figure("efficiency_1024B").rules
    assert metrics.figure("anything_else").rules == (metrics.REPEATS_AGREE,)


def test_a_direction_is_declared_by_the_check_and_only_inferred_where_it_is_not():
    assert metrics.resolve_direction("triad_bw", "GB/s", {"triad_bw": "higher"}) == ("higher", "declared")
    assert metrics.resolve_direction("halo_share", "%", {"halo_share": "lower"}) == ("lower", "declared")
    assert metrics.resolve_direction("triad_bw", "GB/s", None) == ("higher", "inferred")
    assert metrics.resolve_direction("halo_share", "%", {}) == ("unknown", "unknown")
    assert not {"direction", "unit"} & set(metrics.Figure._fields)   # the check declares both (add_fom)


def test_efficiency_above_100_beyond_noise():
    assert _rules(plausibility.evaluate(_rows("parallel_efficiency", [142.8, 141.0, 143.0]))) == \
        [metrics.AT_MOST_100_PERCENT]
    assert plausibility.evaluate(_rows("parallel_efficiency", [101.0, 99.5, 100.4])) == []  # within noise
    assert plausibility.evaluate(_rows("parallel_efficiency", [94.0])) == []


def test_collective_faster_than_its_model_bound():
    warnings = plausibility.evaluate(_rows("efficiency_1024B", [130.0, 131.0, 129.0]))
    assert _rules(warnings) == [metrics.WITHIN_MODEL_BOUND] and "alpha-beta" in warnings[0]["message"]


def test_numa_bw_working_set_against_the_last_level_cache():
    rows = _rows("triad_bw", [40.0], unit="GB/s", testcase="small")
    warnings = plausibility.evaluate(rows, working_sets={"small": 48 * MiB}, llc_bytes=32 * MiB)
    assert _rules(warnings) == [metrics.WORKING_SET_OVER_LLC] and "48 MiB" in warnings[0]["message"]
    assert plausibility.evaluate(rows, working_sets={"small": 768 * MiB}, llc_bytes=32 * MiB) == []
    assert plausibility.evaluate(rows, working_sets={"small": 48 * MiB}, llc_bytes=None) == []  # unknown LLC


def test_bandwidth_above_the_measured_memory_peak():
    rows = (_rows("triad_bw", [12.0, 12.2, 11.9], unit="GB/s", testcase="big", params="dram")
            + _rows("copy_bw", [58.0, 57.0, 59.0], unit="GB/s", testcase="small", params="cache"))
    warnings = plausibility.evaluate(rows, working_sets={"big": 768 * MiB, "small": 48 * MiB}, llc_bytes=32 * MiB)
    assert _rules(warnings) == [metrics.WITHIN_MEMORY_PEAK, metrics.WORKING_SET_OVER_LLC]
    assert "12 GB/s" in next(w for w in warnings if w["rule"] == metrics.WITHIN_MEMORY_PEAK)["message"]


def test_repeats_that_disagree():
    warnings = plausibility.evaluate(_rows("triad_bw", [1.4, 30.0, 58.0], unit="GB/s"))
    assert _rules(warnings) == [metrics.REPEATS_AGREE] and "x41.4" in warnings[0]["message"]


def test_a_curve_size_that_disagrees_between_repeats_prints_nothing_but_its_summary_figure_does():
    """A noisy host would otherwise print a warning per message size; the gate judges sizes with their noise."""
    spread = [1.0, 5.0, 9.0]
    assert plausibility.evaluate(_rows("curve_latency_8192B", spread, unit="us", check="OsuPt2Pt")) == []
    assert plausibility.evaluate(_rows("curve_bw_65536B", spread, unit="MB/s", check="NetPIPEPt2Pt")) == []
    assert _rules(plausibility.evaluate(_rows("latency_1B", spread, unit="us", check="OsuPt2Pt"))) == \
        [metrics.REPEATS_AGREE]


def test_a_container_leg_far_from_the_native_one():
    # 510.5 %: make test-containers-spack at load 2 to 4, the container leg's first run met a quiet moment
    warnings = plausibility.evaluate(_rows("ratio_mcells", [510.5]))
    assert _rules(warnings) == [metrics.CONTAINER_LIKE_NATIVE] and "x5.1 faster" in warnings[0]["message"]
    latency = _rows("ratio_latency_1B", [60.6])
    latency[0]["direction"] = "lower"
    assert "x1.7 faster" in plausibility.evaluate(latency)[0]["message"]
    for ordinary in (85.2, 99.2, 127.6, 74.9):     # recorded container/native ratios of this machine
        assert plausibility.evaluate(_rows("ratio_peak_bw", [ordinary])) == [], ordinary


def test_size_parsing():
    assert plausibility.parse_size("16Mi") == 16 * MiB and plausibility.parse_size("128M") == 128_000_000
    assert plausibility.parse_size("4096") == 4096 and plausibility.parse_size("lots") is None


def test_ingest_records_and_prints_the_warnings(tmp_path):
    from results_testutil import FIXTURES
    report = FIXTURES / "reports" / "suite_smoke_fdtd_numa.json"
    proc = run_cli("results", "ingest", report, "--results-dir", tmp_path / "results")
    assert proc.returncode == 0, proc.stderr
    prov = json.loads((tmp_path / proc.stdout.strip() / "provenance.json").read_text()
                      if not proc.stdout.strip().startswith("/") else
                      open(proc.stdout.strip() + "/provenance.json").read())
    flagged = prov["plausibility"]["warnings"]
    if prov["plausibility"]["llc_bytes"] and prov["plausibility"]["llc_bytes"] * 4 > 48 * MiB:
        # the smoke numa-bw arrays (3 x 16 MiB) against this machine's last-level cache
        assert {w["rule"] for w in flagged} >= {metrics.WORKING_SET_OVER_LLC}
        assert proc.stderr.count("plausibility warning") == len(flagged)
    else:   # a cache of at most 12 MiB (or none known): 48 MiB of arrays measure memory
        assert metrics.WORKING_SET_OVER_LLC not in {w["rule"] for w in flagged}


def test_inter_node_bandwidth_above_the_link_rate():
    gbit = 1e9   # a 1 Gbit/s link carries at most 125 MB/s each way
    burst = _rows("peak_bw", [214.0, 188.0, 201.0], unit="MB/s", testcase="inter")
    warnings = plausibility.evaluate(burst, link_rates={"inter": gbit})
    assert _rules(warnings) == [metrics.WITHIN_LINK_RATE] and "125 MB/s" in warnings[0]["message"]
    sustained = _rows("bw_large", [117.0, 118.0, 117.5], unit="MB/s", testcase="inter")
    assert plausibility.evaluate(sustained, link_rates={"inter": gbit}) == []
    both_ways = _rows("peak_bibw", [230.0, 231.0, 229.0], unit="MB/s", testcase="inter")
    assert plausibility.evaluate(both_ways, link_rates={"inter": gbit}) == []   # bound: 2 x 125 MB/s
    assert plausibility.evaluate(burst, link_rates={}) == []                    # intra-node or undeclared


def test_ingest_flags_a_bandwidth_above_the_declared_link(tmp_path):
    from results_testutil import REPORT_A
    report = json.loads(REPORT_A.read_text())
    for case in report["runs"][0]["testcases"]:
        if case["unique_name"] == "FixturePt2pt_1":   # 151 MB/s peak
            case["perfvalues"] = {k.replace("bandwidth_peak", "peak_bw"): v for k, v in case["perfvalues"].items()}
            case["link_rate_bps"] = 1e9
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    proc = run_cli("results", "ingest", path, "--results-dir", tmp_path / "results")
    assert proc.returncode == 0, proc.stderr
    assert "within-link-rate" in proc.stderr and "FixturePt2pt" in proc.stderr


def cache_and_memory_sized_arrays(llc):
    """(cache-sized, memory-sized) bytes per numa-bw array for a last-level cache of `llc` bytes: the
    three small arrays fill at most 3/8 of the cache, the three large ones at least 6x it."""
    small = min(4 * MiB, llc // 8 // MiB * MiB or llc // 8)
    large = max(128 * MiB, -(-2 * llc // MiB) * MiB)
    return small, large


def warned_case(line):
    """{array_size, policy} of the case a warning line of ingest names first (its message may name others)."""
    case = line.split("plausibility warning: ", 1)[-1].split(" triad_bw: ")[0].split(" ", 1)[-1]
    params = dict(kv.split("=", 1) for kv in case.split(",") if "=" in kv)
    return {"array_size": params.get("array_size"), "policy": params.get("policy")}


def test_the_arrays_are_sized_from_the_last_level_cache():
    for llc in (32 * MiB, 260 * MiB, 8 * MiB, 1536 * 1024):
        small, large = cache_and_memory_sized_arrays(llc)
        assert 3 * small <= llc / 2 and 3 * large >= plausibility.WORKING_SET_FACTOR * llc, (llc, small, large)
    assert cache_and_memory_sized_arrays(260 * MiB) == (4 * MiB, 520 * MiB)
    assert cache_and_memory_sized_arrays(32 * MiB) == (4 * MiB, 128 * MiB)


def test_a_cache_sized_numa_run_beside_a_memory_sized_one_is_flagged_by_make_run(tmp_path):
    # the user's path: run.sh with ReFrame's -P, the real numa-bw and ingest; measured here (32 MiB L3)
    # 55-60 GB/s with 3 x 4 MiB arrays against 25 GB/s with 3 x 128 MiB. Both sizes come from the
    # last-level cache ingest judges against (YEEBENCH_SIMULATE_HW=llc=... simulates another one).
    import os
    import subprocess
    from pathlib import Path
    import pytest
    from yeebench.results import host_info
    repo = Path(__file__).resolve().parents[4]
    prefix = repo / "build" / "install"
    if not (prefix / "bin" / "numa-bw").exists() or not (repo / ".venv" / "bin" / "reframe").exists():
        pytest.skip(f"no numa-bw in {prefix}/bin or no .venv (make build venv)")
    llc = host_info.llc_bytes()
    if not llc:
        pytest.skip("the last-level cache size is unknown here (sysfs lists no cache): nothing to size from")
    small, large = cache_and_memory_sized_arrays(llc)
    available = host_info.memory_bytes()
    if available is None or 3 * large > available / 2:
        pytest.skip(f"a memory-sized run needs 3 x {large // MiB} MiB (6x the {llc // MiB} MiB last-level "
                    f"cache); available memory is {available and available // MiB} MiB")
    sizes = f"{small // MiB}Mi" if small % MiB == 0 else str(small), f"{large // MiB}Mi"
    env = dict(os.environ, PREFIX=str(prefix), RESULTS_DIR=str(tmp_path / "results"),
               YEEBENCH_RFM_DIR=str(tmp_path / "rfm"), RUN_SELECTION="-n NumaBandwidth")
    proc = subprocess.run(["bash", "reframe/run.sh", "-P", "array_size=" + ",".join(sizes), "-x", "remote"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    if proc.returncode == 0 and "triad_bw:" not in out:
        pytest.skip("NumaBandwidth measured nothing here (skipped: no numactl?)")
    assert proc.returncode == 0, out[-2000:]
    flagged = [line for line in out.splitlines() if "plausibility warning" in line and "triad_bw" in line]
    assert any(f"array_size={sizes[0]}" in line and "[working-set-4x-llc]" in line for line in flagged), out[-2000:]
    assert not any(f"warning: NumaBandwidth array_size={sizes[1]}" in line for line in flagged), flagged
    # Whether the cache-sized arrays measured faster than memory is the run's outcome, not the rule's:
    # a busy machine, or a memory-sized run that still fit a large cache, can leave them slower. The
    # rule must flag exactly the cache-sized cases above the memory peak (one repeat: 2 % allowance).
    triad = {}
    for rows in (tmp_path / "results").glob("*/*/rows.jsonl"):
        for line in rows.read_text().splitlines():
            row = json.loads(line)
            if row["metric"] == "triad_bw":
                triad[(row["parameters"]["array_size"], row["parameters"].get("policy"))] = row["value"]
    peak = max(v for (size, _), v in triad.items() if size == sizes[1])
    above = {policy: v for (size, policy), v in triad.items() if size == sizes[0] and v > peak * 1.02}
    for (size, policy), value in triad.items():
        warned = any(warned_case(line) == {"array_size": size, "policy": policy}
                     and "[within-measured-memory-peak]" in line for line in flagged)
        assert warned == (policy in above and size == sizes[0]), (size, policy, value, peak, flagged)
    if not above:
        small = ", ".join(f"{v:.3g}" for (size, _), v in sorted(triad.items()) if size == sizes[0])
        pytest.skip(f"the cache-sized run (3 x {sizes[0]} arrays) measured {small} GB/s, "
                    f"not above the memory-sized peak {peak:.3g} GB/s (load average {os.getloadavg()[0]:.1f}): "
                    "this run could not show the memory-peak rule; the rule kept quiet, as it should")


def _curve(values, check="OsuPt2Pt", params="transport=ob1-vader"):
    rows = []
    for metric, value in values.items():
        unit = "ns/B" if metric == "hockney_beta" else "us"
        rows += _rows(metric, [value], unit=unit, check=check, params=params, testcase=check)
    return rows


def test_a_latency_far_above_the_small_size_fit():
    # osu_latency inside `docker run` (single-copy refused, vader retrying each message): 96.35 us at 4 KB
    failing = _curve({"latency_1B": 1.1, "latency_4KB": 96.35, "hockney_alpha": 1.0, "hockney_beta": 0.25})
    warnings = plausibility.evaluate(failing)
    assert _rules(warnings) == [metrics.LATENCY_ON_SMALL_SIZE_FIT]
    assert warnings[0]["metric"] == "latency_4KB" and "single-copy" in warnings[0]["message"]
    # NetPIPE on this machine, single-copy on: 0.09 us at 1 B, 1.93 us at 4 KB, beta 0.105 ns/B
    healthy = _curve({"latency_1B": 0.09, "latency_4KB": 1.93, "hockney_beta": 0.105})
    assert plausibility.evaluate(healthy) == []


def test_a_collective_curve_is_judged_on_its_own_small_sizes():
    # osu_allreduce, 2 ranks, coll/tuned, on this machine
    healthy = {"latency_1B": 0.16, "latency_64B": 0.17, "latency_128B": 0.18, "latency_256B": 0.25,
               "latency_512B": 0.32, "latency_1024B": 0.32, "latency_2048B": 0.52, "latency_4096B": 0.88,
               "latency_1048576B": 180.0}   # bandwidth-bound sizes are not judged
    assert plausibility.evaluate(_curve(healthy, check="OsuCollective")) == []
    failing = dict(healthy, latency_4096B=97.0, latency_8192B=120.0)
    warnings = plausibility.evaluate(_curve(failing, check="OsuCollective"))
    assert sorted(w["metric"] for w in warnings) == ["latency_4096B", "latency_8192B"]


def test_a_curve_without_small_sizes_or_with_tcp_latencies_is_not_flagged():
    assert plausibility.evaluate(_curve({"latency_4KB": 96.0})) == []                     # nothing to fit
    assert plausibility.evaluate(_curve({"latency_1B": 21.0, "latency_4KB": 48.0})) == []   # TCP: alpha dominates
    other_case = _curve({"latency_1B": 1.0}, params="a") + _curve({"latency_4KB": 96.0}, params="b")
    assert plausibility.evaluate(other_case) == []                  # one case's fit never judges another


def test_the_network_latency_spread_is_a_diagnostic_without_rules():
    # max - min pair latency: 0 on two nodes, so any later nonzero value is an infinite change
    spread = metrics.figure("latency_spread")
    assert spread.pattern == "latency_spread" and spread.meaning
    assert not spread.gated and spread.rules == () and spread.non_negative
    assert metrics.figure("latency_median").pattern == "latency_*" and metrics.figure("latency_median").gated
    rows = _rows("latency_spread", [0.0, 0.0, 3.5], unit="us", check="AcceptanceNetwork")
    assert plausibility.evaluate(rows) == []
    assert _rules(plausibility.evaluate(_rows("latency_median", [1.0, 1.0, 3.5], unit="us"))) == \
        [metrics.REPEATS_AGREE]
    from yeebench.results import compare
    assert compare._diagnostic_not_gated({"metric": "latency_spread", "verdict": "regressed"})["verdict"] == "changed"
