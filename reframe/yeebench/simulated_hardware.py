"""Hardware facts overridden by YEEBENCH_SIMULATE_HW, to prove hardware-dependent code and tests
on a machine of another kind without that machine.

YEEBENCH_SIMULATE_HW="llc=260Mi,cores=2,numa=1,sockets=1,mem=8Gi": every key is optional; a key
given replaces what detection would report, everywhere the suite detects it: the last-level
cache (results ingest, numa-bw array sizing), the topology (the `local` system's processor entry)
and the memory size. The simulated topology is flat: `cores` CPUs 0..cores-1 split evenly into
`sockets` and `numa` nodes (a node gets no CPUs when there are more nodes than cores). A run on
the real machine then sizes and skips as the simulated one would; programs still meet the real
CPUs, so simulate more cores or NUMA nodes than exist only for sizing and dry runs.
A malformed value is an error (ValueError, one line), never ignored.
"""
import os
import re

ENV = 'YEEBENCH_SIMULATE_HW'
_KEYS = {'llc': 'size', 'mem': 'size', 'cores': 'count', 'numa': 'count', 'sockets': 'count'}
_SIZE = re.compile(r'^(\d+)([KMGT]i?)?$')
_UNITS = {None: 1, 'K': 10**3, 'M': 10**6, 'G': 10**9, 'T': 10**12,
          'Ki': 2**10, 'Mi': 2**20, 'Gi': 2**30, 'Ti': 2**40}


def parse(text):
    """'llc=260Mi,cores=1' -> {'llc': 272629760, 'cores': 1}; ValueError naming the bad part."""
    facts = {}
    for part in filter(None, (p.strip() for p in str(text).split(','))):
        key, sep, value = part.partition('=')
        key, value = key.strip(), value.strip()
        if not sep or key not in _KEYS:
            raise ValueError(f'{ENV}: {part!r} is not one of {", ".join(k + "=" for k in _KEYS)}')
        if _KEYS[key] == 'size':
            match = _SIZE.match(value)
            if not match or int(match.group(1)) == 0:
                raise ValueError(f'{ENV}: {key}={value!r} is not a size such as 260Mi or 8Gi')
            facts[key] = int(match.group(1)) * _UNITS[match.group(2)]
        else:
            if not value.isdigit() or int(value) == 0:
                raise ValueError(f'{ENV}: {key}={value!r} is not a positive count')
            facts[key] = int(value)
    return facts


def facts():
    """The simulated facts of this process's environment ({} when none)."""
    return parse(os.environ.get(ENV, ''))


def get(key):
    """One simulated fact, or None when it is not simulated."""
    return facts().get(key)


def topology_lists():
    """(sockets, numa_nodes, cores) CPU lists of the simulated topology, or None when neither
    cores, numa nor sockets is simulated (the real detection then applies)."""
    sim = facts()
    if not {'cores', 'numa', 'sockets'} & set(sim):
        return None
    cores = sim.get('cores') or os.cpu_count() or 1
    cpus = list(range(cores))

    def split(parts):   # the first objects get the CPUs; any beyond `cores` objects get none
        chunk = -(-cores // parts)
        return [cpus[i * chunk:(i + 1) * chunk] for i in range(parts)]
    return split(sim.get('sockets', 1)), split(sim.get('numa', 1)), [[c] for c in cpus]
