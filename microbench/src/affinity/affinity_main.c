/* affinity: where every MPI rank and OpenMP thread really runs, and whether that is what the caller expected. */
#include <getopt.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "json.h"
#include "launcher.h"
#include "numa_query.h"
#include "output.h"
#include "placement.h"
#include "topology.h"
#include "version.h"

#define REASON_LEN 512

static const char usage[] =
    "usage: affinity [--expect SPEC] [--format json|table] [--output FILE]\n"
    "\n"
    "Reports, for every MPI rank and OpenMP thread: host, rank, thread, allowed CPUs (sched_getaffinity),\n"
    "the CPU it runs on, that CPU's NUMA node and socket, and the memory policy (get_mempolicy).\n"
    "Run it with the same launcher options, OMP_* and numactl settings as the application to be checked.\n"
    "\n"
    "  --expect SPEC   check the placement; exit 1 with the reason on stderr when it differs. SPEC is one of:\n"
    "                    core      each rank/thread is allowed exactly one whole core (one CPU, or all SMT\n"
    "                              siblings of that core) and no two rank/threads on a host share a core\n"
    "                    hwthread  each rank/thread is allowed exactly one CPU, all distinct on a host\n"
    "                    socket    each rank/thread's CPU set equals one whole socket\n"
    "                    numa      each rank/thread's CPU set equals one whole NUMA node\n"
    "                    none      unbound: each CPU set equals every usable CPU of the host\n"
    "                              (online CPUs within the job's cgroup cpuset)\n"
    "                    pe=N      the threads of each rank together are allowed exactly N whole cores,\n"
    "                              and ranks on a host share no CPU (mpirun --map-by ...:PE=N)\n"
    "                    cpus=LIST each CPU set lies within LIST (kernel syntax, e.g. 0-3,8)\n"
    "                  Whole sockets/nodes/cores are counted within the usable CPUs of the host.\n"
    "                  Always checked: the current CPU lies in the allowed set.\n"
    "  --format F      json (default): one JSON document on stdout, gathered on rank 0\n"
    "                  table: a compact human table\n"
    "  --output FILE   write the document to FILE (atomically) instead of stdout\n"
    "  --help          this text;  --version  the version\n"
    "\n"
    "Exit status: 0 ok, 1 placement differs from --expect, 2 bad arguments.\n"
    "Example: mpirun -np 4 --bind-to core affinity --expect core --format table\n";

typedef struct {
    int has_expect;
    mb_expectation expect;
    char expect_text[128];
    int table;
    const char *output;
} options;

/* Returns 0 to run, 1 after --help/--version, 2 on bad arguments (message in err). */
static int parse_options(int argc, char **argv, options *o, char *err, size_t cap)
{
    static const struct option longopts[] = {
        {"expect", required_argument, 0, 'e'}, {"format", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},      {0, 0, 0, 0},
    };
    memset(o, 0, sizeof *o);
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":e:f:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'e':
            if (mb_expect_parse(optarg, &o->expect)) {
                snprintf(err, cap, "--expect: '%s' is not core, hwthread, socket, numa, none, pe=N or cpus=LIST", optarg);
                return 2;
            }
            o->has_expect = 1;
            snprintf(o->expect_text, sizeof o->expect_text, "%s", optarg);
            break;
        case 'f':
            if (strcmp(optarg, "json") == 0) o->table = 0;
            else if (strcmp(optarg, "table") == 0) o->table = 1;
            else { snprintf(err, cap, "--format: '%s' is not json or table", optarg); return 2; }
            break;
        case 'o': o->output = optarg; break;
        case 'h': return 1;
        case 'V': return 3;
        case ':': snprintf(err, cap, "option %s needs a value", argv[optind - 1]); return 2;
        default: snprintf(err, cap, "unknown option %s (see --help)", argv[optind - 1]); return 2;
        }
    }
    if (optind < argc) { snprintf(err, cap, "unexpected argument '%s' (see --help)", argv[optind]); return 2; }
    return 0;
}

/* What a host's leader rank found: the host's shape and the verdict on its placements. Empty on other ranks. */
typedef struct {
    int leader;
    char host[MB_HOST_LEN];
    mb_set usable;
    int numa_nodes, sockets, cores;
    char reason[REASON_LEN]; /* "" = ok */
} host_report;

static int count_distinct(const mb_topology *t, const short *field)
{
    mb_set seen;
    mb_set_clear(&seen);
    for (int c = mb_set_first(&t->usable); c >= 0; c = mb_set_next(&t->usable, c))
        if (field[c] >= 0) mb_set_add(&seen, field[c]);
    return mb_set_count(&seen);
}

static void json_int_list(mb_json *j, const mb_set *s)
{
    mb_json_begin_array(j);
    for (int c = mb_set_first(s); c >= 0; c = mb_set_next(s, c)) mb_json_int(j, c);
    mb_json_end_array(j);
}

static char *render_json(const mb_placement *all, int n, int ranks, int tmax, const options *o, int ok,
                         const host_report *hosts, int nhosts)
{
    mb_json j;
    mb_json_init(&j);
    mb_json_begin_object(&j);
    mb_json_kstring(&j, "program", "affinity");
    mb_json_kint(&j, "schema_version", 1);
    mb_json_kstring(&j, "version", MB_VERSION);
    mb_json_kint(&j, "ranks", ranks);
    mb_json_kint(&j, "threads_per_rank", tmax);
    mb_json_key(&j, "placement");
    mb_json_begin_array(&j);
    for (int i = 0; i < n; i++) {
        const mb_placement *r = &all[i];
        if (r->rank < 0) continue;
        char list[256];
        mb_json_begin_object(&j);
        mb_json_kstring(&j, "host", r->host);
        mb_json_kint(&j, "rank", r->rank);
        mb_json_kint(&j, "thread", r->thread);
        mb_json_key(&j, "cpus");
        json_int_list(&j, &r->cpus);
        mb_json_kstring(&j, "cpu_list", mb_set_format(&r->cpus, list, sizeof list));
        mb_json_kint(&j, "cpu", r->cpu);
        mb_json_kint(&j, "numa_node", r->numa_node);
        mb_json_kint(&j, "socket", r->socket);
        mb_json_kstring(&j, "mempolicy", r->mempolicy);
        mb_json_key(&j, "mempolicy_nodes");
        json_int_list(&j, &r->policy_nodes);
        mb_json_end_object(&j);
    }
    mb_json_end_array(&j);
    mb_json_key(&j, "hosts");
    mb_json_begin_array(&j);
    for (int i = 0; i < nhosts; i++) {
        const host_report *h = &hosts[i];
        if (!h->leader) continue;
        char list[512];
        mb_json_begin_object(&j);
        mb_json_kstring(&j, "host", h->host);
        mb_json_kstring(&j, "usable_cpus", mb_set_format(&h->usable, list, sizeof list));
        mb_json_kint(&j, "usable_cpu_count", mb_set_count(&h->usable));
        mb_json_kint(&j, "cores", h->cores);
        mb_json_kint(&j, "sockets", h->sockets);
        mb_json_kint(&j, "numa_nodes", h->numa_nodes);
        mb_json_end_object(&j);
    }
    mb_json_end_array(&j);
    if (o->has_expect) {
        mb_json_key(&j, "expect");
        mb_json_begin_object(&j);
        mb_json_kstring(&j, "spec", o->expect_text);
        mb_json_kbool(&j, "ok", ok);
        mb_json_key(&j, "reasons");
        mb_json_begin_array(&j);
        for (int i = 0; i < nhosts; i++)
            if (hosts[i].reason[0]) mb_json_string(&j, hosts[i].reason);
        mb_json_end_array(&j);
        mb_json_end_object(&j);
    }
    mb_json_end_object(&j);
    return j.buf;
}

static char *render_table(const mb_placement *all, int n, const options *o, int ok)
{
    size_t cap = (size_t)(n + 4) * 400, len = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    len += (size_t)snprintf(out + len, cap - len, "%-20s %5s %6s %4s %4s %6s  %-10s %s\n", "host", "rank", "thread", "cpu",
                            "node", "socket", "mempolicy", "allowed CPUs");
    for (int i = 0; i < n; i++) {
        const mb_placement *r = &all[i];
        if (r->rank < 0) continue;
        char list[256], pol[96];
        mb_mempolicy_describe(r->mempolicy, &r->policy_nodes, pol, sizeof pol);
        len += (size_t)snprintf(out + len, cap - len, "%-20.20s %5d %6d %4d %4d %6d  %-10s %s\n", r->host, r->rank,
                                r->thread, r->cpu, r->numa_node, r->socket, pol,
                                mb_set_format(&r->cpus, list, sizeof list));
    }
    if (o->has_expect)
        snprintf(out + len, cap - len, "expect %s: %s", o->expect_text, ok ? "OK" : "DIFFERS");
    else if (len) out[len - 1] = '\0'; /* mb_write_document adds the final newline */
    return out;
}

/* Each host's leader checks that host's records against its own topology. */
static void check_my_host(const options *o, const mb_placement *mine, int tmax, host_report *out)
{
    char *reason = out->reason;
    memset(out, 0, sizeof *out);
    MPI_Comm host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    int hrank, hsize;
    MPI_Comm_rank(host, &hrank);
    MPI_Comm_size(host, &hsize);
    size_t bytes = sizeof(mb_placement) * (size_t)tmax;
    mb_placement *recs = hrank == 0 ? malloc(bytes * (size_t)hsize) : NULL;
    MPI_Gather(mine, (int)bytes, MPI_BYTE, recs, (int)bytes, MPI_BYTE, 0, host);
    reason[0] = '\0';
    if (hrank == 0) {
        static mb_topology topo;
        mb_expectation nothing = {MB_EXPECT_NOTHING, {{0}}, 0};
        out->leader = 1;
        snprintf(out->host, sizeof out->host, "%s", mine[0].host);
        if (mb_topology_load(&topo, "")) {
            snprintf(reason, REASON_LEN, "cannot read the CPU topology from /sys");
        } else {
            mb_expect_check(o->has_expect ? &o->expect : &nothing, recs, hsize * tmax, &topo, reason, REASON_LEN);
            out->usable = topo.usable;
            out->numa_nodes = count_distinct(&topo, topo.cpu_node);
            out->sockets = count_distinct(&topo, topo.cpu_package);
            out->cores = count_distinct(&topo, topo.cpu_core);
        }
        free(recs);
    }
    MPI_Comm_free(&host);
}

int main(int argc, char **argv)
{
    options o;
    char err[256] = "";
    int code = mb_answer_before_mpi("affinity", parse_options(argc, argv, &o, err, sizeof err), usage, err);
    if (code >= 0) return code;

    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int tmax = omp_get_max_threads();
    MPI_Allreduce(MPI_IN_PLACE, &tmax, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    mb_placement *mine = calloc((size_t)tmax, sizeof *mine);
    for (int t = 0; t < tmax; t++) mine[t].rank = -1;
    mb_observe_placement(rank, mine, tmax);

    size_t bytes = sizeof(mb_placement) * (size_t)tmax;
    mb_placement *all = rank == 0 ? malloc(bytes * (size_t)size) : NULL;
    MPI_Gather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);

    host_report mine_host;
    check_my_host(&o, mine, tmax, &mine_host);
    host_report *hosts = rank == 0 ? malloc(sizeof *hosts * (size_t)size) : NULL;
    MPI_Gather(&mine_host, (int)sizeof mine_host, MPI_BYTE, hosts, (int)sizeof mine_host, MPI_BYTE, 0, MPI_COMM_WORLD);

    int status = 0;
    if (rank == 0) {
        int ok = 1;
        for (int i = 0; i < size; i++)
            if (hosts[i].reason[0]) {
                ok = 0;
                fprintf(stderr, "affinity: placement differs%s%s: %s\n", o.has_expect ? " from --expect " : "",
                        o.has_expect ? o.expect_text : "", hosts[i].reason);
            }
        char *doc = o.table ? render_table(all, size * tmax, &o, ok)
                            : render_json(all, size * tmax, size, tmax, &o, ok, hosts, size);
        if (!doc || mb_write_document("affinity", o.output, doc)) status = 1;
        else if (!ok) status = 1;
        free(doc);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(all);
    free(hosts);
    free(mine);
    MPI_Finalize();
    return status;
}
