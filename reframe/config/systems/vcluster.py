"""`vcluster`: the virtual Slurm cluster that `yeebench vcluster up` builds on one machine.

Nodes are network namespaces (vc0, vc1, ... on 10.77.0.0/24) with their own slurmd; the login node is
the head namespace, so ReFrame must run there:

    yeebench vcluster up --nodes 2 --link-rate 1gbit
    yeebench vcluster exec -- reframe -C reframe/config/settings.py -c reframe/yeebench/checks -R --system vcluster -r
    yeebench vcluster down

Node count, CPUs per node and link rate are read from the running cluster's state.json
($YEEBENCH_VCLUSTER_DIR, default /run/yeebench-vcluster); without a running cluster the defaults of
`vcluster up` (2 nodes of 2 CPUs) describe it.
"""
import json
import os
import shutil

from yeebench import apptainer, capabilities

_STATE = os.path.join(os.environ.get('YEEBENCH_VCLUSTER_DIR', '/run/yeebench-vcluster'), 'state.json')
_SUBNET = '10.77.0.0/24'


def _cluster_facts():
    try:
        with open(_STATE) as f:
            layout = json.load(f)['layout']
        return (len(layout['nodes']), int(layout['cpus_per_node']), layout['nodes'][0]['cpus'],
                layout.get('link_rate_bps'), bool(layout.get('cpus_shared')))
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return 2, 2, [0, 1], None, False


_nodes, _cpus, _node0_cpus, _rate, _shared = _cluster_facts()


def _mask(cpus):
    return hex(sum(1 << c for c in cpus))


# One virtual node: the CPUs `vcluster up` gave it (node 0's host CPU numbers; other nodes have the
# same count), one socket and one NUMA node, one hardware thread per core.
_processor = {
    'num_cpus': _cpus, 'num_cpus_per_core': 1, 'num_sockets': 1, 'num_cpus_per_socket': _cpus,
    'topology': {'numa_nodes': [_mask(_node0_cpus)], 'sockets': [_mask(_node0_cpus)],
                 'cores': [_mask([c]) for c in _node0_cpus]},
}

# Open MPI over TCP, restricted to the cluster's own subnet (the namespaces also have loopback).
_env_vars = [
    ['OMPI_MCA_btl_tcp_if_include', _SUBNET],
    ['OMPI_MCA_oob_tcp_if_include', _SUBNET],
    ['OMPI_ALLOW_RUN_AS_ROOT', '1'],            # the virtual cluster's daemons run as root
    ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1'],
]

if _shared:
    # Nodes share host CPUs (e.g. 2 nodes x 2 CPUs on a 2-core CI machine): busy-polling ranks would
    # starve the kernel threads that move and shape the virtual links, so idle ranks yield.
    # For the same reason mpirun does not bind there by default: binding would put rank 0 of every
    # node on the same host CPU.
    _env_vars.append(['OMPI_MCA_mpi_yield_when_idle', '1'])
    _env_vars.append(['OMPI_MCA_hwloc_base_binding_policy', 'none'])

# Apptainer on the nodes (the same machine): hybrid MPI with `srun --mpi=pmix ... apptainer exec` and
# `mpirun ... apptainer exec`; one unpacked into build/ by containers/apptainer.sh is put on PATH.
_apptainer = apptainer.find()
_container_platforms = [] if not _apptainer else [
    {'type': 'Apptainer'} if shutil.which('apptainer') else
    {'type': 'Apptainer', 'env_vars': [['PATH', f'{os.path.dirname(_apptainer)}:$PATH']]}]

# extras.container_binds: host paths every container of a hybrid run gets (reframe/yeebench/checks/containers/container.py).
# Under `srun --mpi=pmix` the ranks reach slurmd's PMIx server through files in its spool directory
# (<state dir>/nodes/<node>/spool; unbound, MPI_Init fails in the container with "PMIX ERROR ...
# gds_ds12_lock_pthread.c"), and Open MPI puts its session directory in the job's TMPDIR (Slurm's
# TmpFS, <state dir>/tmp; unbound: "ORTE_ERROR_LOG ... session_dir.c"): the state directory holds both.
# A site lists its SlurmdSpoolDir, TmpFS and interconnect libraries the same way.
# What the nodes have (OSU, NetPIPE, numactl, fio; yeebench.capabilities): the nodes are network
# namespaces of this machine with its file system and PATH, so detecting here describes them.
_found, _tools = capabilities.detect()
_extras = {**_tools, 'num_nodes': _nodes, 'mpi_implementation': 'openmpi', 'link_rate_bps': _rate,
           'cpus_shared': _shared, 'container_binds': [os.path.dirname(_STATE)]}


def _partition(name, launcher, descr, env_vars, features=(), extras=None):
    return {
        'name': name,
        'descr': descr,
        # This Slurm has no accounting database (slurmdbd), so `sacct` cannot report job states:
        # ReFrame's 'squeue' scheduler polls squeue instead of the default 'slurm' one.
        'scheduler': 'squeue',
        'launcher': launcher,
        'access': ['--partition=vc'],
        'environs': ['host'],
        'max_jobs': 1,              # performance jobs must not share the virtual nodes' CPUs
        'time_limit': '10m',
        'features': ['mpi', 'slurm', 'vcluster', 'hwloc'] + _found + list(features),
        'env_vars': _env_vars + env_vars,
        'processor': _processor,
        'container_platforms': _container_platforms,
        'extras': dict(_extras, **(extras or {})),
    }


system = {
    'name': 'vcluster',
    'descr': (f'Virtual Slurm cluster: {_nodes} network-namespace nodes x {_cpus} CPUs'
              f'{" (sharing host CPUs)" if _shared else ""}, '
              f'{"%g Gbit/s" % (_rate / 1e9) if _rate else "unshaped"} links'),
    'hostnames': [r'^vc-head$'],    # `yeebench vcluster exec` runs commands as host vc-head
    'modules_system': 'nomod',
    'partitions': [
        # SLURM_MPI_TYPE=pmix is `srun --mpi=pmix` for every step (pmi2 does not start Open MPI 4 here).
        # Slurm itself does not bind on the virtual nodes (TaskPlugin=task/none: task/affinity would
        # bind outside a node's CPU set); ranks run on their node's CPUs, --cpu-bind is ignored.
        # Feature `launcher-no-binding`: checks that need the launcher to bind ranks can exclude this
        # partition with valid_systems = ['+mpi -launcher-no-binding'].
        # extras.cpu_binding False: the binding checks skip here, with that reason.
        _partition('srun', 'srun', 'srun --mpi=pmix launches the Open MPI ranks (no Slurm CPU binding)',
                   [['SLURM_MPI_TYPE', 'pmix']], features=['launcher-no-binding'],
                   extras={'cpu_binding': False}),
        _partition('mpirun', 'mpirun', "Open MPI's mpirun inside the allocation (orted started by srun)",
                   []),
    ],
}
