"""A ReFrame run report at a whole machine's size, made from the recorded smoke run (27 test cases).

A scale of S is the smoke run on S nodes (node0001 ... ), as `reframe --distribute` runs it: each
node runs the 27 cases in one of ENVIRONS, the nodes spread over up to 16 partitions. Every case of
a node carries ReFrame's `%.part=<system>:<partition> %.nid=<node>` parameters, its node as its
node list and its figures jittered, and one node in SLOW_EVERY is slower by SLOW_FACTOR (the
outliers a report must name). Each partition of two or more nodes adds an AcceptanceNetwork case
whose pair matrix over the partition's nodes is recorded as that check records it: one
`pair A - B: L us, B MB/s` line per pair in `acceptance_details`, the medians and extremes as its
figures. So x100 is a 2,716-test-case run over 100 nodes, 16 partitions and 4 environments.

The report is written as a stream (write_scaled_report): x1000 is a 200 MB file, built without
holding it in memory.
"""
import json
import random
import statistics
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "reframe/yeebench/results/tests/fixtures/reports/suite_smoke_run.json"
PARTITIONS = 16
ENVIRONS = ("host", "spack", "PrgEnv-gnu", "PrgEnv-cray")
SLOW_EVERY = 37      # node k is slow when k % SLOW_EVERY == SLOW_AT
SLOW_AT = 5
SLOW_FACTOR = 1.6    # a slow node's times are this much longer, its rates this much lower
PAIR_LATENCY_US = 1.3
PAIR_BANDWIDTH_MBS = 11000.0


def node_name(index):
    return f"node{index + 1:04d}"


def is_slow(index):
    return index % SLOW_EVERY == SLOW_AT


def layout(scale, partitions=PARTITIONS):
    """(partitions, {partition: [node indices]}, [(partition, environ, node index) per copy])."""
    count = min(partitions, scale)
    partitions = [f"part{p:02d}" for p in range(count)]
    copies = [(partitions[c % count], ENVIRONS[(c // count) % len(ENVIRONS)], c) for c in range(scale)]
    nodes = {p: [c for part, _, c in copies if part == p] for p in partitions}
    return partitions, nodes, copies


def _slowed(value, direction, slow):
    if not slow:
        return value
    return value / SLOW_FACTOR if direction == "higher" else value * SLOW_FACTOR if direction == "lower" else value


def _copy_case(text, case, partition, environ, node, copy_index, rng):
    tc = json.loads(text)
    system = case["system"]
    old_where, new_where = f"{system}:{case['partition']}", f"{system}:{partition}"
    node_text = node_name(node)
    if tc.get("fixture"):
        for key in ("name", "display_name"):
            tc[key] = tc[key].replace(f"~{old_where}+{case['environ']}", f"~{new_where}+{environ}")
    else:
        # reframe --distribute: one variant per partition and node, shown as .part / .nid parameters
        suffix = f" %.part={new_where} %.nid={node_text}"
        tc["display_name"] = case["display_name"] + suffix
        tc["name"] = case["name"] + suffix
        tc["job_nodelist"] = [node_text] if case.get("job_nodelist") else []
    tc["unique_name"] = f"{case['unique_name']}_{copy_index}"
    tc["short_name"] = tc["unique_name"]
    tc["partition"], tc["environ"] = partition, environ
    tc["valid_systems"] = [new_where]
    tc["uuid"] = f"{case.get('uuid', '')}:{copy_index}"
    if case.get("jobid") is not None:
        tc["jobid"] = str(100000 + copy_index * 32 + len(tc["uuid"]) % 32)
    directions = case.get("perf_directions") or {}
    perf = {}
    for key, entry in (case.get("perfvalues") or {}).items():
        metric = key.split(":")[-1]
        entry = list(entry)
        if isinstance(entry[0], (int, float)) and not isinstance(entry[0], bool):
            entry[0] = _slowed(entry[0] * rng.lognormvariate(0, 0.02), directions.get(metric), is_slow(node))
        perf[f"{new_where}:{metric}"] = entry
    tc["perfvalues"] = perf
    return tc


def network_case(template, system, partition, nodes, rng, missing_pairs=()):
    """AcceptanceNetwork over the partition's nodes: every pair's latency and bandwidth in its details."""
    tc = json.loads(json.dumps(template))
    names = [node_name(n) for n in nodes]
    lat, bw = {}, {}
    for i, a in enumerate(nodes):
        for b in nodes[i + 1:]:
            if (node_name(a), node_name(b)) in missing_pairs:
                continue
            slow = SLOW_FACTOR if is_slow(a) or is_slow(b) else 1.0
            lat[(a, b)] = PAIR_LATENCY_US * slow * rng.lognormvariate(0, 0.03)
            bw[(a, b)] = PAIR_BANDWIDTH_MBS / slow * rng.lognormvariate(0, 0.03)
    details = [f"pair {node_name(a)} - {node_name(b)}: {lat[(a, b)]:.2f} us, {bw[(a, b)]:.0f} MB/s"
               for a, b in sorted(lat)]
    where = f"{system}:{partition}"
    tc.update({
        "display_name": "AcceptanceNetwork", "name": "AcceptanceNetwork", "unique_name": f"AcceptanceNetwork_{partition}",
        "short_name": f"AcceptanceNetwork_{partition}", "partition": partition, "environ": ENVIRONS[0],
        "valid_systems": [where], "job_nodelist": names, "num_tasks": len(names), "num_nodes": len(names),
        "num_tasks_per_node": 1, "uuid": f"{tc.get('uuid', '')}:net:{partition}", "result": "pass",
        "acceptance_details": details, "acceptance_verdict": "",
        "acceptance_reason": f"{len(lat)} pair(s) of {len(names)} nodes measured, collectives correct",
        "descr": "Network: pair matrix with simultaneous pairs over 2 or more nodes",
        "perf_directions": {"latency_median": "lower", "latency_max": "lower", "bandwidth_median": "higher",
                            "bandwidth_min": "higher", "allreduce_8B": "lower"},
        "observations": {},
    })
    figures = {"latency_median": (statistics.median(lat.values()), "us"), "latency_max": (max(lat.values()), "us"),
               "bandwidth_median": (statistics.median(bw.values()), "MB/s"),
               "bandwidth_min": (min(bw.values()), "MB/s"),
               "allreduce_8B": (3.0 * PAIR_LATENCY_US * max(1, len(names)).bit_length(), "us")}
    tc["perfvalues"] = {f"{where}:{m}": [v, 0, None, None, unit, "pass"] for m, (v, unit) in figures.items()}
    return tc


def scaled_cases(base, scale, seed=7, partitions=PARTITIONS):
    """Every test case of the scaled run, in order (a generator: x1000 is 27,000 cases)."""
    rng = random.Random(seed)
    cases = [tc for run in base["runs"] for tc in run["testcases"]]
    texts = [json.dumps(tc) for tc in cases]
    partitions, nodes, copies = layout(scale, partitions)
    for partition, environ, node in copies:
        for case, text in zip(cases, texts):
            yield _copy_case(text, case, partition, environ, node, node, rng)
    template = next((tc for tc in cases if tc["display_name"].startswith("Acceptance")), None)
    system = cases[0]["system"]
    for partition in partitions:
        if template is not None and len(nodes[partition]) >= 2:
            yield network_case(template, system, partition, nodes[partition], rng)


def _session(base, count):
    info = dict(base["session_info"], num_cases=count)
    run = {k: v for k, v in base["runs"][0].items() if k != "testcases"}
    return info, dict(run, num_cases=count)


def scaled_report(source=SOURCE, scale=1, seed=7, partitions=PARTITIONS):
    """The scaled report as one dict (small scales; tests), over at most `partitions` partitions."""
    base = json.loads(Path(source).read_text())
    cases = list(scaled_cases(base, scale, seed, partitions))
    info, run = _session(base, len(cases))
    return dict(base, session_info=info, runs=[dict(run, testcases=cases)])


def write_scaled_report(path, scale, source=SOURCE, seed=7):
    """Write the scaled report to path, case by case; returns the number of test cases."""
    base = json.loads(Path(source).read_text())
    partitions, nodes, _ = layout(scale)
    count = scale * sum(1 for run in base["runs"] for _ in run["testcases"]) + sum(
        1 for p in partitions if len(nodes[p]) >= 2)
    info, run = _session(base, count)
    head = {k: v for k, v in base.items() if k not in ("session_info", "runs")}
    with open(path, "w") as out:
        out.write(json.dumps(dict(head, session_info=info))[:-1])
        out.write(', "runs": [' + json.dumps(run)[:-1] + ', "testcases": [')
        for index, case in enumerate(scaled_cases(base, scale, seed)):
            out.write((", " if index else "") + json.dumps(case))
        out.write("]}]}\n")
    return count
