"""A ReFrame system file for the Slurm cluster this runs on, from `sinfo` and `scontrol show node`.

    yeebench config from-slurm [--partition P] [-o FILE]

One system named after Slurm's ClusterName, one ReFrame partition per Slurm partition (or the one
asked for), each with: scheduler `slurm` (`squeue` where Slurm keeps no accounting), launcher `srun`
with the MPI plugin Slurm offers (SLURM_MPI_TYPE: pmix first, then pmi2), `access` selecting the
partition, a `processor` entry of its nodes (CPUs, sockets, cores, threads per core), `devices` and a
`_rfm_gpu` resource from their GPU Gres, a `memory` resource, and the optional yeebench extras it can
know (`num_nodes`, `mem_per_node_mib`). Everything else (features such as numactl or osu, the caches,
NUMA nodes) is optional: the checks skip naming what to add.

A partition's nodes of different shapes are described by the most common one (the others are named in
its `descr`). Without Slurm, or with a Slurm whose answers cannot be read, SlurmError says why in one line.
"""
import collections
import re
import shutil
import socket
import subprocess

from yeebench import safe_io


class SlurmError(Exception):
    """Slurm is absent or its answers cannot be read (one line)."""


#: ReFrame's pattern for a partition name.
_NAME = re.compile(r'[^A-Za-z0-9_-]')
#: `Key=` at the start of a field of `scontrol ... -o` output (values may hold spaces, e.g. OS=, Reason=).
_FIELD = re.compile(r'(?:^|\s)([A-Za-z][A-Za-z0-9_.:/]*)=')
_GRES = re.compile(r'^gpu(?::([^:(]+))?(?::([0-9]+))?(?:\(.*\))?$')
#: A count as Slurm prints it: ASCII digits only (str.isdigit() also takes '²', which int() refuses).
_DIGITS = re.compile(r'[0-9]+')


def run(argv, timeout=60):
    """stdout of a Slurm command, or SlurmError saying why it gave none."""
    if not shutil.which(argv[0]):
        raise SlurmError(f'{argv[0]} not found on PATH: this is not a Slurm login node')
    try:
        # bytes that are not UTF-8 (a node's OS= or Reason= text) read as U+FFFD, never an exception
        out = subprocess.run(argv, capture_output=True, encoding='utf-8', errors='replace', timeout=timeout,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as err:
        raise SlurmError(f'{" ".join(argv)} could not run: {err}')
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ['no output'])[-1]
        raise SlurmError(f'{" ".join(argv)} failed (exit {out.returncode}): {last}')
    return out.stdout


def parse_fields(line):
    """{'NodeName': 'n1', 'CPUTot': '8', ...} from one line of `scontrol show ... -o` output."""
    matches = list(_FIELD.finditer(line))
    fields = {}
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(line)
        fields[m.group(1)] = line[m.end():end].strip()
    return fields


def parse_nodes(text):
    """{node name: fields} from `scontrol show node -o` (one node per line); SlurmError on junk."""
    nodes = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = parse_fields(line.strip())
        if 'NodeName' not in fields:
            raise SlurmError(f'scontrol show node: a line without NodeName=: {line.strip()[:60]!r}')
        nodes[fields['NodeName']] = fields
    if not nodes:
        raise SlurmError('scontrol show node lists no nodes')
    return nodes


def parse_sinfo(text):
    """{partition: [node, ...]} from `sinfo -h -N -o %N|%R` (one line per node and partition)."""
    partitions = collections.OrderedDict()
    for line in text.splitlines():
        if not line.strip():
            continue
        node, sep, partition = line.strip().partition('|')
        partition = partition.rstrip('*')       # sinfo marks the default partition with a '*'
        if not sep or not node or not partition or ' ' in node:
            raise SlurmError(f'sinfo: cannot read the line {line.strip()[:60]!r} (expected NODE|PARTITION)')
        nodes = partitions.setdefault(partition, [])
        if node not in nodes:
            nodes.append(node)
    if not partitions:
        raise SlurmError('sinfo lists no partitions')
    return partitions


def gpus_of(gres):
    """GPUs per node from a node's Gres ('gpu:a100:4(S:0-1),shard:8' -> 4; '(null)' -> 0)."""
    count = 0
    for entry in (gres or '').split(','):
        m = _GRES.match(entry.strip())
        if m:   # gpu:N, gpu:TYPE:N (gpu:TYPE alone is one)
            kind, number = m.group(1), m.group(2)
            count += int(number) if number else int(kind) if kind and _DIGITS.fullmatch(kind) else 1
    return count


def _int(fields, key, node, default=None):
    value = fields.get(key, '')
    if not value and default is not None:
        return default
    if not _DIGITS.fullmatch(value):
        raise SlurmError(f'scontrol show node {node}: {key}={value[:40] or "(missing)"} is not a number')
    return int(value)


def node_shape(name, fields):
    """(cpus, sockets, cores per socket, threads per core, GPUs, memory MiB) of one node."""
    cpus = _int(fields, 'CPUTot', name)
    sockets = _int(fields, 'Sockets', name) * _int(fields, 'Boards', name, default=1)
    cores = _int(fields, 'CoresPerSocket', name)
    threads = _int(fields, 'ThreadsPerCore', name)
    memory = int(fields['RealMemory']) if _DIGITS.fullmatch(fields.get('RealMemory', '')) else 0
    if cpus < 1 or sockets < 1 or cores < 1 or threads < 1:
        raise SlurmError(f'scontrol show node {name}: CPUTot={cpus} Sockets={sockets} CoresPerSocket={cores} '
                         f'ThreadsPerCore={threads} describe no CPU')
    return cpus, sockets, cores, threads, gpus_of(fields.get('Gres')), memory


def parse_config(text):
    """{'ClusterName': 'x', ...} from `scontrol show config` ('Key   = value' lines)."""
    config = {}
    for line in (text or '').splitlines():
        key, sep, value = line.partition('=')
        if sep and key.strip() and ' ' not in key.strip():
            config[key.strip()] = value.strip()
    return config


def mpi_plugin(srun_list):
    """The MPI plugin to ask srun for (`srun --mpi=list` output): pmix first, then pmi2, else None."""
    names = set(re.findall(r'\b(pmix|pmi2|cray_shasta)\b', srun_list or ''))
    for choice in ('pmix', 'pmi2', 'cray_shasta'):
        if choice in names:
            return choice
    return None


def partition_entry(name, node_names, nodes, scheduler, mpi, binds=True):
    """One ReFrame partition for Slurm partition `name`."""
    shapes = collections.Counter(node_shape(n, nodes[n]) for n in node_names if n in nodes)
    unknown = [n for n in node_names if n not in nodes]
    if unknown:
        raise SlurmError(f'sinfo puts node {unknown[0]} in partition {name}, scontrol show node does not list it')
    (cpus, sockets, cores, threads, gpus, memory), count = shapes.most_common(1)[0]
    descr = f'Slurm partition {name}: {len(node_names)} node(s) of {cpus} CPUs'
    if len(shapes) > 1:
        descr += f' (described by its {count} most common nodes; {len(node_names) - count} differ)'
    entry = {
        'name': _NAME.sub('_', name),
        'descr': descr,
        'scheduler': scheduler,
        'launcher': 'srun',
        'access': [f'--partition={name}'],
        'environs': ['builtin'],
        'max_jobs': 8,
        'processor': {'num_cpus': cpus, 'num_sockets': sockets, 'num_cpus_per_socket': cpus // sockets,
                      'num_cpus_per_core': threads},
        'resources': [{'name': 'memory', 'options': ['--mem={size}']}],
        'extras': {'num_nodes': len(node_names)},
    }
    if not re.match(r'^[A-Za-z_]', entry['name']):
        entry['name'] = 'p_' + entry['name']
    platform = nodes[node_names[0]].get('Arch')
    if platform and platform not in ('(null)', 'n/a'):
        entry['processor']['platform'] = platform
    if memory:
        entry['extras']['mem_per_node_mib'] = memory
    if mpi:
        entry['env_vars'] = [['SLURM_MPI_TYPE', mpi]]
    if not binds:   # the binding checks then skip with the reason instead of finding ranks sharing cores
        entry['extras']['cpu_binding'] = False
    if gpus:
        entry['features'] = ['gpu']
        entry['devices'] = [{'type': 'gpu', 'num_devices': gpus}]
        entry['resources'].append({'name': '_rfm_gpu', 'options': ['--gres=gpu:{num_gpus_per_node}']})
    return entry


def _distinct_names(entries):
    """Give each ReFrame partition its own name: Slurm's 'a.b' and 'a_b' both become 'a_b', which ReFrame
    would take for one partition; the later ones are suffixed _2, _3 ... (`access` keeps Slurm's name)."""
    taken = set()
    for entry in entries:
        name, n = entry['name'], 1
        while entry['name'] in taken:
            n += 1
            entry['name'] = f'{name}_{n}'
        taken.add(entry['name'])


def system_config(sinfo_text, nodes_text, config_text='', srun_list='', partition=None, hostname=None):
    """The ReFrame `site_configuration` dict from the commands' outputs."""
    partitions = parse_sinfo(sinfo_text)
    nodes = parse_nodes(nodes_text)
    if partition is not None:
        if partition not in partitions:
            raise SlurmError(f'no Slurm partition {partition!r} (sinfo lists: {", ".join(partitions)})')
        partitions = {partition: partitions[partition]}
    config = parse_config(config_text)
    cluster = _NAME.sub('_', config.get('ClusterName') or 'slurm-cluster')
    no_accounting = config.get('AccountingStorageType', '') in ('', 'accounting_storage/none')
    scheduler = 'squeue' if config_text and no_accounting else 'slurm'
    mpi = mpi_plugin(srun_list)
    # TaskPlugin without task/affinity or task/cgroup: srun's --cpu-bind does nothing on these nodes
    task_plugin = config.get('TaskPlugin', '')
    binds = not task_plugin or bool(re.search(r'task/(affinity|cgroup)', task_plugin))
    hostname = hostname or socket.gethostname()
    entries = [partition_entry(p, names, nodes, scheduler, mpi, binds) for p, names in partitions.items()]
    _distinct_names(entries)
    return {
        'systems': [{
            'name': cluster,
            'descr': f'Slurm cluster {cluster}',
            'hostnames': [f'^{re.escape(hostname)}$'],
            'modules_system': 'nomod',
            'partitions': entries,
        }],
        'environments': [{'name': 'builtin', 'cc': 'mpicc', 'cxx': 'mpicxx', 'ftn': 'mpif90'}],
    }


def render(config, source):
    """The system file's text: a docstring saying how it was made, then `site_configuration`."""
    import pprint
    body = pprint.pformat(config, indent=1, width=110, sort_dicts=False)
    return (f'"""ReFrame configuration written by `yeebench config from-slurm` from {source}.\n\n'
            'Check `hostnames` (a regex of the login nodes) and `access` (--account=..., --qos=...); add what\n'
            'the nodes have as partition features (numactl, osu, netpipe, fio) and extras, or let ReFrame\n'
            'detect the processor\'s caches and NUMA nodes (remote_detect); see "Using yeebench with your own\n'
            'ReFrame configuration" in reframe/README.md.\n"""\n'
            f'site_configuration = {body}\n')


def collect(partition=None):
    """Run the Slurm commands here and return the system file's text."""
    sinfo = run(['sinfo', '--noheader', '--Node', '--format=%N|%R'])
    nodes = run(['scontrol', '--oneliner', 'show', 'node'])
    try:
        config = run(['scontrol', 'show', 'config'])
    except SlurmError:
        config = ''
    try:
        srun_list = run(['srun', '--mpi=list'], timeout=20)
    except SlurmError:
        srun_list = ''
    return render(system_config(sinfo, nodes, config, srun_list, partition),
                  'sinfo and scontrol show node on ' + socket.gethostname())


def write_atomically(path, text):
    """Write `text` to `path` through a temporary file beside it: a reader sees the old file or the new one,
    readable as open() would make it; safe_io.FileRefused (a usage error) where `path` is a link, a device,
    a FIFO or a directory."""
    safe_io.write_text(path, text, make_parents=False)
