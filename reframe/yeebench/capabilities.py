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
A check asking for a missing feature is still generated and skips with a reason naming the
partition and the feature (`YeebenchCheck.require_feature`).

Nothing here runs on the launch host while checks are set up.  `detect()` looks at the machine it
runs on, so only configurations whose nodes are that machine call it at load time: `local` (the
launch host is the compute node) and `vcluster` (its nodes are namespaces of this machine).
"""
import os
import shutil

from yeebench import osu, tools
from yeebench import scaling

#: One benchmark per OSU folder (the table's first of each kind): its folder holds the others of its kind.
OSU_KINDS = osu.probes()

#: Programs a node runs from its PATH, declared as features of the same name.
NODE_PROGRAMS = {'numactl': 'numactl', 'fio': 'fio'}


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


def llc_bytes(partition):
    '''(bytes, how) of one node's last-level cache: the processor entry's caches, else extras.llc_bytes;
    (None, why) when the system file gives neither.'''
    llc, how = scaling.llc_from_reframe(getattr(partition.processor, 'info', None))
    if llc:
        return llc, how
    llc = partition.extras.get('llc_bytes')
    if llc:
        return int(llc), 'extras.llc_bytes of the partition'
    return None, f'{how}, and the partition has no extras.llc_bytes'


def missing_reason(partition, feature):
    '''Why `partition` lacks `feature` (None when it has it).'''
    if feature in partition.features:
        return None
    why = partition.extras.get('missing', {}).get(feature)
    return (f'partition {partition.fullname} has no feature {feature!r}: '
            + (why or f'declare it in the system file (features, extras.{feature})'))


def osu_benchmark(partition, benchmark):
    '''(path, None) of an OSU benchmark on the partition's nodes, or (None, why not).'''
    why = missing_reason(partition, 'osu')
    if why:
        return None, why
    kind = osu.kind(benchmark)
    folder = partition.extras.get('osu', {}).get(kind)
    if not folder:
        reason = partition.extras.get('missing', {}).get(f'osu-{kind}', 'extras.osu has no {kind} folder')
        return None, f'partition {partition.fullname} has no OSU {kind} benchmarks: {reason}'
    return f'{folder}/{benchmark}', None


NO_OSU_CUDA = 'the partition\'s OSU was built without CUDA support (extras.osu.cuda; no -d cuda)'


def osu_has_cuda(partition):
    return bool(partition.extras.get('osu', {}).get('cuda'))


def osu_origin(partition):
    return partition.extras.get('osu', {}).get('origin', 'system file')


def netpipe(partition):
    '''(path, None) of NetPIPE on the partition's nodes, or (None, why not).'''
    why = missing_reason(partition, 'netpipe')
    return (None, why) if why else (partition.extras['netpipe'], None)
