"""How much memory this process's cgroup still allows, so that a container or a Slurm job
step with a memory limit is not sized from the host's MemAvailable. Reads the cgroup v2
hierarchy or the v1 memory controller where /proc/self/mountinfo says they are mounted, on
the process's own cgroup and each ancestor (a limit may be set higher up). `root` prefixes
every path, so tests can hand in a stand-in tree."""
from pathlib import Path

#: cgroup v1 writes "no limit" as a huge number (PAGE_COUNTER_MAX pages).
_UNLIMITED = 1 << 62


def _bytes(path):
    """A limit or usage file's value; None for 'max', a huge v1 value, or no readable number."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if not text.isdigit():
        return None
    value = int(text)
    return value if value < _UNLIMITED else None


def cgroup_mounts(root):
    """(cgroup v2 mount point, v1 memory controller mount point), either None."""
    v2 = v1 = None
    try:
        lines = (root / 'proc/self/mountinfo').read_text().splitlines()
    except OSError:
        return None, None
    for line in lines:
        # ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
        head, sep, tail = line.partition(' - ')
        fields, tail = head.split(), tail.split()
        if not sep or len(fields) < 5 or len(tail) < 3:
            continue
        if tail[0] == 'cgroup2' and v2 is None:
            v2 = fields[4]
        if tail[0] == 'cgroup' and v1 is None and 'memory' in tail[2].split(','):
            v1 = fields[4]
    return v2, v1


def _levels(root, mount, rel):
    """The cgroup's directory and each ancestor's, up to the mount point."""
    parts = [p for p in rel.split('/') if p and p not in ('.', '..')]
    base = root / mount.lstrip('/')
    return [base.joinpath(*parts[:n]) for n in range(len(parts), -1, -1)]


def cgroup_room_bytes(root='/'):
    """(bytes the tightest cgroup level still allows, its limit file) or (None, None) when no
    memory limit applies. The room at a level is its limit less its current usage."""
    root = Path(root)
    v2, v1 = cgroup_mounts(root)
    try:
        entries = (root / 'proc/self/cgroup').read_text().splitlines()
    except OSError:
        return None, None
    best, where = None, None
    for entry in entries:  # ID:CONTROLLERS:PATH
        parts = entry.split(':', 2)
        if len(parts) != 3:
            continue
        _, controllers, rel = parts
        if controllers == '' and v2:
            mount, limit_file, usage_file = v2, 'memory.max', 'memory.current'
        elif 'memory' in controllers.split(',') and v1:
            mount, limit_file, usage_file = v1, 'memory.limit_in_bytes', 'memory.usage_in_bytes'
        else:
            continue
        for level in _levels(root, mount, rel):
            limit = _bytes(level / limit_file)
            if limit is None:
                continue
            room = max(0, limit - (_bytes(level / usage_file) or 0))
            if best is None or room < best:
                best, where = room, str(level / limit_file)
    return best, where
