/* Topology from a fake sysfs tree of a two-socket machine (2 NUMA nodes per socket, 2 cores per node, SMT 2),
 * and the --expect rules checked against placements on it: the multi-socket logic this 1-node machine can't show. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "expect.h"
#include "topology.h"

static char root[256];

static void write_file(const char *rel, const char *text)
{
    char path[512], dir[512];
    snprintf(path, sizeof path, "%s%s", root, rel);
    /* mkdir -p of the parent */
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + strlen(root) + 1; *p; p++)
        if (*p == '/') { *p = '\0'; mkdir(dir, 0755); *p = '/'; }
    FILE *f = fopen(path, "w");
    if (!f) { perror(path); exit(1); }
    fputs(text, f);
    fclose(f);
}

/* CPUs 0-7 are the first hardware threads, 8-15 their SMT siblings (Linux numbering on x86). */
static void make_fake_sysfs(void)
{
    char rel[256], text[64];
    write_file("/sys/devices/system/cpu/online", "0-15\n");
    write_file("/sys/devices/system/node/online", "0-3\n");
    for (int c = 0; c < 16; c++) {
        int core = c % 8;
        snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
        snprintf(text, sizeof text, "%d\n", core / 4);
        write_file(rel, text);
        snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/topology/core_cpus_list", c);
        snprintf(text, sizeof text, "%d,%d\n", core, core + 8);
        write_file(rel, text);
    }
    for (int n = 0; n < 4; n++) {
        snprintf(rel, sizeof rel, "/sys/devices/system/node/node%d/cpulist", n);
        snprintf(text, sizeof text, "%d-%d,%d-%d\n", 2 * n, 2 * n + 1, 2 * n + 8, 2 * n + 9);
        write_file(rel, text);
    }
}

static mb_placement rec(int rank, int thread, const char *cpus)
{
    mb_placement r;
    memset(&r, 0, sizeof r);
    snprintf(r.host, sizeof r.host, "h");
    r.rank = rank;
    r.thread = thread;
    mb_set_parse(cpus, &r.cpus);
    r.cpu = mb_set_first(&r.cpus);
    return r;
}

static int verdict(const char *spec, const mb_placement *recs, int n, const mb_topology *t, char *reason)
{
    mb_expectation e;
    if (mb_expect_parse(spec, &e)) { fprintf(stderr, "cannot parse %s\n", spec); return -1; }
    return mb_expect_check(&e, recs, n, t, reason, 512);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/mb-fake-sysfs-%ld", (long)getpid());
    mkdir(root, 0755);
    make_fake_sysfs();

    static mb_topology t;
    CHECK(mb_topology_load(&t, root) == 0);
    char buf[256];
    mb_set s;
    CHECK_STR(mb_set_format(&t.online, buf, sizeof buf), "0-15");
    CHECK_STR(mb_set_format(&t.numa_nodes, buf, sizeof buf), "0-3");
    mb_topology_node_cpus(&t, 1, &s);
    CHECK_STR(mb_set_format(&s, buf, sizeof buf), "2-3,10-11");
    mb_topology_package_cpus(&t, 5, &s);
    CHECK_STR(mb_set_format(&s, buf, sizeof buf), "4-7,12-15");
    mb_topology_core_cpus(&t, 11, &s);
    CHECK_STR(mb_set_format(&s, buf, sizeof buf), "3,11");
    CHECK(t.cpu_node[13] == 2 && t.cpu_package[13] == 1 && t.cpu_core[13] == 5);

    char reason[512];
    mb_placement two_cores[] = {rec(0, 0, "0,8"), rec(1, 0, "1,9")};
    CHECK(verdict("core", two_cores, 2, &t, reason) == 1);
    CHECK(verdict("hwthread", two_cores, 2, &t, reason) == 0);
    CHECK(verdict("numa", two_cores, 2, &t, reason) == 0);

    mb_placement half_core[] = {rec(0, 0, "0"), rec(1, 0, "1")};
    CHECK(verdict("core", half_core, 2, &t, reason) == 0);
    CHECK(strstr(reason, "one whole core") != NULL);
    CHECK(verdict("hwthread", half_core, 2, &t, reason) == 1);

    mb_placement siblings[] = {rec(0, 0, "0"), rec(1, 0, "8")};
    CHECK(verdict("hwthread", siblings, 2, &t, reason) == 1);

    mb_placement shared_core[] = {rec(0, 0, "2,10"), rec(0, 1, "2,10")};
    CHECK(verdict("core", shared_core, 2, &t, reason) == 0);
    CHECK(strstr(reason, "share") != NULL && strstr(reason, "thread 1") != NULL);

    mb_placement sockets[] = {rec(0, 0, "0-3,8-11"), rec(1, 0, "4-7,12-15"), rec(2, 0, "0-3,8-11")};
    CHECK(verdict("socket", sockets, 3, &t, reason) == 1);
    CHECK(verdict("numa", sockets, 3, &t, reason) == 0);
    mb_placement not_socket[] = {rec(0, 0, "0-7")};
    CHECK(verdict("socket", not_socket, 1, &t, reason) == 0);
    CHECK(strstr(reason, "rank 0 thread 0") != NULL && strstr(reason, "[0-3,8-11]") != NULL);

    mb_placement nodes[] = {rec(0, 0, "0-1,8-9"), rec(1, 0, "6-7,14-15")};
    CHECK(verdict("numa", nodes, 2, &t, reason) == 1);
    CHECK(verdict("socket", nodes, 2, &t, reason) == 0);

    mb_placement unbound[] = {rec(0, 0, "0-15"), rec(1, 0, "0-15")};
    CHECK(verdict("none", unbound, 2, &t, reason) == 1);
    CHECK(verdict("none", sockets, 3, &t, reason) == 0);

    /* pe=2: each rank owns two whole cores, threads may float inside them. */
    mb_placement pe2[] = {rec(0, 0, "0-1,8-9"), rec(0, 1, "0-1,8-9"), rec(1, 0, "2,10"), rec(1, 1, "3,11")};
    CHECK(verdict("pe=2", pe2, 4, &t, reason) == 1);
    CHECK(verdict("pe=1", pe2, 4, &t, reason) == 0);
    mb_placement pe_overlap[] = {rec(0, 0, "0-1,8-9"), rec(1, 0, "1-2,9-10")};
    CHECK(verdict("pe=2", pe_overlap, 2, &t, reason) == 0);
    CHECK(strstr(reason, "share") != NULL);
    mb_placement pe_partial[] = {rec(0, 0, "0-1")};
    CHECK(verdict("pe=2", pe_partial, 1, &t, reason) == 0);
    CHECK(strstr(reason, "partly") != NULL);

    mb_placement inside[] = {rec(0, 0, "0"), rec(1, 0, "2-3")};
    CHECK(verdict("cpus=0-3", inside, 2, &t, reason) == 1);
    CHECK(verdict("cpus=0-2", inside, 2, &t, reason) == 0);

    /* Unused slots (rank -1) are ignored; a running CPU outside the allowed set always fails. */
    mb_placement with_gap[] = {rec(0, 0, "4,12"), rec(-1, 0, "4,12")};
    CHECK(verdict("core", with_gap, 2, &t, reason) == 1);
    mb_placement escaped[] = {rec(0, 0, "4")};
    escaped[0].cpu = 5;
    mb_expectation nothing = {MB_EXPECT_NOTHING, {{0}}, 0};
    CHECK(mb_expect_check(&nothing, escaped, 1, &t, reason, sizeof reason) == 0);

    mb_expectation e;
    CHECK(mb_expect_parse("socket", &e) == 0 && e.kind == MB_EXPECT_SOCKET);
    CHECK(mb_expect_parse("pe=3", &e) == 0 && e.pe == 3);
    CHECK(mb_expect_parse("pe=0", &e) == -1);
    CHECK(mb_expect_parse("cpus=", &e) == -1);
    CHECK(mb_expect_parse("cpus=1-", &e) == -1);
    CHECK(mb_expect_parse("Core", &e) == -1);
    CHECK(mb_expect_parse("", &e) == -1);

    /* A kernel without NUMA in sysfs: every CPU counts as node 0. */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s/sys/devices/system/node", root);
    CHECK(system(cmd) == 0);
    CHECK(mb_topology_load(&t, root) == 0);
    CHECK(t.cpu_node[15] == 0);
    mb_topology_node_cpus(&t, 0, &s);
    CHECK(mb_set_count(&s) == 16);

    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    CHECK(system(cmd) == 0);
    CHECK(mb_topology_load(&t, root) == -1); /* unreadable tree is an error, not an empty machine */
    CHECK_DONE();
}
