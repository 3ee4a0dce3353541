"""Provenance gathered on the machine where `yeebench results ingest` runs.

Each probe runs one short command with a timeout and returns None when the tool
is missing or fails; the caller marks these figures with source 'ingest-host'.
"""
import functools
import hashlib
import os
import re
import subprocess
from pathlib import Path

from yeebench import simulated_hardware
from yeebench.topology import available_memory_bytes as topology_memory

_TIMEOUT_S = 10


def _run(argv, cwd=None):
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout


def git_state(directory):
    """(sha, dirty) of the git work tree holding directory, or (None, None)."""
    if not directory or not Path(directory).is_dir():
        return None, None
    sha = _run(["git", "rev-parse", "HEAD"], cwd=directory)
    if not sha:
        return None, None
    # no fsmonitor or hooks: a status must not run a command a repository's config names
    status = _run(["git", "-c", "core.fsmonitor=false", "status", "--porcelain", "--untracked-files=no"],
                  cwd=directory)
    return sha.strip(), (bool(status.strip()) if status is not None else None)


@functools.lru_cache(maxsize=None)  # the host does not change within a process
def mpi_version():
    out = _run(["ompi_info", "--version"])
    if out and out.strip():
        return out.strip().splitlines()[0].strip()
    out = _run(["mpirun", "--version"])
    return out.strip().splitlines()[0].strip() if out and out.strip() else None


@functools.lru_cache(maxsize=None)
def ucx_version():
    out = _run(["ucx_info", "-v"])
    if not out:
        return None
    match = re.search(r"Version\s+(\S+)", out)
    return f"UCX {match.group(1)}" if match else None


@functools.lru_cache(maxsize=None)
def compiler_version():
    for cc in (os.environ.get("CXX"), "c++", "g++", "cc"):
        if cc:
            out = _run([cc, "--version"])
            if out and out.strip():
                return out.strip().splitlines()[0]
    return None


def _lscpu_field(text, field):
    match = re.search(rf"^{re.escape(field)}:\s*(.+)$", text, re.M)
    return match.group(1).strip() if match else None


def _as_int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


@functools.lru_cache(maxsize=None)
def topology():
    """sockets, cores, cpus, NUMA nodes and the NUMA distance matrix (lscpu + numactl)."""
    topo = {"sockets": None, "cores": None, "cpus": None, "numa_nodes": None,
            "numa_distances": None, "model": None}
    text = _run(["lscpu"], ) or ""
    if text:
        topo["sockets"] = _as_int(_lscpu_field(text, "Socket(s)"))
        per_socket = _as_int(_lscpu_field(text, "Core(s) per socket"))
        if topo["sockets"] and per_socket:
            topo["cores"] = topo["sockets"] * per_socket
        topo["cpus"] = _as_int(_lscpu_field(text, "CPU(s)"))
        topo["model"] = _lscpu_field(text, "Model name")
        topo["numa_nodes"] = _as_int(_lscpu_field(text, "NUMA node(s)"))
    numa = _run(["numactl", "--hardware"]) or ""
    if numa:
        nodes = re.search(r"^available:\s*(\d+)\s+nodes", numa, re.M)
        if nodes:
            topo["numa_nodes"] = int(nodes.group(1))
        distances = []
        in_table = False
        for line in numa.splitlines():
            if line.startswith("node distances"):
                in_table = True
                continue
            row = re.match(r"^\s*\d+:\s+([\d\s]+)$", line) if in_table else None
            if row:
                distances.append([int(x) for x in row.group(1).split()])
        topo["numa_distances"] = distances or None
    return topo


def file_sha256(path, limit=64 * 1024 * 1024):
    """sha256 of a regular file of at most `limit` bytes (a lock file), None for anything else."""
    from yeebench import safe_io
    try:
        return hashlib.sha256(safe_io.read_bytes(path, "file", limit)).hexdigest()
    except safe_io.FileRefused:
        return None


def llc_bytes(cpu_dir=None):
    """Size of the last-level (highest-level data or unified) cache in bytes, from sysfs; None if unknown.
    Without `cpu_dir` (this machine's cpu0) YEEBENCH_SIMULATE_HW=llc=... replaces it
    (yeebench.simulated_hardware)."""
    if cpu_dir is None:
        return simulated_hardware.get("llc") or _sysfs_llc_bytes("/sys/devices/system/cpu/cpu0/cache")
    return _sysfs_llc_bytes(cpu_dir)


@functools.lru_cache(maxsize=None)
def _sysfs_llc_bytes(cpu_dir):
    best = None
    for index in Path(cpu_dir).glob("index*"):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        match = re.match(r"^(\d+)([KMG]?)$", size)
        if match and (best is None or level > best[0]):
            best = (level, int(match.group(1)) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[match.group(2)])
    return best[1] if best else None


def memory_bytes(meminfo="/proc/meminfo"):
    """Memory available for new work in bytes (MemAvailable, or less where this process's cgroup
    allows less); None if unknown. The check library's reading, so a check and the recorded host
    facts agree."""
    return topology_memory(meminfo)
