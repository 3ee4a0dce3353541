#include "topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_text(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
    return 0;
}

static int read_set(const char *root, const char *rel, mb_set *out)
{
    char path[1200], text[8192];
    snprintf(path, sizeof path, "%s%s", root, rel);
    if (read_text(path, text, sizeof text)) return -1;
    return mb_set_parse(text, out);
}

static int read_int(const char *root, const char *rel, int *out)
{
    char path[1200], text[64];
    snprintf(path, sizeof path, "%s%s", root, rel);
    if (read_text(path, text, sizeof text)) return -1;
    return sscanf(text, "%d", out) == 1 ? 0 : -1;
}

/* The cgroup cpuset (v2 cpuset.cpus.effective, else v1 cpuset.effective_cpus) this process lives in. */
static int read_cgroup_cpus(mb_set *out)
{
    char line[1024];
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return -1;
    char v2path[1024] = "", v1path[1024] = "";
    int have_v2 = 0, have_v1 = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "0::", 3) == 0) { snprintf(v2path, sizeof v2path, "%s", line + 3); have_v2 = 1; }
        char *c = strstr(line, ":cpuset:");
        if (c) { snprintf(v1path, sizeof v1path, "%s", c + 8); have_v1 = 1; }
    }
    fclose(f);
    char path[1200];
    if (have_v2) {
        snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpuset.cpus.effective", v2path);
        if (read_set("", path, out) == 0 && mb_set_count(out) > 0) return 0;
    }
    if (have_v1) {
        snprintf(path, sizeof path, "/sys/fs/cgroup/cpuset%s/cpuset.effective_cpus", v1path);
        if (read_set("", path, out) == 0 && mb_set_count(out) > 0) return 0;
        snprintf(path, sizeof path, "/sys/fs/cgroup/cpuset%s/cpuset.cpus", v1path);
        if (read_set("", path, out) == 0 && mb_set_count(out) > 0) return 0;
    }
    return -1;
}

int mb_topology_load(mb_topology *t, const char *root)
{
    memset(t, 0, sizeof *t);
    for (int c = 0; c < MB_MAX_CPUS; c++) t->cpu_node[c] = t->cpu_package[c] = t->cpu_core[c] = -1;
    if (read_set(root, "/sys/devices/system/cpu/online", &t->online)) return -1;

    t->usable = t->online;
    mb_set cg;
    if (root[0] == '\0' && read_cgroup_cpus(&cg) == 0) mb_set_and(&t->usable, &cg);

    char rel[256];
    for (int c = mb_set_first(&t->online); c >= 0; c = mb_set_next(&t->online, c)) {
        int pkg;
        snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
        if (read_int(root, rel, &pkg) == 0) t->cpu_package[c] = (short)pkg;
        mb_set core;
        snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/topology/core_cpus_list", c);
        if (read_set(root, rel, &core)) {
            snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
            if (read_set(root, rel, &core)) mb_set_clear(&core);
        }
        t->cpu_core[c] = (short)(mb_set_count(&core) ? mb_set_first(&core) : c);
    }

    mb_set nodes;
    if (read_set(root, "/sys/devices/system/node/online", &nodes)) {
        /* Kernels without NUMA support: everything is node 0. */
        mb_set_clear(&nodes);
        mb_set_add(&nodes, 0);
        for (int c = mb_set_first(&t->online); c >= 0; c = mb_set_next(&t->online, c)) t->cpu_node[c] = 0;
    } else {
        for (int n = mb_set_first(&nodes); n >= 0; n = mb_set_next(&nodes, n)) {
            mb_set cpus;
            snprintf(rel, sizeof rel, "/sys/devices/system/node/node%d/cpulist", n);
            if (read_set(root, rel, &cpus)) continue;
            for (int c = mb_set_first(&cpus); c >= 0; c = mb_set_next(&cpus, c)) t->cpu_node[c] = (short)n;
        }
    }
    mb_set_clear(&t->numa_nodes);
    for (int c = mb_set_first(&t->online); c >= 0; c = mb_set_next(&t->online, c))
        if (t->cpu_node[c] >= 0) mb_set_add(&t->numa_nodes, t->cpu_node[c]);
    return 0;
}

/* CPUs c of t->usable with field[c] == value. */
static void select_cpus(const mb_topology *t, const short *field, int value, mb_set *out)
{
    mb_set_clear(out);
    for (int c = mb_set_first(&t->usable); c >= 0; c = mb_set_next(&t->usable, c))
        if (field[c] == value) mb_set_add(out, c);
}

void mb_topology_node_cpus(const mb_topology *t, int node, mb_set *out) { select_cpus(t, t->cpu_node, node, out); }

void mb_topology_package_cpus(const mb_topology *t, int cpu, mb_set *out)
{
    select_cpus(t, t->cpu_package, cpu >= 0 && cpu < MB_MAX_CPUS ? t->cpu_package[cpu] : -2, out);
}

void mb_topology_core_cpus(const mb_topology *t, int cpu, mb_set *out)
{
    select_cpus(t, t->cpu_core, cpu >= 0 && cpu < MB_MAX_CPUS ? t->cpu_core[cpu] : -2, out);
}
