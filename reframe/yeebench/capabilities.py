"""What a partition's compute nodes have, declared in its system file (the idiom of CSCS's checks).

A partition lists what it offers as ReFrame `features` and says where in `extras`:

  feature   extras entry                                            used by
  osu       osu: {'pt2pt': DIR, 'collective': DIR, 'cuda': bool}    OsuPt2Pt, OsuCollective
  netpipe   netpipe: PATH of NPopenmpi / NPmpi                       NetPIPEPt2Pt, containers
  numactl   (the numactl program on the nodes' PATH)                 NUMA checks
  fio       (the fio program on the nodes' PATH)                     AcceptanceStorage
  gpu       num_gpus: GPUs per node                                  CUDA cases
  -         llc_bytes: last-level cache of a node (when the processor    NUMA/triad array sizes
            entry lists no caches)

Paths are written into job scripts as given, so a system file may say `$OSU_HOME/libexec/...` and
let the node resolve it.  extras['missing'] = {feature: why} carries the reason a feature is absent.
Every one of these keys is optional: a check asking for a feature the partition does not declare is
still generated and skips with a reason naming the partition and the configuration key that unlocks
it (`YeebenchCheck.require_feature`, `FEATURE_KEYS`), never as a missing program.

Nothing here runs on a remote node's behalf on the launch host.  `detect()` looks at the machine it
runs on, so it describes a partition only where that machine is the node: the suite's `local` and
`vcluster` call it at load time, and a partition of any configuration with ReFrame's `local`
scheduler that declares none of these keys gets what `detect()` finds here (`partition_features`,
`partition_extras`; detected once per process and environment).
"""
import functools
import os
import shutil
import subprocess

from yeebench import launch, numa_policy, osu, tools
from yeebench import scaling

#: One benchmark per OSU folder (the table's first of each kind): its folder holds the others of its kind.
OSU_KINDS = osu.probes()

#: Programs a node runs from its PATH, declared as features of the same name.
NODE_PROGRAMS = {'numactl': 'numactl', 'fio': 'fio'}

#: The configuration a site adds to a partition to unlock a feature (named in the skip reasons).
FEATURE_KEYS = {
    'numactl': "add 'numactl' to its features (the numactl program is on the nodes' PATH)",
    'fio': "add 'fio' to its features (the fio program is on the nodes' PATH)",
    'osu': ("add 'osu' to its features and extras {'osu': {'pt2pt': DIR, 'collective': DIR}} "
            "(the folders of the OSU Micro-Benchmarks on the nodes)"),
    'netpipe': "add 'netpipe' to its features and extras {'netpipe': PATH} (NPopenmpi or NPmpi on the nodes)",
    'gpu': "add 'gpu' to its features and devices [{'type': 'gpu', 'num_devices': N}]",
}

#: Environment variables detect() reads besides PATH: its answer is cached per their values.
_DETECT_ENV = ('PATH', 'OSU_HOME', 'NETPIPE_HOME', 'SPACK_ENV', 'YEEBENCH_PREFIX')


def detect(env=None):
    '''(features, extras) of this machine as a compute node: OSU, NetPIPE and node programs.'''
    env = os.environ if env is None else env
    features, extras, missing = [], {}, {}
    dirs, cuda, origin = {}, False, ''
    for kind, probe in OSU_KINDS.items():
        found = osu.locate(probe, env)
        if found.path:
            dirs[kind] = os.path.dirname(found.path)
            cuda = cuda or osu.has_cuda(found.path)
            origin = origin or found.origin
        else:
            missing[f'osu-{kind}'] = found.reason
    if dirs:
        features.append('osu')
        extras['osu'] = dict(dirs, cuda=cuda, origin=origin)
    else:
        missing['osu'] = missing['osu-pt2pt']
    netpipe = tools.find_netpipe(env)
    if netpipe:
        features.append('netpipe')
        extras['netpipe'] = netpipe
    else:
        missing['netpipe'] = ('NetPIPE not found: no NPopenmpi/NPmpi on PATH (apt-get install '
                              'netpipe-openmpi) and NETPIPE_HOME not set')
    for feature, program in NODE_PROGRAMS.items():
        if shutil.which(program, path=env.get('PATH')):
            features.append(feature)
        else:
            missing[feature] = f'{program} is not on PATH (apt-get install {feature})'
    llc, _ = scaling.llc_from_sysfs()
    if llc:
        extras['llc_bytes'] = llc
    extras['missing'] = missing
    return features, extras


@functools.lru_cache(maxsize=None)
def _detected(env_key):
    return detect(dict(env_key))


def detected_here():
    '''detect() of this machine, once per process and per value of the environment it reads.'''
    features, extras = _detected(tuple((k, os.environ[k]) for k in _DETECT_ENV if k in os.environ))
    return list(features), dict(extras)


def launch_host_is_node(partition):
    '''True for a partition with ReFrame's `local` scheduler: its jobs run on this machine.'''
    scheduler = getattr(partition, 'scheduler', None)
    return getattr(scheduler, 'registered_name', None) == 'local'


def _declares_capabilities(partition):
    # the suite's own systems (local, vcluster) record what detection found missing
    return 'missing' in partition.extras or any(f in partition.features for f in FEATURE_KEYS if f != 'gpu')


def _discovered(partition):
    '''(features, extras) this machine adds to a `local`-scheduler partition that declares none.'''
    if launch_host_is_node(partition) and not _declares_capabilities(partition):
        return detected_here()
    return [], {}


def partition_features(partition):
    '''The partition's features plus, on a `local`-scheduler partition declaring none, those found here.'''
    return set(partition.features) | set(_discovered(partition)[0])


@functools.lru_cache(maxsize=None)
def _refused(path):
    return numa_policy.refused_here()


@functools.lru_cache(maxsize=None)
def mpi_here(path):
    '''The MPI whose `mpirun --version` answers on this machine's PATH `path`: 'openmpi', or None.'''
    exe = shutil.which(launch.OPENMPI_VERSION_COMMAND[0], path=path)
    if not exe:
        return None
    try:
        out = subprocess.run([exe, *launch.OPENMPI_VERSION_COMMAND[1:]], capture_output=True, text=True,
                             timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return 'openmpi' if '(Open MPI)' in out.stdout + out.stderr else None


def partition_extras(partition):
    '''The partition's extras; on a `local`-scheduler partition what it does not declare is filled in from
    this machine: detect() where it declares no capabilities, the memory policies numactl is refused,
    and `mpi_implementation` from `mpirun --version`.'''
    found = dict(_discovered(partition)[1])
    if launch_host_is_node(partition) and 'numa_policy_refused' not in partition.extras:
        found['numa_policy_refused'] = _refused(os.environ.get('PATH'))
    if launch_host_is_node(partition) and 'mpi_implementation' not in partition.extras:
        mpi = mpi_here(os.environ.get('PATH'))
        if mpi:
            found['mpi_implementation'] = mpi
    return {**found, **partition.extras} if found else partition.extras


def llc_bytes(partition):
    '''(bytes, how) of one node's last-level cache: the processor entry's caches (ReFrame's remote_detect
    fills them), else extras.llc_bytes, else this machine's sysfs on a `local`-scheduler partition;
    (None, why) naming the keys that would give it.'''
    llc, how = scaling.llc_from_reframe(getattr(partition.processor, 'info', None))
    if llc:
        return llc, how
    llc = partition.extras.get('llc_bytes')
    if llc:
        return int(llc), 'extras.llc_bytes of the partition'
    if launch_host_is_node(partition):
        llc, _ = scaling.llc_from_sysfs()
        if llc:
            return llc, 'the last-level cache of this machine (sysfs; the partition runs here)'
    return None, (f'{how}, and the partition has no extras.llc_bytes: add the caches to its processor entry '
                  f'(ReFrame\'s remote_detect finds them) or extras {{\'llc_bytes\': BYTES}}')


def missing_reason(partition, feature):
    '''Why `partition` lacks `feature` (None when it has it), naming the configuration key to add.'''
    if feature in partition_features(partition):
        return None
    why = partition_extras(partition).get('missing', {}).get(feature)
    if why:   # detection looked on the node and did not find it
        return f'partition {partition.fullname} has no {feature}: {why}'
    return (f'partition {partition.fullname} declares no {feature}: '
            + FEATURE_KEYS.get(feature, f'add {feature!r} to its features'))


def osu_benchmark(partition, benchmark):
    '''(path, None) of an OSU benchmark on the partition's nodes, or (None, why not).'''
    why = missing_reason(partition, 'osu')
    if why:
        return None, why
    kind = osu.kind(benchmark)
    extras = partition_extras(partition)
    folder = extras.get('osu', {}).get(kind)
    if not folder:
        reason = extras.get('missing', {}).get(f'osu-{kind}', f"add its folder to extras.osu['{kind}']")
        return None, f'partition {partition.fullname} has no OSU {kind} benchmarks: {reason}'
    return f'{folder}/{benchmark}', None


NO_OSU_CUDA = 'the partition\'s OSU was built without CUDA support (extras.osu.cuda; no -d cuda)'


def osu_has_cuda(partition):
    return bool(partition_extras(partition).get('osu', {}).get('cuda'))


def osu_origin(partition):
    return partition_extras(partition).get('osu', {}).get('origin', 'system file')


def netpipe(partition):
    '''(path, None) of NetPIPE on the partition's nodes, or (None, why not).'''
    why = missing_reason(partition, 'netpipe')
    if why:
        return None, why
    path = partition_extras(partition).get('netpipe')
    if not path:
        return None, f"partition {partition.fullname} has the netpipe feature but no extras {{'netpipe': PATH}}"
    return path, None
