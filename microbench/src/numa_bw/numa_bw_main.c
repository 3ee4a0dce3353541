/* numa-bw: STREAM-style copy/triad under the caller's memory policy, and where the pages really landed. */
#include <getopt.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "json.h"
#include "launcher.h"
#include "numa_query.h"
#include "output.h"
#include "stream_kernels.h"
#include "sysmem.h"
#include "version.h"

static const char usage[] =
    "usage: numa-bw [--size BYTES] [--repeats K] [--threads N] [--first-touch parallel|serial]\n"
    "               [--sample-pages N] [--expect-nodes LIST [--min-fraction F]] [--output FILE]\n"
    "\n"
    "STREAM-style copy (c = a) and triad (b = a + 3c) over three double arrays with OpenMP, run under whatever\n"
    "memory policy the caller set (numactl --localalloc | --interleave=all | --membind=N | --preferred=N).\n"
    "Reports best/avg GB/s (10^9 B/s, STREAM byte counting: copy 16 B, triad 24 B per element, no write-allocate)\n"
    "and, by asking the kernel (move_pages), on which NUMA node a sample of the arrays' pages lies.\n"
    "Every element is checked after the run; a wrong result makes it INVALID (exit 1).\n"
    "\n"
    "  --size BYTES       bytes per array (default 128Mi; suffixes k M G T = 10^3.., Ki Mi Gi Ti = 2^10..).\n"
    "                     Make it at least 4x the last-level cache, or the figure measures the cache.\n"
    "  --repeats K        timed repetitions of each kernel, K >= 2 (default 10; the first is not counted)\n"
    "  --threads N        OpenMP threads (default: OMP_NUM_THREADS or all)\n"
    "  --first-touch M    parallel (default): each thread initialises the part it later works on;\n"
    "                     serial: the master thread initialises everything (pages follow its node)\n"
    "  --sample-pages N   pages asked about, spread evenly over the three arrays (default 1024)\n"
    "  --expect-nodes L   exit 1 unless at least --min-fraction (default 0.9) of located pages lie on nodes L\n"
    "  --output FILE      write the JSON document to FILE (atomically) instead of stdout\n"
    "  --inject-error     test hook: corrupt one element before validation (must exit 1)\n"
    "  --help, --version\n"
    "\n"
    "Exit status: 0 valid, 1 invalid result or --expect-nodes not met, 2 bad arguments.\n"
    "Example: numactl --membind=1 numa-bw --size 1Gi --expect-nodes 1\n";

typedef struct {
    size_t bytes;
    long repeats, threads, sample;
    int serial_touch, inject_error, has_expect;
    mb_set expect_nodes;
    double min_fraction;
    const char *output;
} options;

static int bad(char *err, size_t cap, const char *opt, const char *val, const char *want)
{
    snprintf(err, cap, "%s: '%s' is not %s", opt, val, want);
    return 2;
}

static int parse_options(int argc, char **argv, options *o, char *err, size_t cap)
{
    static const struct option longopts[] = {
        {"size", required_argument, 0, 's'},         {"repeats", required_argument, 0, 'r'},
        {"threads", required_argument, 0, 't'},      {"first-touch", required_argument, 0, 'f'},
        {"sample-pages", required_argument, 0, 'p'}, {"expect-nodes", required_argument, 0, 'e'},
        {"min-fraction", required_argument, 0, 'm'}, {"output", required_argument, 0, 'o'},
        {"inject-error", no_argument, 0, 'I'},       {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},            {0, 0, 0, 0},
    };
    memset(o, 0, sizeof *o);
    o->bytes = (size_t)128 << 20;
    o->repeats = 10;
    o->sample = 1024;
    o->min_fraction = 0.9;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":s:r:t:f:p:e:m:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (mb_parse_bytes(optarg, 4096, (size_t)1 << 42, &o->bytes))
                return bad(err, cap, "--size", optarg, "a byte count between 4096 and 4Ti");
            break;
        case 'r':
            if (mb_parse_long(optarg, 2, 100000, &o->repeats)) return bad(err, cap, "--repeats", optarg, "an integer >= 2");
            break;
        case 't':
            if (mb_parse_long(optarg, 1, 100000, &o->threads)) return bad(err, cap, "--threads", optarg, "an integer >= 1");
            break;
        case 'f':
            if (strcmp(optarg, "serial") == 0) o->serial_touch = 1;
            else if (strcmp(optarg, "parallel") == 0) o->serial_touch = 0;
            else return bad(err, cap, "--first-touch", optarg, "parallel or serial");
            break;
        case 'p':
            if (mb_parse_long(optarg, 3, 1000000, &o->sample)) return bad(err, cap, "--sample-pages", optarg, "an integer >= 3");
            break;
        case 'e':
            if (mb_set_parse(optarg, &o->expect_nodes) || mb_set_count(&o->expect_nodes) == 0)
                return bad(err, cap, "--expect-nodes", optarg, "a node list such as 0 or 0-1");
            o->has_expect = 1;
            break;
        case 'm': {
            char *end;
            o->min_fraction = strtod(optarg, &end);
            if (*end || end == optarg || !(o->min_fraction > 0.0 && o->min_fraction <= 1.0))
                return bad(err, cap, "--min-fraction", optarg, "a number in (0, 1]");
            break;
        }
        case 'o': o->output = optarg; break;
        case 'I': o->inject_error = 1; break;
        case 'h': return 1;
        case 'V': return 3;
        case ':': snprintf(err, cap, "option %s needs a value", argv[optind - 1]); return 2;
        default: snprintf(err, cap, "unknown option %s (see --help)", argv[optind - 1]); return 2;
        }
    }
    if (optind < argc) { snprintf(err, cap, "unexpected argument '%s' (see --help)", argv[optind]); return 2; }
    return 0;
}

typedef struct {
    double best_s, sum_s;
    long counted;
} timing;

static void record(timing *t, double s)
{
    if (t->counted == 0 || s < t->best_s) t->best_s = s;
    t->sum_s += s;
    t->counted++;
}

/* Pages spread evenly over each array; returns the kernel interface that answered. */
static const char *sample_pages(const mb_arrays *x, long want, mb_page_stats *stats)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t bytes = x->n * sizeof(double);
    const size_t pages_per_array = (bytes + page - 1) / page;
    size_t per = (size_t)want / 3;
    if (per > pages_per_array) per = pages_per_array;
    void **addr = malloc(per * sizeof *addr);
    int *status = malloc(per * sizeof *status);
    double *arrays[3] = {x->a, x->b, x->c};
    const char *method = "none";
    mb_page_stats_init(stats);
    for (int k = 0; k < 3 && addr && status; k++) {
        for (size_t i = 0; i < per; i++) {
            size_t p = i * pages_per_array / per;
            addr[i] = (char *)arrays[k] + p * page;
        }
        method = mb_query_page_nodes(addr, per, status);
        mb_page_stats_add(stats, status, per);
    }
    free(addr);
    free(status);
    return method;
}

static void kernel_json(mb_json *j, const char *name, const timing *t, double bytes)
{
    mb_json_key(j, name);
    mb_json_begin_object(j);
    mb_json_kdouble(j, "best_gbs", bytes / t->best_s / 1e9);
    mb_json_kdouble(j, "avg_gbs", bytes / (t->sum_s / (double)t->counted) / 1e9);
    mb_json_kdouble(j, "best_s", t->best_s);
    mb_json_kdouble(j, "avg_s", t->sum_s / (double)t->counted);
    mb_json_kdouble(j, "bytes_per_iteration", bytes);
    mb_json_end_object(j);
}

int main(int argc, char **argv)
{
    options o;
    char err[256];
    int code = mb_answer_before_mpi("numa-bw", parse_options(argc, argv, &o, err, sizeof err), usage, err);
    if (code >= 0) return code;
    if (o.threads) omp_set_num_threads((int)o.threads);
    size_t phys = mb_physical_memory();
    if (phys && o.bytes > phys / 4) { /* three arrays must fit in 3/4 of memory */
        char want[32], have[32];
        fprintf(stderr, "numa-bw: error: --size %s per array (x3) does not fit this machine's %s of memory\n",
                mb_format_bytes((double)o.bytes, want, sizeof want), mb_format_bytes((double)phys, have, sizeof have));
        return 2;
    }

    mb_arrays x = {NULL, NULL, NULL, o.bytes / sizeof(double)};
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    /* posix_memalign does not touch the memory, so the first write below decides placement. */
    if (posix_memalign((void **)&x.a, page, x.n * sizeof(double)) || posix_memalign((void **)&x.b, page, x.n * sizeof(double)) ||
        posix_memalign((void **)&x.c, page, x.n * sizeof(double))) {
        fprintf(stderr, "numa-bw: error: cannot allocate 3 x %zu bytes\n", o.bytes);
        return 1;
    }

    char policy[32];
    mb_set policy_nodes;
    mb_mempolicy_query(policy, sizeof policy, &policy_nodes);

    mb_arrays_init(&x, !o.serial_touch);

    int threads = 1;
    mb_set thread_nodes;
    mb_set_clear(&thread_nodes);
#pragma omp parallel
    {
        int node = mb_current_node(NULL);
#pragma omp critical
        mb_set_add(&thread_nodes, node);
#pragma omp single
        threads = omp_get_num_threads();
    }

    timing copy = {0, 0, 0}, triad = {0, 0, 0};
    for (long r = 0; r < o.repeats; r++) {
        double t0 = omp_get_wtime();
        mb_kernel_copy(&x);
        double t1 = omp_get_wtime();
        mb_kernel_triad(&x);
        double t2 = omp_get_wtime();
        if (r > 0) { record(&copy, t1 - t0); record(&triad, t2 - t1); } /* first pass warms up, as in STREAM */
    }

    mb_page_stats stats;
    const char *method = sample_pages(&x, o.sample, &stats);

    if (o.inject_error) x.b[x.n / 2] += 1.0;
    size_t wrong = mb_arrays_validate(&x);
    int valid = wrong == 0;
    double on_expected = o.has_expect ? mb_page_stats_fraction_in(&stats, &o.expect_nodes) : 1.0;
    int expect_ok = !o.has_expect || (stats.located > 0 && on_expected >= o.min_fraction);

    mb_json j;
    mb_json_init(&j);
    mb_json_begin_object(&j);
    mb_json_kstring(&j, "program", "numa-bw");
    mb_json_kint(&j, "schema_version", 1);
    mb_json_kstring(&j, "version", MB_VERSION);
    mb_json_kbool(&j, "valid", valid);
    mb_json_kint(&j, "wrong_elements", (long long)wrong);
    mb_json_kint(&j, "array_bytes", (long long)(x.n * sizeof(double)));
    mb_json_kint(&j, "elements", (long long)x.n);
    mb_json_kint(&j, "threads", threads);
    mb_json_kint(&j, "repeats", o.repeats);
    mb_json_kstring(&j, "first_touch", o.serial_touch ? "serial" : "parallel");
    mb_json_key(&j, "kernels");
    mb_json_begin_object(&j);
    kernel_json(&j, "copy", &copy, 2.0 * sizeof(double) * (double)x.n);
    kernel_json(&j, "triad", &triad, 3.0 * sizeof(double) * (double)x.n);
    mb_json_end_object(&j);
    mb_json_key(&j, "pages");
    mb_json_begin_object(&j);
    mb_json_kint(&j, "sampled", stats.sampled);
    mb_json_kint(&j, "located", stats.located);
    mb_json_kint(&j, "not_present", stats.not_present);
    mb_json_kint(&j, "errors", stats.errors);
    mb_json_kint(&j, "page_bytes", (long long)page);
    mb_json_kstring(&j, "method", method);
    mb_json_key(&j, "fraction_by_node");
    mb_json_begin_object(&j);
    for (int n = 0; n < MB_MAX_NODES; n++) {
        if (stats.per_node[n] == 0) continue;
        char key[16];
        snprintf(key, sizeof key, "%d", n);
        mb_json_kdouble(&j, key, mb_page_stats_fraction(&stats, n));
    }
    mb_json_end_object(&j);
    mb_json_end_object(&j);
    mb_json_kstring(&j, "mempolicy", policy);
    mb_json_key(&j, "mempolicy_nodes");
    mb_json_begin_array(&j);
    for (int n = mb_set_first(&policy_nodes); n >= 0; n = mb_set_next(&policy_nodes, n)) mb_json_int(&j, n);
    mb_json_end_array(&j);
    mb_json_key(&j, "thread_nodes");
    mb_json_begin_array(&j);
    for (int n = mb_set_first(&thread_nodes); n >= 0; n = mb_set_next(&thread_nodes, n)) mb_json_int(&j, n);
    mb_json_end_array(&j);
    if (o.has_expect) {
        char list[128];
        mb_json_key(&j, "expect_nodes");
        mb_json_begin_object(&j);
        mb_json_kstring(&j, "nodes", mb_set_format(&o.expect_nodes, list, sizeof list));
        mb_json_kdouble(&j, "min_fraction", o.min_fraction);
        mb_json_kdouble(&j, "fraction", on_expected);
        mb_json_kbool(&j, "ok", expect_ok);
        mb_json_end_object(&j);
    }
    mb_json_end_object(&j);

    int status = mb_write_document("numa-bw", o.output, j.buf) ? 1 : 0;
    if (!valid) {
        fprintf(stderr, "numa-bw: INVALID: %zu of %zu elements wrong after copy/triad\n", wrong, x.n);
        status = 1;
    }
    if (!expect_ok) {
        char list[128];
        fprintf(stderr, "numa-bw: pages not where expected: %.3f of %ld located pages on nodes %s (wanted >= %.3f)\n",
                on_expected, stats.located, mb_set_format(&o.expect_nodes, list, sizeof list), o.min_fraction);
        status = 1;
    }
    mb_json_free(&j);
    free(x.a);
    free(x.b);
    free(x.c);
    return status;
}
