"""Node topology: observe it (hwloc, numactl, sysfs), record it, compare it.

A site records the expected topology of each system once
(`yeebench acceptance topology --record`) into reframe/config/topology/<system>.yaml;
the acceptance check then fails on any node that differs, e.g. a node that
booted with fewer cores or a NUMA node missing after a DIMM failure.
"""
import glob
import os
import shutil
import socket
import subprocess

from yeebench import safe_io
from yeebench.parsers import ParseError
from yeebench.parsers.numactl import parse_hardware

#: Keys of an expected-topology file that are compared (all optional except the counts).
COUNT_KEYS = ("sockets", "cores", "pus", "numa_nodes")
SCHEMA = "yeebench-topology"
#: An expected-topology file is a few lines; anything larger is not one.
EXPECTED_LIMIT = safe_io.MIB


class TopologyError(ValueError):
    """An expected-topology file or a tool's output cannot be understood."""


def _run(cmd):
    """Output of a command, or None when it is absent or fails."""
    if not shutil.which(cmd[0]):
        return None
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _hwloc_count(kind):
    out = _run(["hwloc-calc", "--number-of", kind, "all"])
    try:
        return int(out.strip()) if out else None
    except ValueError:
        return None


def _sysfs_counts():
    """Fallback counts from /sys when hwloc is absent."""
    cpus = glob.glob("/sys/devices/system/cpu/cpu[0-9]*/topology")
    packages, cores = set(), set()
    for topo in cpus:
        try:
            with open(os.path.join(topo, "physical_package_id")) as f:
                pkg = f.read().strip()
            with open(os.path.join(topo, "core_id")) as f:
                core = f.read().strip()
        except OSError:
            continue
        packages.add(pkg)
        cores.add((pkg, core))
    numa = glob.glob("/sys/devices/system/node/node[0-9]*")
    return {"sockets": len(packages) or None, "cores": len(cores) or None,
            "pus": len(cpus) or None, "numa_nodes": len(numa) or None}


def observe():
    """Topology of this node as a dict (the same keys an expected file holds)."""
    counts = {"sockets": _hwloc_count("package"), "cores": _hwloc_count("core"),
              "pus": _hwloc_count("pu"), "numa_nodes": _hwloc_count("numanode")}
    source = "hwloc"
    if any(v is None for v in counts.values()):
        hwloc_seen = any(v is not None for v in counts.values())
        fallback = _sysfs_counts()
        counts = {k: counts[k] if counts[k] is not None else fallback[k] for k in counts}
        source = "hwloc+sysfs" if hwloc_seen else "sysfs"
    topo = {"host": socket.gethostname(), "source": source, **counts,
            "numa_distances": None, "numa_cpus": None}
    text = _run(["numactl", "--hardware"])
    if text:
        try:
            numa = parse_hardware(text)
            topo["numa_distances"] = numa["distances"]
            topo["numa_cpus"] = {str(k): v for k, v in sorted(numa["cpus"].items())}
        except ParseError as err:
            topo["numactl_error"] = str(err)
    return topo


def to_expected(observed, system, partition=None):
    """The expected-topology document recorded from an observation."""
    doc = {"schema": SCHEMA, "schema_version": 1, "system": system}
    if partition:
        doc["partition"] = partition
    doc["recorded_on"] = observed.get("host")
    for key in COUNT_KEYS:
        doc[key] = observed.get(key)
    doc["numa_distances"] = observed.get("numa_distances")
    return doc


def validate_expected(doc, origin="expected topology"):
    """Check an expected-topology document; raise TopologyError naming the problem."""
    if not isinstance(doc, dict):
        raise TopologyError(f"{origin}: not a mapping")
    if doc.get("schema") != SCHEMA:
        raise TopologyError(f"{origin}: schema is {doc.get('schema')!r}, expected {SCHEMA!r}")
    present = [k for k in COUNT_KEYS if k in doc and doc[k] is not None]
    if not present:
        raise TopologyError(f"{origin}: none of {', '.join(COUNT_KEYS)} is given")
    for key in present:
        if not isinstance(doc[key], int) or isinstance(doc[key], bool) or doc[key] < 1:
            raise TopologyError(f"{origin}: {key} must be a positive integer, got {doc[key]!r}")
    dist = doc.get("numa_distances")
    if dist is not None:
        ok = (isinstance(dist, list) and dist
              and all(isinstance(r, list) and len(r) == len(dist) for r in dist)
              and all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for r in dist for d in r))
        if not ok:
            raise TopologyError(f"{origin}: numa_distances must be a square matrix of positive integers")
        if doc.get("numa_nodes") is not None and len(dist) != doc["numa_nodes"]:
            raise TopologyError(f"{origin}: numa_distances is {len(dist)}x{len(dist)} "
                                f"but numa_nodes is {doc['numa_nodes']}")
    return doc


def load_expected(path):
    """Read and validate an expected-topology YAML file."""
    try:
        doc = safe_io.read_yaml(path, "expected topology", EXPECTED_LIMIT)
    except safe_io.FileRefused as err:
        raise TopologyError(str(err)) from None
    return validate_expected(doc, origin=path)


def expected_path(topology_dir, system, partition=None):
    """The expected file for a system (partition-specific first), or None."""
    names = ([f"{system}-{partition}.yaml"] if partition else []) + [f"{system}.yaml"]
    for name in names:
        path = os.path.join(topology_dir, name)
        if os.path.isfile(path):
            return path
    return None


def compare(expected, observed):
    """Mismatches between an expected document and an observed topology (list of strings)."""
    problems = []
    for key in COUNT_KEYS:
        want = expected.get(key)
        if want is None:
            continue
        got = observed.get(key)
        if got != want:
            problems.append(f"{key}: expected {want}, observed {got}")
    want = expected.get("numa_distances")
    got = observed.get("numa_distances")
    if want is not None and got != want:
        problems.append(f"numa_distances: expected {want}, observed {got}")
    return problems


def compare_nodes(observed_by_host):
    """Nodes that differ from the majority of the partition (no expected file needed)."""
    if len(observed_by_host) < 2:
        return []
    signature = lambda t: tuple((k, t.get(k)) for k in COUNT_KEYS)  # noqa: E731
    tally = {}
    for topo in observed_by_host.values():
        tally[signature(topo)] = tally.get(signature(topo), 0) + 1
    majority = max(tally, key=tally.get)
    problems = []
    for host, topo in sorted(observed_by_host.items()):
        if signature(topo) != majority:
            diff = [f"{k} {topo.get(k)} (most nodes: {v})" for k, v in majority if topo.get(k) != v]
            problems.append(f"{host} differs from the other nodes: {', '.join(diff)}")
    return problems


def distance_notes(distances):
    """Human notes on NUMA distances (paper 003: 16 ~ +60 % and 20 ~ +100 % remote cost)."""
    if not distances or len(distances) < 2:
        return []
    local = min(row[i] for i, row in enumerate(distances))
    remote = sorted({d for i, row in enumerate(distances) for j, d in enumerate(row) if i != j})
    costs = ", ".join(f"{d} (~{100 * (d - local) / local:.0f}% over local)" for d in remote)
    return [f"NUMA remote distances {costs}; local {local}"]
