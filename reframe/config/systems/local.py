"""`local`: this machine, detected when the configuration is loaded.

Sockets, cores and NUMA nodes come from hwloc (lstopo) or lscpu; programs run
with the local scheduler and Open MPI's mpirun.  Run-as-root settings appear
only when running as root; --oversubscribe is added per check only when it
needs more cores than the node has (see yeebench.base).  Container platforms
are declared for the runtimes found on PATH.  NVIDIA GPUs listed by nvidia-smi
add the `gpu` feature, a `devices` entry and extras.num_gpus (none of them
without a GPU).  OSU, NetPIPE, numactl and fio are features with their paths in extras
(yeebench.capabilities), detected here because this machine is both launch host and node.
So is single-copy (CMA): where this machine refuses process_vm_readv (a container without
CAP_SYS_PTRACE, Yama ptrace_scope 2 or 3) every job runs with Open MPI's vader single-copy and UCX's
cma transport off (extras.single_copy_refused says why); the point-to-point and collective checks
probe again inside their job and record their own decision (yeebench.single_copy).
"""
import os
import shutil
import socket

from yeebench import apptainer, capabilities, gpus, numa_policy, single_copy, topology

_topo = topology.detect()
_gpus = gpus.detect_nvidia()
_ROOT = hasattr(os, 'geteuid') and os.geteuid() == 0

# What the node has (OSU, NetPIPE, numactl, fio): detected here, when the configuration is loaded,
# because on this system the launch host is the compute node; a cluster's system file declares them.
_found, _tools = capabilities.detect()
_features = ['mpi', 'local'] + _found
for tool, feature in (('lstopo', 'hwloc'), ('hwloc-calc', 'hwloc')):
    if shutil.which(tool) and feature not in _features:
        _features.append(feature)
if _gpus:
    _features.append('gpu')

_container_platforms = []
for tool, platform in (('docker', 'Docker'), ('podman', 'Docker'), ('apptainer', 'Apptainer'),
                       ('singularity', 'Singularity')):
    if shutil.which(tool) and all(p['type'] != platform for p in _container_platforms):
        _container_platforms.append({'type': platform})
# Apptainer unpacked into build/ by containers/apptainer.sh: declared with its directory on PATH.
_apptainer = apptainer.find()
if _apptainer and not shutil.which('apptainer'):
    _container_platforms.append({'type': 'Apptainer',
                                 'env_vars': [['PATH', f'{os.path.dirname(_apptainer)}:$PATH']]})

_single_copy_refused = single_copy.refused_here()
_env_vars = []
if _single_copy_refused:
    _env_vars += [['OMPI_MCA_btl_vader_single_copy_mechanism', 'none'], ['UCX_TLS', '^cma']]
if _ROOT:   # Open MPI refuses to start as root without these
    _env_vars += [['OMPI_ALLOW_RUN_AS_ROOT', '1'], ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1']]

system = {
    'name': 'local',
    'descr': (f'This machine ({socket.gethostname()}): {_topo.num_sockets} socket(s), '
              f'{_topo.num_numa_nodes} NUMA node(s), {_topo.num_cores} cores, '
              f'{_topo.num_cpus} CPUs (detected by {_topo.source})'
              + (f', {len(_gpus)} GPU(s) ({_gpus[0].name})' if _gpus else '')),
    'hostnames': ['.*'],
    'modules_system': 'nomod',
    'partitions': [{
        'name': 'default',
        'descr': 'all cores of this machine, mpirun launcher'
                 + (f'; single-copy (CMA) off: {_single_copy_refused}' if _single_copy_refused else ''),
        'scheduler': 'local',
        'launcher': 'mpirun',
        # 'spack' only inside an activated Spack environment (else every check would run twice)
        'environs': ['host'] + (['spack'] if os.environ.get('SPACK_ENV') else []),
        'max_jobs': 1,          # performance runs must not share the cores
        'processor': _topo.to_reframe_processor(),
        'features': _features,
        'env_vars': _env_vars,
        'container_platforms': _container_platforms,
        'devices': gpus.reframe_devices(_gpus),
        'extras': {'num_nodes': 1, 'mpi_implementation': 'openmpi', **_tools,
                   'numa_policy_refused': numa_policy.refused_here(),
                   'single_copy_refused': _single_copy_refused,
                   'topology_source': _topo.source, **({'num_gpus': len(_gpus)} if _gpus else {})},
    }],
}
