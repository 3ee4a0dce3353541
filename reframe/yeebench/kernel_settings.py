"""Kernel and firmware settings that are known to cost performance.

Each finding is a dict {setting, value, level, reason}; level is "warning"
(known to cost performance on this kind of node) or "note" (recorded for the
sign-off, worth knowing).  Settings are read from /proc and /sys; a setting
that cannot be read is reported as such, never guessed.
"""
import glob
import os
import platform
import re

#: Files read, relative to a root (tests pass a directory of recorded files).
SOURCES = {
    "kernel.randomize_va_space": "proc/sys/kernel/randomize_va_space",
    "kernel.numa_balancing": "proc/sys/kernel/numa_balancing",
    "vm.zone_reclaim_mode": "proc/sys/vm/zone_reclaim_mode",
    "transparent_hugepage.enabled": "sys/kernel/mm/transparent_hugepage/enabled",
    "transparent_hugepage.defrag": "sys/kernel/mm/transparent_hugepage/defrag",
}
SLOW_GOVERNORS = ("powersave", "conservative", "ondemand", "userspace")


def _read(root, rel):
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


def _bracketed(value):
    """'always [madvise] never' -> 'madvise' (the active choice of a sysfs list)."""
    match = re.search(r"\[(\w+)\]", value or "")
    return match.group(1) if match else value


def _meminfo_hugepages(root):
    text = _read(root, "proc/meminfo") or ""
    out = {}
    for key in ("HugePages_Total", "HugePages_Free", "Hugepagesize"):
        match = re.search(rf"^{key}:\s+(\d+)", text, re.M)
        out[key] = int(match.group(1)) if match else None
    return out


def _cpu_info(root):
    text = _read(root, "proc/cpuinfo") or ""
    vendor = re.search(r"^vendor_id\s*:\s*(\S+)", text, re.M)
    family = re.search(r"^cpu family\s*:\s*(\d+)", text, re.M)
    return (vendor.group(1) if vendor else None, int(family.group(1)) if family else None)


def _kernel_version(release):
    match = re.match(r"(\d+)\.(\d+)", release or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def collect(root="/", kernel_release=None):
    """Raw settings of this node (or of a recorded tree under `root`)."""
    settings = {name: _read(root, rel) for name, rel in SOURCES.items()}
    for key in ("transparent_hugepage.enabled", "transparent_hugepage.defrag"):
        settings[key] = _bracketed(settings[key])
    settings.update(_meminfo_hugepages(root))
    governors = set()
    for path in glob.glob(os.path.join(root, "sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor")):
        value = _read("/", path)
        if value:
            governors.add(value)
    settings["cpufreq.governors"] = sorted(governors) or None
    settings["cpu.vendor"], settings["cpu.family"] = _cpu_info(root)
    settings["kernel.release"] = kernel_release if kernel_release is not None else platform.release()
    return settings


def assess(settings):
    """Findings (warnings and notes, each with its reason) for the collected settings."""
    findings = []

    def add(setting, level, reason):
        findings.append({"setting": setting, "value": settings.get(setting), "level": level,
                         "reason": reason})

    aslr = settings.get("kernel.randomize_va_space")
    kernel = _kernel_version(settings.get("kernel.release"))
    amd_15h = settings.get("cpu.vendor") == "AuthenticAMD" and settings.get("cpu.family") == 0x15
    if aslr is None:
        add("kernel.randomize_va_space", "note", "not readable; ASLR state unknown")
    elif aslr != "0" and amd_15h and kernel is not None and kernel < (3, 2):
        add("kernel.randomize_va_space", "warning",
            "ASLR on, AMD family 15h CPU and kernel older than 3.2: the shared L1 instruction cache "
            "of a compute unit cross-invalidates when two cores run the same code at different "
            "virtual addresses; paper 003 saw cache misses and scaling collapse past 12 threads per "
            "node until ASLR was disabled or the kernel was upgraded (>= 3.2 aligns mappings)")
    elif aslr != "0":
        add("kernel.randomize_va_space", "note",
            f"ASLR on ({aslr}); costs performance only on CPUs with a shared instruction cache and "
            "old kernels (paper 003: AMD family 15h, kernel < 3.2), not on this node")
    thp = settings.get("transparent_hugepage.enabled")
    if thp is None:
        add("transparent_hugepage.enabled", "note", "not readable; THP state unknown")
    elif thp == "never":
        add("transparent_hugepage.enabled", "warning",
            "transparent huge pages disabled: large field arrays (FDTD, STREAM) run with 4 KiB pages "
            "and lose TLB reach; 'madvise' or 'always' is usual for HPC nodes")
    governors = settings.get("cpufreq.governors")
    if governors is None:
        add("cpufreq.governors", "note", "no cpufreq in sysfs (virtual machine or fixed frequency); "
            "frequency scaling not checked")
    else:
        slow = [g for g in governors if g in SLOW_GOVERNORS]
        if slow:
            add("cpufreq.governors", "warning",
                f"governor {', '.join(slow)}: cores may run below nominal frequency during runs, "
                "lowering and scattering timings; acceptance runs want 'performance'")
    reclaim = settings.get("vm.zone_reclaim_mode")
    if reclaim not in (None, "0"):
        add("vm.zone_reclaim_mode", "warning",
            f"zone_reclaim_mode {reclaim}: the kernel reclaims local page cache rather than "
            "allocate on a remote NUMA node, which stalls memory-heavy jobs")
    if settings.get("kernel.numa_balancing") == "1":
        add("kernel.numa_balancing", "note",
            "automatic NUMA balancing migrates pages during runs; bandwidth and placement "
            "measurements can drift")
    total = settings.get("HugePages_Total")
    if total:
        add("HugePages_Total", "note", f"{total} static huge pages reserved "
            f"({settings.get('HugePages_Free')} free); memory held back from normal allocations")
    return findings
