/* Expected placements and the check of observed placements on one host against them. */
#ifndef MB_EXPECT_H
#define MB_EXPECT_H

#include <stddef.h>

#include "placement.h"
#include "topology.h"

typedef enum {
    MB_EXPECT_NOTHING = 0,
    MB_EXPECT_HWTHREAD, /* each rank/thread on exactly one CPU, all distinct on a host */
    MB_EXPECT_CORE,     /* each rank/thread on exactly one whole core (its SMT siblings), cores distinct on a host */
    MB_EXPECT_SOCKET,   /* each rank/thread's CPU set is one whole socket */
    MB_EXPECT_NUMA,     /* each rank/thread's CPU set is one whole NUMA node */
    MB_EXPECT_NONE,     /* unbound: each CPU set is every usable CPU of the host */
    MB_EXPECT_CPUS,     /* each CPU set lies within a given list */
    MB_EXPECT_PE,       /* each rank's threads together own exactly N whole cores, disjoint from other ranks */
} mb_expect_kind;

typedef struct {
    mb_expect_kind kind;
    mb_set cpus; /* MB_EXPECT_CPUS */
    int pe;      /* MB_EXPECT_PE */
} mb_expectation;

/* Parses "core", "cpus=0-3", "pe=2", ...; returns 0, or -1 with nothing set. */
int mb_expect_parse(const char *text, mb_expectation *out);
const char *mb_expect_name(mb_expect_kind kind);

/* Checks the records of ONE host (any order; slots with rank -1 are skipped) against topo of that host.
 * Returns 1 when all match; 0 with a one-line reason otherwise. */
int mb_expect_check(const mb_expectation *e, const mb_placement *recs, int n, const mb_topology *topo,
                    char *reason, size_t cap);

#endif
