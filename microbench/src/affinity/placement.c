#include "placement.h"

#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "numa_query.h"
#include "topology.h"

static void observe_self(mb_placement *r, const char *host, int rank, int thread, const mb_topology *topo)
{
    memset(r, 0, sizeof *r);
    snprintf(r->host, sizeof r->host, "%s", host);
    r->rank = rank;
    r->thread = thread;

    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask) == 0) /* pid 0 = this thread */
        for (int c = 0; c < CPU_SETSIZE && c < MB_MAX_CPUS; c++)
            if (CPU_ISSET(c, &mask)) mb_set_add(&r->cpus, c);

    int cpu = -1;
    int node = mb_current_node(&cpu);
    r->cpu = cpu;
    if (node < 0 && cpu >= 0 && cpu < MB_MAX_CPUS) node = topo->cpu_node[cpu];
    r->numa_node = node;
    r->socket = cpu >= 0 && cpu < MB_MAX_CPUS ? topo->cpu_package[cpu] : -1;

    mb_mempolicy_query(r->mempolicy, sizeof r->mempolicy, &r->policy_nodes);
}

int mb_observe_placement(int rank, mb_placement *records, int cap)
{
    char host[MB_HOST_LEN] = "unknown";
    gethostname(host, sizeof host - 1);
    static mb_topology topo; /* large; read once per process */
    mb_topology_load(&topo, "");
    int observed = 0;
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        if (t < cap) observe_self(&records[t], host, rank, t, &topo);
#pragma omp single
        observed = omp_get_num_threads() < cap ? omp_get_num_threads() : cap;
    }
    return observed;
}
