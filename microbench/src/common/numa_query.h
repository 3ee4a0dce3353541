/* Asking the kernel about memory policy and where pages live (raw syscalls, no libnuma needed). */
#ifndef MB_NUMA_QUERY_H
#define MB_NUMA_QUERY_H

#include <stddef.h>

#include "cpuset.h"

#define MB_MAX_NODES 1024

/* Memory policy of the calling thread: mode name ("default", "bind", "interleave", "preferred", "local",
 * "preferred_many", "weighted_interleave", "unknown") and its node mask. Returns 0, -1 if the kernel refused. */
int mb_mempolicy_query(char *mode, size_t cap, mb_set *nodes);
/* Mode name of a raw MPOL_* value (flags stripped); a preferred policy without nodes is "local". */
const char *mb_mempolicy_name(int raw_mode, int node_count);
/* "bind:0-1", or just "default" when the policy carries no nodes. */
void mb_mempolicy_describe(const char *mode, const mb_set *nodes, char *out, size_t cap);

/* NUMA node of the CPU the calling thread runs on (getcpu), -1 when unknown. */
int mb_current_node(int *cpu_out);

/* Node of each page: status[i] = node >= 0, or -errno (-ENOENT: not yet touched, -EFAULT: not mapped).
 * Uses move_pages(2) in query mode; falls back to get_mempolicy(MPOL_F_NODE|MPOL_F_ADDR), which faults untouched
 * pages in. Returns the name of the method used. */
const char *mb_query_page_nodes(void **pages, size_t n, int *status);

/* Pure aggregation of the statuses above, so it can be tested without a multi-node machine. */
typedef struct {
    long sampled;      /* pages asked about */
    long located;      /* pages with a node */
    long not_present;  /* -ENOENT: never touched (or swapped out) */
    long errors;       /* anything else */
    long per_node[MB_MAX_NODES];
} mb_page_stats;

void mb_page_stats_init(mb_page_stats *s);
void mb_page_stats_add(mb_page_stats *s, const int *status, size_t n);
double mb_page_stats_fraction(const mb_page_stats *s, int node);           /* of located pages; 0 when none */
double mb_page_stats_fraction_in(const mb_page_stats *s, const mb_set *nodes);

#endif
