#include "numa_query.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Mode flags that may be OR-ed into the returned mode; not all kernel headers define them. */
#define MB_MPOL_MODE_FLAGS ((1 << 15) | (1 << 14) | (1 << 13))

const char *mb_mempolicy_name(int raw_mode, int node_count)
{
    switch (raw_mode & ~MB_MPOL_MODE_FLAGS) {
    case 0: return "default";
    case 1: return node_count ? "preferred" : "local"; /* older kernels express local allocation this way */
    case 2: return "bind";
    case 3: return "interleave";
    case 4: return "local";
    case 5: return "preferred_many";
    case 6: return "weighted_interleave";
    default: return "unknown";
    }
}

int mb_mempolicy_query(char *mode, size_t cap, mb_set *nodes)
{
    int raw = 0;
    mb_set_clear(nodes);
    /* maxnode is a bit count; the kernel wants it at least as large as its own node limit. */
    if (syscall(SYS_get_mempolicy, &raw, (unsigned long *)nodes->bits, (unsigned long)MB_MAX_CPUS, NULL, 0UL) != 0) {
        snprintf(mode, cap, "unknown");
        return -1;
    }
    snprintf(mode, cap, "%s", mb_mempolicy_name(raw, mb_set_count(nodes)));
    if (strcmp(mode, "default") == 0 || strcmp(mode, "local") == 0) mb_set_clear(nodes);
    return 0;
}

void mb_mempolicy_describe(const char *mode, const mb_set *nodes, char *out, size_t cap)
{
    char list[256];
    if (mb_set_count(nodes) == 0) snprintf(out, cap, "%s", mode);
    else snprintf(out, cap, "%s:%s", mode, mb_set_format(nodes, list, sizeof list));
}

int mb_current_node(int *cpu_out)
{
    unsigned cpu = 0, node = 0;
    if (syscall(SYS_getcpu, &cpu, &node, NULL) != 0) {
        if (cpu_out) *cpu_out = sched_getcpu();
        return -1;
    }
    if (cpu_out) *cpu_out = (int)cpu;
    return (int)node;
}

const char *mb_query_page_nodes(void **pages, size_t n, int *status)
{
    /* MICROBENCH_PAGE_QUERY=get_mempolicy forces the fallback (to test it, or where move_pages misbehaves). */
    const char *force = getenv("MICROBENCH_PAGE_QUERY");
    int fallback_only = force && strcmp(force, "get_mempolicy") == 0;
    if (!fallback_only && syscall(SYS_move_pages, 0, (unsigned long)n, pages, NULL, status, 0) == 0) return "move_pages";
    /* move_pages can be unavailable (seccomp, old kernels): ask page by page instead. */
    for (size_t i = 0; i < n; i++) {
        int node = -1;
        if (syscall(SYS_get_mempolicy, &node, NULL, 0UL, pages[i], (unsigned long)(MPOL_F_NODE | MPOL_F_ADDR)) == 0)
            status[i] = node;
        else
            status[i] = -errno;
    }
    return "get_mempolicy";
}

void mb_page_stats_init(mb_page_stats *s) { memset(s, 0, sizeof *s); }

void mb_page_stats_add(mb_page_stats *s, const int *status, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        s->sampled++;
        if (status[i] >= 0 && status[i] < MB_MAX_NODES) {
            s->located++;
            s->per_node[status[i]]++;
        } else if (status[i] == -ENOENT) {
            s->not_present++;
        } else {
            s->errors++;
        }
    }
}

double mb_page_stats_fraction(const mb_page_stats *s, int node)
{
    if (s->located == 0 || node < 0 || node >= MB_MAX_NODES) return 0.0;
    return (double)s->per_node[node] / (double)s->located;
}

double mb_page_stats_fraction_in(const mb_page_stats *s, const mb_set *nodes)
{
    double f = 0.0;
    for (int n = mb_set_first(nodes); n >= 0 && n < MB_MAX_NODES; n = mb_set_next(nodes, n)) f += mb_page_stats_fraction(s, n);
    return f;
}
