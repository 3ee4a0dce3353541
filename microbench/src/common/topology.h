/* The CPU/NUMA topology of this host as the kernel exposes it in sysfs, plus the CPUs this job may use (cgroup cpuset). */
#ifndef MB_TOPOLOGY_H
#define MB_TOPOLOGY_H

#include "cpuset.h"

typedef struct {
    mb_set online;        /* /sys/devices/system/cpu/online */
    mb_set usable;        /* online CPUs within this process's cgroup cpuset (what "unbound" means here) */
    mb_set numa_nodes;    /* nodes that have CPUs */
    short cpu_node[MB_MAX_CPUS];    /* NUMA node of each CPU, -1 unknown */
    short cpu_package[MB_MAX_CPUS]; /* socket (physical package) of each CPU, -1 unknown */
    short cpu_core[MB_MAX_CPUS];    /* lowest CPU sharing the core with this one (SMT siblings), -1 unknown */
} mb_topology;

/* Reads sysfs below root ("" = the real /sys; tests pass a fake tree). Returns 0, or -1 when the CPU list is unreadable. */
int mb_topology_load(mb_topology *t, const char *root);

/* CPUs of one NUMA node / one socket / one core (the set containing cpu), restricted to t->usable. */
void mb_topology_node_cpus(const mb_topology *t, int node, mb_set *out);
void mb_topology_package_cpus(const mb_topology *t, int cpu, mb_set *out);
void mb_topology_core_cpus(const mb_topology *t, int cpu, mb_set *out);

#endif
