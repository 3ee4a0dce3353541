#include "expect.h"

#include <stdio.h>
#include <string.h>

#include "args.h"

static const struct {
    const char *name;
    mb_expect_kind kind;
} kinds[] = {
    {"hwthread", MB_EXPECT_HWTHREAD}, {"core", MB_EXPECT_CORE}, {"socket", MB_EXPECT_SOCKET},
    {"numa", MB_EXPECT_NUMA},         {"none", MB_EXPECT_NONE},
};

int mb_expect_parse(const char *text, mb_expectation *out)
{
    mb_expectation e;
    memset(&e, 0, sizeof e);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(text, kinds[i].name) == 0) { e.kind = kinds[i].kind; *out = e; return 0; }
    if (strncmp(text, "cpus=", 5) == 0) {
        if (mb_set_parse(text + 5, &e.cpus) || mb_set_count(&e.cpus) == 0) return -1;
        e.kind = MB_EXPECT_CPUS;
        *out = e;
        return 0;
    }
    if (strncmp(text, "pe=", 3) == 0) {
        long pe;
        if (mb_parse_long(text + 3, 1, MB_MAX_CPUS, &pe)) return -1;
        e.kind = MB_EXPECT_PE;
        e.pe = (int)pe;
        *out = e;
        return 0;
    }
    return -1;
}

const char *mb_expect_name(mb_expect_kind kind)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].kind == kind) return kinds[i].name;
    if (kind == MB_EXPECT_CPUS) return "cpus";
    if (kind == MB_EXPECT_PE) return "pe";
    return "nothing";
}

static int fail(char *reason, size_t cap, const mb_placement *r, const char *what, const mb_set *want)
{
    char have[256], wanted[256] = "";
    mb_set_format(&r->cpus, have, sizeof have);
    if (want) mb_set_format(want, wanted, sizeof wanted);
    snprintf(reason, cap, "host %s: rank %d thread %d is allowed CPUs [%s], %s%s%s%s", r->host, r->rank, r->thread,
             have, what, want ? " [" : "", wanted, want ? "]" : "");
    return 0;
}

/* The whole core / socket / node containing the first CPU of r, as the expectation defines it. */
static int unit_of(const mb_expectation *e, const mb_topology *t, const mb_placement *r, mb_set *unit)
{
    int first = mb_set_first(&r->cpus);
    switch (e->kind) {
    case MB_EXPECT_CORE: mb_topology_core_cpus(t, first, unit); return 1;
    case MB_EXPECT_SOCKET: mb_topology_package_cpus(t, first, unit); return 1;
    case MB_EXPECT_NUMA: mb_topology_node_cpus(t, first >= 0 ? t->cpu_node[first] : -1, unit); return 1;
    case MB_EXPECT_NONE: *unit = t->usable; return 1;
    default: return 0;
    }
}

static const char *unit_words(mb_expect_kind k)
{
    switch (k) {
    case MB_EXPECT_CORE: return "expected exactly one whole core";
    case MB_EXPECT_SOCKET: return "expected exactly one whole socket";
    case MB_EXPECT_NUMA: return "expected exactly one whole NUMA node";
    case MB_EXPECT_NONE: return "expected every usable CPU of the host (unbound)";
    default: return "";
    }
}

/* pe=N: the union of a rank's thread sets must be N whole cores, and ranks must not share CPUs. */
static int check_pe(const mb_expectation *e, const mb_placement *recs, int n, const mb_topology *t, char *reason,
                    size_t cap)
{
    for (int i = 0; i < n; i++) {
        if (recs[i].rank < 0) continue;
        int seen_before = 0;
        for (int k = 0; k < i; k++)
            if (recs[k].rank == recs[i].rank) seen_before = 1;
        if (seen_before) continue;
        mb_set uni;
        mb_set_clear(&uni);
        for (int k = i; k < n; k++)
            if (recs[k].rank == recs[i].rank) mb_set_or(&uni, &recs[k].cpus);
        mb_set cores, covered;
        mb_set_clear(&cores);
        mb_set_clear(&covered);
        for (int c = mb_set_first(&uni); c >= 0; c = mb_set_next(&uni, c)) {
            mb_set core;
            mb_topology_core_cpus(t, c, &core);
            mb_set_or(&covered, &core);
            mb_set_add(&cores, t->cpu_core[c] >= 0 ? t->cpu_core[c] : c);
        }
        char have[256];
        if (!mb_set_equal(&covered, &uni) || mb_set_count(&cores) != e->pe) {
            snprintf(reason, cap, "host %s: rank %d is allowed CPUs [%s] (%d cores%s), expected exactly %d whole cores",
                     recs[i].host, recs[i].rank, mb_set_format(&uni, have, sizeof have), mb_set_count(&cores),
                     mb_set_equal(&covered, &uni) ? "" : ", some only partly", e->pe);
            return 0;
        }
        for (int k = 0; k < n; k++) {
            if (recs[k].rank < 0 || recs[k].rank == recs[i].rank) continue;
            if (!mb_set_disjoint(&recs[k].cpus, &uni)) {
                snprintf(reason, cap, "host %s: ranks %d and %d share CPUs, expected disjoint sets of %d cores",
                         recs[i].host, recs[i].rank, recs[k].rank, e->pe);
                return 0;
            }
        }
    }
    return 1;
}

int mb_expect_check(const mb_expectation *e, const mb_placement *recs, int n, const mb_topology *t, char *reason,
                    size_t cap)
{
    reason[0] = '\0';
    for (int i = 0; i < n; i++) {
        const mb_placement *r = &recs[i];
        if (r->rank < 0) continue;
        if (mb_set_count(&r->cpus) == 0) return fail(reason, cap, r, "the kernel reported no CPUs", NULL);
        if (!mb_set_has(&r->cpus, r->cpu)) {
            snprintf(reason, cap, "host %s: rank %d thread %d runs on CPU %d outside its allowed set", r->host, r->rank,
                     r->thread, r->cpu);
            return 0;
        }
    }
    if (e->kind == MB_EXPECT_NOTHING) return 1;
    if (e->kind == MB_EXPECT_PE) return check_pe(e, recs, n, t, reason, cap);

    for (int i = 0; i < n; i++) {
        const mb_placement *r = &recs[i];
        if (r->rank < 0) continue;
        mb_set unit;
        if (e->kind == MB_EXPECT_HWTHREAD) {
            if (mb_set_count(&r->cpus) != 1) return fail(reason, cap, r, "expected exactly one CPU", NULL);
        } else if (e->kind == MB_EXPECT_CPUS) {
            if (!mb_set_subset(&r->cpus, &e->cpus)) return fail(reason, cap, r, "expected a subset of", &e->cpus);
        } else if (unit_of(e, t, r, &unit) && !mb_set_equal(&r->cpus, &unit)) {
            return fail(reason, cap, r, unit_words(e->kind), &unit);
        }
    }

    /* One CPU / one core per rank-thread only means something if nobody else on the host has it too. */
    if (e->kind == MB_EXPECT_HWTHREAD || e->kind == MB_EXPECT_CORE) {
        for (int i = 0; i < n; i++) {
            for (int k = i + 1; k < n; k++) {
                if (recs[i].rank < 0 || recs[k].rank < 0) continue;
                if (!mb_set_disjoint(&recs[i].cpus, &recs[k].cpus)) {
                    char cpus[256];
                    snprintf(reason, cap,
                             "host %s: rank %d thread %d and rank %d thread %d share CPUs [%s], expected distinct %s",
                             recs[i].host, recs[i].rank, recs[i].thread, recs[k].rank, recs[k].thread,
                             mb_set_format(&recs[i].cpus, cpus, sizeof cpus),
                             e->kind == MB_EXPECT_CORE ? "cores" : "CPUs");
                    return 0;
                }
            }
        }
    }
    return 1;
}
