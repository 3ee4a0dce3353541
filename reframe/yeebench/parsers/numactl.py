"""`numactl --hardware`: NUMA nodes, their CPUs and sizes, and the distance matrix."""
import re

from yeebench.parsers import ParseError


def parse_hardware(text):
    """{'nodes': [0, 1], 'cpus': {0: [...]}, 'size_mb': {0: N}, 'distances': [[10, 21], [21, 10]]}."""
    nodes, cpus, sizes, distances = [], {}, {}, []
    in_distances = False
    for line in text.splitlines():
        m = re.match(r'available:\s+\d+\s+nodes\s+\(([^)]*)\)', line)
        if m:
            nodes = _node_list(m.group(1))
            continue
        m = re.match(r'node\s+(\d+)\s+cpus:\s*(.*)$', line)
        if m:
            cpus[int(m.group(1))] = [int(c) for c in m.group(2).split()]
            continue
        m = re.match(r'node\s+(\d+)\s+size:\s+(\d+)\s+MB', line)
        if m:
            sizes[int(m.group(1))] = int(m.group(2))
            continue
        if line.startswith('node distances'):
            in_distances = True
            continue
        if in_distances:
            m = re.match(r'\s*(\d+):\s+(.*)$', line)
            if m:
                distances.append([int(d) for d in m.group(2).split()])
    if not nodes:
        raise ParseError('no "available: N nodes" line in numactl --hardware output')
    if len(distances) != len(nodes) or any(len(row) != len(nodes) for row in distances):
        raise ParseError(f'distance matrix is not {len(nodes)}x{len(nodes)}')
    return {'nodes': nodes, 'cpus': cpus, 'size_mb': sizes, 'distances': distances}


def _node_list(text):
    out = []
    for part in text.split(','):
        if '-' in part:
            a, b = part.split('-')
            out.extend(range(int(a), int(b) + 1))
        elif part.strip():
            out.append(int(part))
    return out
