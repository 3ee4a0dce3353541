#!/usr/bin/env python3
"""Runs the installed-layout probes (affinity, numa-bw, halo) on this machine and checks what they report.

Usage: probe_tests.py BIN_DIR CASE   (ctest runs one CASE per test; `probe_tests.py BIN_DIR list` lists them)
Only the Python standard library is used, so this works before the project's virtualenv exists.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

BIN = None
CASES = {}
TIMEOUT = 90


def case(fn):
    CASES[fn.__name__] = fn
    return fn


class Failure(Exception):
    pass


def require(cond, message):
    if not cond:
        raise Failure(message)


def env(**extra):
    # Hermetic: the caller's OpenMP placement settings would change what the probes must report.
    e = {k: v for k, v in os.environ.items() if k not in ("OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY")}
    e["OMP_NUM_THREADS"] = "1"
    if os.geteuid() == 0:  # Open MPI refuses root without these
        e["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        e["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    e.update({k: str(v) for k, v in extra.items()})
    return e


def run(args, expect_rc=0, **extra_env):
    started = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT, env=env(**extra_env))
    proc.wall_s = time.monotonic() - started  # no timing the program reports can exceed its whole run
    if expect_rc is not None and proc.returncode != expect_rc:
        raise Failure(f"{' '.join(args)}: exit {proc.returncode}, wanted {expect_rc}\n"
                      f"stdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}")
    return proc


def mpirun(nprocs, *args):
    return ["mpirun", "-np", str(nprocs), "--oversubscribe", *args]


def prog(name):
    return os.path.join(BIN, name)


def doc(proc):
    try:
        d = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        raise Failure(f"stdout is not one JSON document ({e}): {proc.stdout[:500]}")
    d["_wall_s"] = getattr(proc, "wall_s", None)  # the run's wall time, measured here (not the program's)
    return d


def usable_cpus():
    return sorted(os.sched_getaffinity(0))


def memory_nodes():
    """NUMA nodes with memory, from sysfs (node 0 when the kernel has no NUMA support)."""
    try:
        text = open("/sys/devices/system/node/has_memory").read().strip()
    except OSError:
        return [0]
    nodes = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        nodes.extend(range(int(lo), int(hi or lo) + 1))
    return nodes


def numactl_nodes():
    """NUMA node -> CPUs, as `numactl --hardware` (libnuma, not our sysfs reader) reports them."""
    out = subprocess.run(["numactl", "--hardware"], capture_output=True, text=True, timeout=30).stdout
    nodes = {}
    for line in out.splitlines():
        words = line.split()
        if len(words) >= 3 and words[0] == "node" and words[2] == "cpus:":
            nodes[int(words[1])] = [int(c) for c in words[3:]]
    return nodes


def one_line_error(proc, program):
    lines = proc.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith(f"{program}: error: ")]
    require(len(errors) == 1, f"expected one '{program}: error:' line, stderr was: {proc.stderr!r}")
    require("Traceback" not in proc.stderr and "Segmentation" not in proc.stderr, "crash on bad input")


# ---------------------------------------------------------------- affinity

@case
def affinity_single_process_json():
    d = doc(run([prog("affinity")], OMP_NUM_THREADS=2))
    require(d["program"] == "affinity" and d["schema_version"] == 1, "wrong program/schema")
    require(d["ranks"] == 1 and d["threads_per_rank"] == 2, f"ranks/threads: {d['ranks']}/{d['threads_per_rank']}")
    hosts = d["hosts"]
    require(len(hosts) == 1 and hosts[0]["usable_cpu_count"] == len(usable_cpus()), f"hosts: {hosts}")
    require(hosts[0]["numa_nodes"] == len(numactl_nodes()) and hosts[0]["cores"] >= 1, f"hosts: {hosts}")
    rows = d["placement"]
    require(sorted(r["thread"] for r in rows) == [0, 1], "one row per OpenMP thread")
    for r in rows:
        for key in ("host", "rank", "thread", "cpus", "cpu", "numa_node", "mempolicy"):
            require(key in r, f"missing key {key}")
        require(r["cpu"] in r["cpus"], f"current CPU {r['cpu']} outside its set {r['cpus']}")
        require(r["cpus"] == usable_cpus(), f"unbound process should see {usable_cpus()}, got {r['cpus']}")
        node_of_cpu = {c: n for n, cpus in numactl_nodes().items() for c in cpus}
        require(r["numa_node"] == node_of_cpu.get(r["cpu"]),
                f"CPU {r['cpu']} is on node {node_of_cpu.get(r['cpu'])} per numactl, affinity says {r['numa_node']}")
        require(r["mempolicy"] == "default", f"no numactl: policy should be default, got {r['mempolicy']}")


@case
def affinity_bind_to_core_distinct_cpus():
    n = min(2, len(usable_cpus()))
    proc = run(mpirun(n, "--bind-to", "core", "--map-by", "core", prog("affinity"), "--expect", "core"))
    d = doc(proc)
    rows = d["placement"]
    require(d["ranks"] == n and len(rows) == n, f"want {n} rows, got {len(rows)}")
    sets = [tuple(r["cpus"]) for r in rows]
    require(all(len(s) == 1 for s in sets), f"--bind-to core should give one CPU each (no SMT here): {sets}")
    require(len(set(sets)) == n, f"CPUs not distinct: {sets}")
    require(all(r["cpu"] == r["cpus"][0] for r in rows), "a rank runs outside its single CPU")
    require(d["expect"]["ok"] is True and d["expect"]["spec"] == "core", f"expect block: {d.get('expect')}")


@case
def affinity_bind_to_none_full_set():
    n = 2
    d = doc(run(mpirun(n, "--bind-to", "none", prog("affinity"), "--expect", "none")))
    for r in d["placement"]:
        require(r["cpus"] == usable_cpus(), f"--bind-to none: rank {r['rank']} sees {r['cpus']}, want {usable_cpus()}")
    if len(usable_cpus()) > 1:
        proc = run(mpirun(n, "--bind-to", "none", prog("affinity"), "--expect", "core"), expect_rc=None)
        require(proc.returncode == 1 or proc.returncode != 0, "unbound ranks must fail --expect core")
        require("placement differs from --expect core" in proc.stderr, f"no reason given: {proc.stderr}")
        require(doc(proc)["expect"]["ok"] is False, "JSON must say ok: false")


@case
def affinity_expect_rules_on_this_machine():
    cpus = usable_cpus()
    first = str(cpus[0])
    run(["taskset", "-c", first, prog("affinity"), "--expect", "hwthread"])
    run(["taskset", "-c", first, prog("affinity"), "--expect", f"cpus={first}"])
    run([prog("affinity"), "--expect", "numa"] if len(memory_nodes()) == 1 else [prog("affinity")])
    if len(cpus) > 1:
        other = str(cpus[1])
        proc = run(["taskset", "-c", first, prog("affinity"), "--expect", f"cpus={other}"], expect_rc=1)
        require("expected a subset of" in proc.stderr, proc.stderr)
        proc = run([prog("affinity"), "--expect", "hwthread"], expect_rc=1)
        require("expected exactly one CPU" in proc.stderr, proc.stderr)
    # What the launcher's binding objects give must match the rule of the same name.
    n = min(2, len(cpus))
    run(mpirun(n, "--bind-to", "socket", prog("affinity"), "--expect", "socket"))
    run(mpirun(n, "--bind-to", "numa", prog("affinity"), "--expect", "numa"))
    run(mpirun(n, "--map-by", "core:PE=1", "--bind-to", "core", prog("affinity"), "--expect", "pe=1"))
    # Two threads squeezed onto one CPU: each is pinned to a single CPU, but it is the same one.
    proc = run(["taskset", "-c", first, prog("affinity"), "--expect", "core"], expect_rc=1, OMP_NUM_THREADS=2)
    require("share CPUs" in proc.stderr, proc.stderr)
    proc = run(["taskset", "-c", first, prog("affinity"), "--expect", "pe=1"], expect_rc=0, OMP_NUM_THREADS=2)


@case
def affinity_reports_memory_policy():
    node = memory_nodes()[0]
    cases = [(["--membind", str(node)], "bind", [node]), (["--interleave=all"], "interleave", memory_nodes()),
             (["--preferred", str(node)], "preferred", [node])]
    for numactl_args, mode, nodes in cases:
        d = doc(run(["numactl", *numactl_args, prog("affinity")]))
        r = d["placement"][0]
        require(r["mempolicy"] == mode, f"numactl {numactl_args}: policy {r['mempolicy']}, want {mode}")
        require(r["mempolicy_nodes"] == nodes, f"numactl {numactl_args}: nodes {r['mempolicy_nodes']}, want {nodes}")


@case
def affinity_table_format():
    proc = run(mpirun(2, "--bind-to", "none", prog("affinity"), "--format", "table", "--expect", "none"))
    lines = proc.stdout.strip().splitlines()
    require(lines[0].split()[:3] == ["host", "rank", "thread"], f"header: {lines[0]}")
    require(len(lines) == 1 + 2 + 1, f"header + 2 rows + verdict, got {lines}")
    require(lines[-1] == "expect none: OK", lines[-1])


@case
def affinity_output_file_written_once():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "placement.json")
        proc = run(mpirun(2, "--bind-to", "none", prog("affinity"), "--output", out))
        require(proc.stdout.strip() == "", f"with --output nothing goes to stdout: {proc.stdout!r}")
        d = json.load(open(out))
        require([r["rank"] for r in d["placement"]] == [0, 1], f"rows {d['placement']}")
        require(os.listdir(tmp) == ["placement.json"], f"temporary files left: {os.listdir(tmp)}")
        proc = run([prog("affinity"), "--output", os.path.join(tmp, "missing", "x.json")], expect_rc=1)
        require("cannot write" in proc.stderr, proc.stderr)


@case
def affinity_bad_arguments():
    for args in (["--expect", "bogus"], ["--expect", "cpus=9-1"], ["--format", "xml"], ["--frobnicate"],
                 ["--expect"], ["stray"]):
        one_line_error(run([prog("affinity"), *args], expect_rc=2), "affinity")
    proc = run([prog("affinity"), "--help"])
    require("--expect" in proc.stdout and "core" in proc.stdout, "--help must document --expect")


# ---------------------------------------------------------------- numa-bw

SMALL = ["--size", "8Mi", "--repeats", "3"]


def check_numa_doc(d, nodes_expected):
    require(d["program"] == "numa-bw" and d["schema_version"] == 1 and d["valid"] is True, "invalid run")
    require(d["array_bytes"] == 8 * 2**20, f"array_bytes {d['array_bytes']}")
    for k in ("copy", "triad"):
        best, avg = d["kernels"][k]["best_gbs"], d["kernels"][k]["avg_gbs"]
        # However busy the machine, the best repeat took no longer than the whole run (a floor that load
        # cannot break); 10 TB/s would mean a timing bug.
        floor = d["kernels"][k]["bytes_per_iteration"] / d["_wall_s"] / 1e9
        require(floor <= best < 10000 and 0 < avg <= best * 1.0000001,
                f"{k}: best {best} avg {avg} GB/s (floor {floor:.3g} GB/s: its bytes over the run's {d['_wall_s']:.3g} s)")
    p = d["pages"]
    require(p["sampled"] > 0 and p["located"] == p["sampled"], f"pages not all located: {p}")
    fractions = {int(k): v for k, v in p["fraction_by_node"].items()}
    require(abs(sum(fractions.values()) - 1.0) < 1e-9, f"fractions do not add up: {fractions}")
    require(set(fractions) <= set(nodes_expected), f"pages on {sorted(fractions)}, policy allows {nodes_expected}")


@case
def numa_bw_default_policy_pages_on_local_node():
    d = doc(run([prog("numa-bw"), *SMALL], OMP_NUM_THREADS=2))
    require(d["threads"] == 2 and d["mempolicy"] == "default", f"threads {d['threads']} policy {d['mempolicy']}")
    check_numa_doc(d, d["thread_nodes"])  # first touch by the threads: pages where the threads run
    if len(memory_nodes()) == 1:
        require(d["pages"]["fraction_by_node"] == {"0": 1}, f"one-node machine: {d['pages']['fraction_by_node']}")
    d = doc(run([prog("numa-bw"), *SMALL, "--threads", "1", "--sample-pages", "30"], OMP_NUM_THREADS=2))
    require(d["threads"] == 1, f"--threads 1 ran {d['threads']} threads")
    require(d["pages"]["sampled"] == 30, f"--sample-pages 30 sampled {d['pages']['sampled']}")


@case
def numa_bw_under_numactl_policies():
    node = memory_nodes()[0]
    runs = [(["--localalloc"], "local", None), (["--interleave=all"], "interleave", memory_nodes()),
            (["--membind", str(node)], "bind", [node]), (["--preferred", str(node)], "preferred", [node])]
    for numactl_args, mode, nodes in runs:
        proc = run(["numactl", *numactl_args, prog("numa-bw"), *SMALL, "--first-touch", "serial",
                    "--expect-nodes", ",".join(map(str, nodes or memory_nodes()))])
        d = doc(proc)
        require(d["mempolicy"] == mode, f"numactl {numactl_args}: policy {d['mempolicy']}, want {mode}")
        require(d["first_touch"] == "serial", "first_touch not reported")
        check_numa_doc(d, nodes or memory_nodes())
        require(d["expect_nodes"]["ok"] is True, f"expect_nodes: {d['expect_nodes']}")


@case
def numa_bw_fallback_page_query_agrees():
    d = doc(run([prog("numa-bw"), *SMALL], OMP_NUM_THREADS=2))
    f = doc(run([prog("numa-bw"), *SMALL], OMP_NUM_THREADS=2, MICROBENCH_PAGE_QUERY="get_mempolicy"))
    require(d["pages"]["method"] == "move_pages", f"default method {d['pages']['method']}")
    require(f["pages"]["method"] == "get_mempolicy", f"forced method {f['pages']['method']}")
    check_numa_doc(f, f["thread_nodes"])
    require(f["pages"]["fraction_by_node"] == d["pages"]["fraction_by_node"], "the two kernel interfaces disagree")


@case
def numa_bw_expectation_that_cannot_hold_fails():
    absent = max(memory_nodes()) + 1  # a node with no pages at all
    proc = run([prog("numa-bw"), *SMALL, "--expect-nodes", str(absent)], expect_rc=1)
    require("pages not where expected" in proc.stderr, proc.stderr)
    require(doc(proc)["expect_nodes"]["ok"] is False, "JSON must record the failed expectation")


@case
def numa_bw_validation_catches_wrong_result():
    proc = run([prog("numa-bw"), *SMALL, "--inject-error"], expect_rc=1)
    require("INVALID" in proc.stderr, proc.stderr)
    d = doc(proc)
    require(d["valid"] is False and d["wrong_elements"] == 1, f"valid {d['valid']} wrong {d['wrong_elements']}")


@case
def numa_bw_output_file_and_bad_arguments():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bw.json")
        proc = run([prog("numa-bw"), "--size", "64Ki", "--output", out])
        require(proc.stdout == "", "with --output nothing goes to stdout")
        require(json.load(open(out))["valid"] is True, "file content")
        require(os.listdir(tmp) == ["bw.json"], f"temporary files left: {os.listdir(tmp)}")
    for args in (["--size", "12x"], ["--size", "100"], ["--size", "4Ti"], ["--repeats", "1"], ["--first-touch", "random"],
                 ["--threads", "0"], ["--expect-nodes", "a"], ["--min-fraction", "1.5"], ["--bogus"], ["--size"]):
        one_line_error(run([prog("numa-bw"), *args], expect_rc=2), "numa-bw")


# ---------------------------------------------------------------- halo

def interface_bytes(dims, periodic, side, esize):
    """Bytes all ranks send per exchange: every interface carries 2 tangential components each way."""
    face = 2 * side * side * esize
    total = 0
    for a in range(3):
        others = dims[(a + 1) % 3] * dims[(a + 2) % 3]
        interfaces = dims[a] if periodic else dims[a] - 1
        total += 2 * interfaces * others * face
    return total


def check_halo_doc(d, ranks, sizes, esize, periodic):
    require(d["program"] == "halo" and d["schema_version"] == 1 and d["valid"] is True, "invalid run")
    dims = d["dims"]
    require(dims[0] * dims[1] * dims[2] == ranks, f"dims {dims} for {ranks} ranks")
    require([r["face_side"] for r in d["results"]] == sizes, "one result per size, in order")
    for r in d["results"]:
        side = r["face_side"]
        require(r["face_cells"] == side * side, "face_cells")
        require(r["bytes_all_ranks"] == interface_bytes(dims, periodic, side, esize),
                f"side {side}: bytes_all_ranks {r['bytes_all_ranks']} != model {interface_bytes(dims, periodic, side, esize)}")
        # no exchange outlasts the whole run, however busy the machine (a unit slip would)
        require(0 < r["time_min_s"] <= r["time_avg_s"] <= r["time_max_s"] < d["_wall_s"],
                f"times {r} (run {d['_wall_s']:.3g} s)")
        require(0 < r["time_median_s"] < d["_wall_s"], f"median {r} (run {d['_wall_s']:.3g} s)")
        require(r["bandwidth_gbs"] > 0 and r["valid"] is True and r["wrong_cells"] == 0, f"result {r}")


@case
def halo_two_ranks_f32():
    d = doc(run(mpirun(2, prog("halo"), "--sizes", "4,16,32", "--iterations", "20", "--warmup", "2")))
    check_halo_doc(d, 2, [4, 16, 32], 4, False)
    require(d["precision"] == "f32" and d["periodic"] is False, "defaults")
    require(d["threads_per_rank"] == 1 and d["oversubscribed"] is (len(usable_cpus()) < 2), "threads/oversubscribed")
    # Two ranks side by side: each sends one face (2 components) per exchange.
    require(all(r["bytes_per_exchange"] == 2 * r["face_cells"] * 4 for r in d["results"]), "bytes_per_exchange")


@case
def halo_four_ranks_periodic_f64():
    d = doc(run(mpirun(4, prog("halo"), "--sizes", "8,24", "--precision", "f64", "--periodic",
                       "--iterations", "10", "--warmup", "1")))
    check_halo_doc(d, 4, [8, 24], 8, True)
    # Periodic: every rank has 6 neighbours (itself where a dimension is 1) and sends 6 faces.
    require(all(r["bytes_per_exchange"] == 6 * 2 * r["face_cells"] * 8 for r in d["results"]), "bytes_per_exchange")


@case
def halo_warns_when_oversubscribed():
    n = len(usable_cpus())
    proc = run(mpirun(2, "--bind-to", "none", prog("halo"), "--sizes", "4", "--iterations", "3"), OMP_NUM_THREADS=n)
    d = doc(proc)
    require(d["oversubscribed"] is True and d["threads_per_rank"] == n, f"2 ranks x {n} threads on {n} CPUs")
    require("oversubscribed" in proc.stderr, f"no warning: {proc.stderr}")


@case
def halo_explicit_dims_and_single_rank():
    d = doc(run(mpirun(2, prog("halo"), "--dims", "1x1x2", "--sizes", "8", "--iterations", "5")))
    require(d["dims"] == [1, 1, 2], f"dims {d['dims']}")
    check_halo_doc(d, 2, [8], 4, False)
    d = doc(run([prog("halo"), "--sizes", "8", "--iterations", "5", "--periodic"]))
    check_halo_doc(d, 1, [8], 4, True)


@case
def halo_validation_catches_corrupted_buffer():
    for nprocs, extra in ((2, []), (4, ["--periodic", "--precision", "f64"]), (1, [])):
        proc = run(mpirun(nprocs, prog("halo"), "--sizes", "8,16", "--iterations", "5", "--inject-error", *extra),
                   expect_rc=None)
        require(proc.returncode == 1, f"{nprocs} ranks {extra}: exit {proc.returncode}, wanted 1\n{proc.stderr}")
        require("INVALID" in proc.stderr, proc.stderr)
        d = doc(proc)
        require(d["valid"] is False, "JSON must say valid: false")
        first, second = d["results"]
        require(first["wrong_cells"] == 1 and first["valid"] is False, f"corrupted size: {first}")
        require(second["valid"] is True, "only the corrupted size may fail")


@case
def halo_bad_arguments():
    for args in (["--sizes", "0"], ["--sizes", "8,,16"], ["--precision", "f16"], ["--iterations", "x"],
                 ["--dims", "3x1x1"], ["--dims", "2x2"], ["--dims", "0x0x0x1"], ["--warmup", "-1"], ["--nope"]):
        one_line_error(run([prog("halo"), *args], expect_rc=2), "halo")
    one_line_error(run([prog("halo"), "--sizes", "8,4096"], expect_rc=2), "halo")  # 6 x 4098^3 floats
    # Under mpirun every rank sees the error, but only rank 0 reports it.
    proc = run(mpirun(2, prog("halo"), "--dims", "3x1x1"), expect_rc=None)
    require(proc.returncode == 2, f"mpirun --dims 3x1x1: exit {proc.returncode}, wanted 2")
    one_line_error(proc, "halo")
    proc = run([prog("halo"), "--help"])
    require("--sizes" in proc.stdout and "tangential" in proc.stdout, "--help text")


def main():
    global BIN
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    BIN = sys.argv[1]
    if sys.argv[2] == "list":
        print("\n".join(CASES))
        return 0
    if sys.argv[2] not in CASES:
        print(f"probe_tests.py: error: unknown case {sys.argv[2]}", file=sys.stderr)
        return 2
    for tool in ("mpirun", "numactl", "taskset"):
        if shutil.which(tool) is None:
            print(f"probe_tests.py: error: {tool} not found", file=sys.stderr)
            return 2
    try:
        CASES[sys.argv[2]]()
    except Failure as e:
        print(f"FAIL {sys.argv[2]}: {e}", file=sys.stderr)
        return 1
    print(f"ok {sys.argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
