"""Speedup, parallel efficiency and the knee of a scaling series: the suite's one scaling arithmetic.

Every scaling figure is a point (workers, rate or time) against a base point: the solver's scaling
against a 1-core run in the same job (checks/fdtd/fdtd.py), node scaling against the fewest nodes
(paper 000, Fig. 12; checks/fdtd/node_scaling.py), the acceptance scaling against its smallest count
(paper 003, figures 2-4; checks/acceptance/acceptance_scaling.py).

Paper 003 found the cluster's scaling fell apart past 12 threads per node.  The knee is where adding
workers stops paying: the first count whose marginal efficiency (speedup gained per worker added,
relative to ideal) drops below a threshold.
"""
import glob
import math
import os
import re

from yeebench import simulated_hardware
from yeebench.comparisons import ComparisonError

#: What a point's value is: a rate (higher is better) or a time (lower is better).
KINDS = ("rate", "time")


def speedup(value, base, kind="rate"):
    """How many times faster a point is than the base point: value / base for a rate, base / value
    for a time."""
    if kind not in KINDS:
        raise ValueError(f"kind must be 'rate' or 'time', not {kind!r}")
    return value / base if kind == "rate" else base / value


def efficiency(value, workers, base, base_workers=1, kind="rate"):
    """Parallel efficiency (1.0 = ideal) of a point on `workers` against the base point on
    `base_workers`: its speedup over the speedup ideal scaling would give (workers / base_workers)."""
    return speedup(value, base, kind) * base_workers / workers


def efficiency_against_smallest(values_by_workers, kind="rate"):
    """{workers: %} strong-scaling efficiency of each count against the smallest count measured.

    workers: nodes (paper 000, Fig. 12: 18 nodes against 4) or cores.  A missing or non-positive
    value is a ComparisonError (the comparisons' error: the figure cannot be formed)."""
    if not values_by_workers:
        raise ComparisonError("no measured counts")

    def positive(n):
        value = values_by_workers[n]
        if value is None or not math.isfinite(value) or value <= 0:
            raise ComparisonError(f"the {kind} at {n} must be a positive number, got {value!r}")
        return float(value)

    smallest = min(values_by_workers)
    base = positive(smallest)
    return {n: 100.0 * efficiency(positive(n), n, base, smallest, kind) for n in sorted(values_by_workers)}


def analyse(points, knee_threshold=0.5):
    """points: {workers: throughput FOM (higher is better)}, at least one entry.

    Returns a list of rows {workers, fom, speedup, efficiency, marginal} in
    ascending worker order and the knee (workers) or None.
    """
    if not points:
        raise ValueError("no scaling points")
    for n, fom in points.items():
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"worker count {n!r} is not a positive integer")
        if fom is None or not fom > 0:
            raise ValueError(f"FOM at {n} workers is not positive: {fom!r}")
    counts = sorted(points)
    base_n, base = counts[0], points[counts[0]]
    rows, knee = [], None
    prev_n, prev_speedup = base_n, 1.0
    for n in counts:
        gain = speedup(points[n], base)
        marginal = None
        if n > prev_n:
            ideal_gain = (n - prev_n) / base_n
            marginal = (gain - prev_speedup) / ideal_gain
            if knee is None and marginal < knee_threshold:
                knee = n
        rows.append({"workers": n, "fom": points[n], "speedup": gain,
                     "efficiency": efficiency(points[n], n, base, base_n), "marginal": marginal})
        prev_n, prev_speedup = n, gain
    return rows, knee


#: Parallel efficiency above which a point contradicts the model (a little slack for noise).
MAX_EFFICIENCY = 1.10


def superlinear(rows_by_mode, limit=MAX_EFFICIENCY):
    """'' or a description of the points whose efficiency exceeds `limit` (more than ideal)."""
    found = [f"{mode} {r['workers']}: efficiency {100 * r['efficiency']:.0f}%"
             for mode, rows in rows_by_mode.items() for r in rows if r["efficiency"] > limit]
    return ", ".join(found)


def aslr_cost(with_aslr, without_aslr):
    """Percent of the ASLR-off figure (a rate, higher is better) lost with ASLR on; negative: ASLR on was faster."""
    if without_aslr <= 0:
        raise ValueError(f"ASLR-off figure {without_aslr} is not a rate")
    return 100.0 * (without_aslr - with_aslr) / without_aslr


def powers_of_two_upto(limit):
    """1, 2, 4, ... up to limit, with limit itself always included."""
    if limit < 1:
        raise ValueError(f"limit {limit} < 1")
    counts, n = [], 1
    while n < limit:
        counts.append(n)
        n *= 2
    counts.append(limit)
    return counts


def summary(label, rows, knee, unit):
    """One line for the check's output."""
    last = rows[-1]
    text = (f"{label}: {last['workers']} workers reach speedup {last['speedup']:.2f} "
            f"(efficiency {100 * last['efficiency']:.0f}%, {last['fom']:.4g} {unit})")
    if knee is None:
        return text + "; no knee"
    return text + f"; knee at {knee} workers (adding them gains < half the ideal)"


# -- memory-bandwidth scaling: arrays sized from the last-level cache ------------------------
#: Arrays at least this many times the node's last-level cache, or the figure measures the cache.
LLC_FACTOR = 4
TRIAD_LINE = re.compile(r"^triad ranks (\d+) threads (\d+) bytes_per_array (\d+) best_GBs (\S+) "
                        r"avg_GBs (\S+) (VALID|INVALID)$", re.M)


def _size_bytes(text):
    """sysfs cache size ('32768K', '1M') in bytes."""
    text = text.strip()
    scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:].upper(), 1)
    return int(text.rstrip("KkMmGg")) * scale


def llc_from_sysfs(root=None):
    """(bytes of last-level cache on this node, summed over its instances, description) or (None, why).
    Without `root` (this machine's sysfs) YEEBENCH_SIMULATE_HW=llc=... replaces it
    (yeebench.simulated_hardware)."""
    simulated = simulated_hardware.get("llc") if root is None else None
    if simulated:
        return simulated, f"{simulated // 2**20} MiB simulated ({simulated_hardware.ENV})"
    root = root or "/sys/devices/system/cpu"
    caches = {}
    for index in glob.glob(os.path.join(root, "cpu[0-9]*", "cache", "index[0-9]*")):
        try:
            read = lambda name: open(os.path.join(index, name)).read().strip()  # noqa: E731
            if read("type") == "Instruction":
                continue
            level, size, shared = int(read("level")), _size_bytes(read("size")), read("shared_cpu_list")
        except (OSError, ValueError):
            continue
        caches[(level, shared)] = size
    if not caches:
        return None, f"no caches listed under {root}/cpu*/cache"
    top = max(level for level, _ in caches)
    sizes = [size for (level, _), size in caches.items() if level == top]
    return sum(sizes), f"L{top} {len(sizes)} x {sizes[0] // 2**20} MiB"


def llc_from_reframe(processor_info):
    """Same as llc_from_sysfs from a ReFrame processor entry's topology.caches, or (None, why)."""
    caches = ((processor_info or {}).get("topology") or {}).get("caches") or []
    levels = [(int(str(c.get("type", "L0")).lstrip("Ll") or 0), c) for c in caches if c.get("size")]
    if not levels:
        return None, "the partition's processor entry lists no caches"
    top = max(level for level, _ in levels)
    chosen = [c for level, c in levels if level == top]
    total = sum(int(c["size"]) * max(1, len(c.get("cpusets") or [1])) for c in chosen)
    return total, f"L{top} from the partition's processor entry"


def triad_array_bytes(llc_bytes, factor=LLC_FACTOR):
    """Bytes per array: `factor` x the last-level cache, rounded up to whole MiB."""
    want = factor * llc_bytes
    return -(-want // 2**20) * 2**20


def parse_triad(text, ranks, threads):
    """Best GB/s of one triad_mpi run, checked against the ranks and threads it was launched with."""
    found = TRIAD_LINE.findall(text)
    if not found:
        raise ValueError("no 'triad ranks ...' line from triad_mpi")
    r, t, _, best, _, valid = found[-1]
    if valid != "VALID":
        raise ValueError("triad_mpi computed wrong values (INVALID)")
    if (int(r), int(t)) != (ranks, threads):
        raise ValueError(f"triad_mpi ran {r} rank(s) x {t} thread(s), launched as {ranks} x {threads}")
    return float(best)
