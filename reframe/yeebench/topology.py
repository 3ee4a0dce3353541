"""Host topology: sockets, NUMA nodes and cores of this machine as CPU lists.

Used at configuration load time (reframe/config/systems/local.py) to fill the
partition's `processor` entry, and by the placement helper to know which CPUs
belong to which socket / NUMA node. Detection order: hwloc (`lstopo-no-graphics
--of xml`), then `lscpu -p`, then os.cpu_count() as one socket / one NUMA node.
"""
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from yeebench import simulated_hardware
from yeebench.cgroup_memory import cgroup_room_bytes


def parse_cpulist(text):
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11]. Raises ValueError on junk."""
    cpus = set()
    text = str(text).strip()
    if not text:
        return []
    for part in text.split(','):
        part = part.strip()
        if '-' in part:
            lo, hi = part.split('-', 1)
            lo, hi = int(lo), int(hi)
            if hi < lo:
                raise ValueError(f'bad CPU range {part!r}')
            cpus.update(range(lo, hi + 1))
        else:
            cpus.add(int(part))
    return sorted(cpus)


def format_cpulist(cpus):
    """[0, 1, 2, 5] -> '0-2,5' (the form numactl, taskset and srun accept)."""
    cpus = sorted(set(cpus))
    ranges, start, prev = [], None, None
    for cpu in cpus:
        if start is None:
            start = prev = cpu
        elif cpu == prev + 1:
            prev = cpu
        else:
            ranges.append((start, prev))
            start = prev = cpu
    if start is not None:
        ranges.append((start, prev))
    return ','.join(f'{a}' if a == b else f'{a}-{b}' for a, b in ranges)


def hwloc_mask_to_cpus(mask):
    """hwloc cpuset '0x00000003' or '0xffffffff,0x00000001' (high word first) -> CPU list."""
    words = [w.strip() for w in mask.split(',') if w.strip()]
    value = 0
    for word in words:
        value = (value << 32) | int(word, 16)
    return [bit for bit in range(value.bit_length()) if value >> bit & 1]


def cpus_to_mask(cpus):
    """CPU list -> '0x...' bit mask string (the form ReFrame's processor topology uses)."""
    value = 0
    for cpu in cpus:
        value |= 1 << cpu
    return hex(value)


@dataclass
class Topology:
    """CPU lists per socket, NUMA node and core (OS CPU numbers)."""
    sockets: list = field(default_factory=list)
    numa_nodes: list = field(default_factory=list)
    cores: list = field(default_factory=list)
    source: str = 'unknown'

    @property
    def cpus(self):
        return sorted({c for core in self.cores for c in core})

    @property
    def num_cpus(self):
        return len(self.cpus)

    @property
    def num_cores(self):
        return len(self.cores)

    @property
    def num_sockets(self):
        return len(self.sockets)

    @property
    def num_numa_nodes(self):
        return len(self.numa_nodes)

    @property
    def cpus_per_core(self):
        return max(1, self.num_cpus // max(1, self.num_cores))

    def objects(self, kind):
        """CPU lists of every object of `kind`: node | socket | numa | core."""
        if kind == 'node':
            return [self.cpus]
        if kind == 'socket':
            return self.sockets
        if kind == 'numa':
            return self.numa_nodes
        if kind == 'core':
            return self.cores
        raise ValueError(f'unknown topology object {kind!r} (node, socket, numa, core)')

    def to_reframe_processor(self, arch=None):
        """The `processor` entry of a ReFrame partition (counts plus topology bit masks)."""
        info = {
            'num_cpus': self.num_cpus,
            'num_cpus_per_core': self.cpus_per_core,
            'num_sockets': self.num_sockets,
            'num_cpus_per_socket': self.num_cpus // max(1, self.num_sockets),
            'topology': {
                'numa_nodes': [cpus_to_mask(n) for n in self.numa_nodes],
                'sockets': [cpus_to_mask(s) for s in self.sockets],
                'cores': [cpus_to_mask(c) for c in self.cores],
            },
        }
        if arch:
            info['arch'] = arch
        return info

    @classmethod
    def from_reframe_processor(cls, processor):
        """Inverse of to_reframe_processor; accepts ReFrame's ProcessorInfo or a dict.

        Missing topology lists are derived from the counts (CPUs numbered
        contiguously), so partitions configured with counts only still work.
        """
        info = getattr(processor, 'info', processor) or {}
        topo = info.get('topology') or {}
        num_cpus = int(info.get('num_cpus') or 0)
        per_core = int(info.get('num_cpus_per_core') or 1)
        num_sockets = int(info.get('num_sockets') or 1)

        def lists(key):
            return [hwloc_mask_to_cpus(m) for m in topo.get(key, [])]

        cores = lists('cores') or [list(range(c, min(c + per_core, num_cpus)))
                                   for c in range(0, num_cpus, per_core)]
        all_cpus = sorted({c for core in cores for c in core})
        sockets = lists('sockets') or _split_even(all_cpus, num_sockets)
        numa = lists('numa_nodes') or sockets
        return cls(sockets=sockets, numa_nodes=numa, cores=cores, source='reframe-config')


def _split_even(cpus, parts):
    parts = max(1, parts)
    size = max(1, len(cpus) // parts)
    return [cpus[i * size:(i + 1) * size] for i in range(parts) if cpus[i * size:(i + 1) * size]]


def from_hwloc_xml(xml_text):
    """Topology from `lstopo --of xml` output."""
    root = ET.fromstring(xml_text)
    found = {'Package': [], 'NUMANode': [], 'Core': []}
    for obj in root.iter('object'):
        kind = obj.get('type')
        if kind in found and obj.get('cpuset'):
            found[kind].append(hwloc_mask_to_cpus(obj.get('cpuset')))
    if not found['Core']:  # some VMs expose PUs only
        found['Core'] = [hwloc_mask_to_cpus(o.get('cpuset')) for o in root.iter('object')
                         if o.get('type') == 'PU']
    all_cpus = sorted({c for core in found['Core'] for c in core})
    return Topology(sockets=found['Package'] or [all_cpus],
                    numa_nodes=[n for n in found['NUMANode'] if n] or [all_cpus],
                    cores=found['Core'], source='hwloc')


def from_lscpu(parseable_text):
    """Topology from `lscpu -p=CPU,CORE,SOCKET,NODE` output."""
    sockets, numa, cores = {}, {}, {}
    for line in parseable_text.splitlines():
        if not line.strip() or line.startswith('#'):
            continue
        fields = line.split(',')
        if len(fields) < 4:
            continue
        cpu, core, socket = int(fields[0]), fields[1], fields[2]
        node = fields[3] or '0'
        cores.setdefault((socket, core), []).append(cpu)
        sockets.setdefault(socket, []).append(cpu)
        numa.setdefault(node, []).append(cpu)

    def ordered(d):
        return [sorted(v) for _, v in sorted(d.items(), key=lambda kv: min(kv[1]))]
    return Topology(sockets=ordered(sockets), numa_nodes=ordered(numa), cores=ordered(cores),
                    source='lscpu')


def _run(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=True)
        return out.stdout
    except (OSError, subprocess.SubprocessError):
        return None


#: detect()'s answers in this process, per YEEBENCH_SIMULATE_HW value: a machine's topology does not
#: change while ReFrame sets up its checks (a --dry-run asked for it over a thousand times).
_DETECTED = {}


def detect():
    """Topology of the machine this runs on (hwloc, then lscpu, then a flat guess), or the one
    YEEBENCH_SIMULATE_HW describes (yeebench.simulated_hardware). Detected once per process and
    simulated-hardware setting; every call gets its own copy."""
    key = os.environ.get(simulated_hardware.ENV, '')
    if key not in _DETECTED:
        _DETECTED[key] = _detect()
    found = _DETECTED[key]
    return Topology(sockets=[list(s) for s in found.sockets], numa_nodes=[list(n) for n in found.numa_nodes],
                    cores=[list(c) for c in found.cores], source=found.source)


def _detect():
    simulated = simulated_hardware.topology_lists()
    if simulated:
        sockets, numa_nodes, cores = simulated
        return Topology(sockets=sockets, numa_nodes=numa_nodes, cores=cores, source='simulated')
    for tool in ('lstopo-no-graphics', 'lstopo'):
        if shutil.which(tool):
            xml_text = _run([tool, '--of', 'xml', '-'])
            if xml_text:
                try:
                    topo = from_hwloc_xml(xml_text)
                    if topo.cores:
                        return topo
                except ET.ParseError:
                    pass
    if shutil.which('lscpu'):
        text = _run(['lscpu', '-p=CPU,CORE,SOCKET,NODE'])
        if text:
            topo = from_lscpu(text)
            if topo.cores:
                return topo
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') \
        else list(range(os.cpu_count() or 1))
    return Topology(sockets=[cpus], numa_nodes=[cpus], cores=[[c] for c in cpus], source='guess')


def available_memory(meminfo='/proc/meminfo', cgroup_root='/'):
    """(bytes available for new work on this host, where the figure comes from): MemAvailable, or the
    room left under this process's cgroup limit (a container, a job step) where that is less;
    (None, None) if unknown. YEEBENCH_SIMULATE_HW=mem=... replaces it (yeebench.simulated_hardware)."""
    simulated = simulated_hardware.get('mem')
    if simulated:
        return simulated, f'{simulated_hardware.ENV} mem'
    host = None
    try:
        match = re.search(r'^MemAvailable:\s+(\d+) kB$', Path(meminfo).read_text(), re.M)
        host = int(match.group(1)) * 1024 if match else None
    except OSError:
        pass
    room, limit_file = cgroup_room_bytes(cgroup_root)
    if room is not None and (host is None or room < host):
        return room, f'cgroup limit less usage ({limit_file})'
    return host, ('MemAvailable' if host is not None else None)


def available_memory_bytes(meminfo='/proc/meminfo', cgroup_root='/'):
    """available_memory's bytes alone."""
    return available_memory(meminfo, cgroup_root)[0]


#: Partition extras that give one node's memory in MiB: the suite's key (`yeebench config from-slurm`
#: writes it from Slurm's RealMemory) and the EESSI test suite's.
MEMORY_EXTRAS = ('mem_per_node_mib', 'mem_per_node')


def partition_memory_bytes(partition):
    """One node's memory in bytes for sizing a problem on `partition`, and where the figure came from.

    The partition's own description first (MEMORY_EXTRAS, MiB); else the available memory of the host that
    plans the job, which is a node of the partition only under ReFrame's `local` scheduler; elsewhere
    the source says it is an assumption and which key replaces it. (None, why) when nothing is known.
    A declared value that is not a positive number raises ValueError naming the key."""
    extras = getattr(partition, 'extras', None) or {}
    for key in MEMORY_EXTRAS:
        if key not in extras:
            continue
        value = extras[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(f'partition {partition.fullname}: extras.{key} = {value!r} is not a positive '
                             'number of MiB')
        return int(value * 2**20), f'extras.{key} = {value} MiB'
    host, source = available_memory()
    if getattr(partition.scheduler, 'registered_name', None) == 'local':
        return host, f'{source} of this node (local scheduler)'
    how = f'add extras.{MEMORY_EXTRAS[0]} (MiB) to partition {partition.fullname}'
    if host is None:
        return None, f'unknown: {how}'
    return host, f'assumed like the host planning the job ({source}): {how}'
