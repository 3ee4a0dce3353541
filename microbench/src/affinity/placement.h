/* One observation of where a rank's thread runs; fixed-size so ranks can send it as bytes. */
#ifndef MB_PLACEMENT_H
#define MB_PLACEMENT_H

#include "cpuset.h"

#define MB_HOST_LEN 64
#define MB_POLICY_LEN 32

typedef struct {
    char host[MB_HOST_LEN];
    int rank;          /* -1 marks an unused slot */
    int thread;
    int cpu;           /* CPU the thread was running on when observed */
    int numa_node;     /* node of that CPU */
    int socket;        /* physical package of that CPU, -1 unknown */
    char mempolicy[MB_POLICY_LEN];
    mb_set cpus;       /* sched_getaffinity of the thread */
    mb_set policy_nodes;
} mb_placement;

/* Fills one record per OpenMP thread of the calling rank (records must hold omp_get_max_threads() entries).
 * Returns the number of threads observed. */
int mb_observe_placement(int rank, mb_placement *records, int cap);

#endif
