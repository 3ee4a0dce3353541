"""A virtual Slurm cluster on one machine: network namespaces as nodes, real munge/slurmctld/slurmd.

Modules: layout (pure: addresses, CPU split, slurm.conf text), netns (namespaces, bridge, veth, tc),
daemons (munge, slurmctld, slurmd), cluster (up/down/status orchestration), cli (`yeebench vcluster`).
"""
