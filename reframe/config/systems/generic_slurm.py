"""`generic-slurm`: a template for a Slurm cluster.  Copy it, rename, edit, and run

    reframe -C reframe/config/settings.py -c reframe/yeebench/checks -R -r --system <your-name>

Everything marked EDIT is site-specific.  Nothing else in the suite needs to change:
checks read node counts, cores and NUMA layout from this file.
"""
system = {
    'name': 'generic-slurm',                 # EDIT: your system's name (used for results and references)
    'descr': 'Template: a Slurm cluster with Open MPI',
    'hostnames': [r'^generic-slurm-template$'],   # EDIT: regex of your login node host names
    'modules_system': 'nomod',               # or 'lmod' / 'tmod4' / 'spack'
    'partitions': [{
        'name': 'compute',                   # EDIT
        'descr': 'CPU compute nodes',
        'scheduler': 'slurm',                # 'squeue' when Slurm accounting is not enabled
        'launcher': 'srun',                  # or 'mpirun' for Open MPI launched inside the allocation
        'access': ['--partition=compute'],   # EDIT: e.g. --account=..., --qos=..., --constraint=...
        'environs': ['host', 'spack'],
        'max_jobs': 8,                       # jobs ReFrame keeps queued at once
        'time_limit': '20m',
        # EDIT: what the compute nodes have (yeebench/capabilities.py lists the features); a check
        # needing a feature not listed here skips, naming the partition and the feature.
        'features': ['mpi', 'numactl', 'hwloc', 'osu', 'netpipe'],
        # OSU_HOME is read on the compute node when the job runs (extras.osu below refers to it).
        'env_vars': [['SLURM_MPI_TYPE', 'pmix'],    # srun --mpi=pmix for Open MPI
                     ['OSU_HOME', '/opt/osu-micro-benchmarks']],   # EDIT
        # EDIT: one compute node (the suite's placement and NUMA checks read this).
        # Generate it on a compute node with:
        #   python -c "from yeebench import topology; print(topology.detect().to_reframe_processor())"
        'processor': {
            'num_cpus': 64, 'num_cpus_per_core': 1, 'num_sockets': 2, 'num_cpus_per_socket': 32,
            'topology': {'numa_nodes': ['0xffffffff', '0xffffffff00000000'],
                         'sockets': ['0xffffffff', '0xffffffff00000000']},
        },
        'extras': {'num_nodes': 4,           # EDIT: nodes the checks may use (>= 2 enables inter-node runs)
                   'mpi_implementation': 'openmpi',
                   'llc_bytes': 2 * 32 * 2**20,   # EDIT: last-level cache of one node (all sockets), bytes
                   'link_rate_bps': 100e9,        # EDIT: nominal rate of a node's link, bits/s (flags figures above it)
                   # EDIT: where the benchmarks are on the nodes (job-script text: variables allowed)
                   'osu': {'pt2pt': '$OSU_HOME/libexec/osu-micro-benchmarks/mpi/pt2pt',
                           'collective': '$OSU_HOME/libexec/osu-micro-benchmarks/mpi/collective',
                           'cuda': False},
                   'netpipe': 'NPopenmpi'},
    }],
}
