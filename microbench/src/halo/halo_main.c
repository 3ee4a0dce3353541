/* halo: the solver's 6-face halo exchange alone, over a sweep of face sizes; time, bandwidth, validated data. */
#include <getopt.h>
#include <mpi.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cpuset.h"
#include "halo_exchange.h"
#include "halo_field.h"
#include "json.h"
#include "launcher.h"
#include "output.h"
#include "sysmem.h"
#include "version.h"

#define MAX_SIZES 64

static const char usage[] =
    "usage: halo [--sizes LIST] [--precision f32|f64] [--iterations K] [--warmup W] [--dims PxQxR]\n"
    "            [--periodic] [--output FILE]\n"
    "\n"
    "Runs the FDTD solver's halo exchange alone on a 3-D Cartesian communicator over all ranks\n"
    "(MPI_Dims_create unless --dims): each rank owns an N x N x N block of the six field components;\n"
    "per exchange, the two tangential E components of each face go to the lower neighbour and the two\n"
    "tangential H components to the upper neighbour (as once per half step in the solver), packed into\n"
    "buffers, with pre-posted MPI_Irecv + MPI_Isend + MPI_Waitall. Every received cell is checked.\n"
    "\n"
    "  --sizes LIST      face edge lengths N to sweep (face = N*N cells; default 8,16,32,64,128)\n"
    "  --precision P     f32 (default) or f64\n"
    "  --iterations K    timed exchanges per size (default 100)\n"
    "  --warmup W        untimed exchanges per size first (default 10)\n"
    "  --dims PxQxR      process grid (product must equal the number of ranks; 0 = let MPI choose)\n"
    "  --periodic        wrap around (every rank has 6 neighbours); default: walls, like the solver's PEC box\n"
    "  --output FILE     write the JSON document to FILE (atomically) instead of stdout\n"
    "  --inject-error    test hook: rank 0 damages one received buffer; the run must then fail validation\n"
    "  --help, --version\n"
    "\n"
    "Per size: time of one exchange (both phases, pack and unpack included), averaged over iterations on each\n"
    "rank, then min/avg/max over ranks (time_median_s: the largest per-rank median, robust to preemption);\n"
    "bytes_per_exchange = bytes sent by the busiest rank;\n"
    "bandwidth_gbs = bytes sent by all ranks per exchange / time_max_s (10^9 B/s).\n"
    "Exit status: 0 valid, 1 received data wrong or out of memory, 2 bad arguments.\n"
    "Example: mpirun -np 8 halo --sizes 32,64,128,256 --precision f64\n";

typedef struct {
    long sizes[MAX_SIZES];
    int nsizes;
    int esize;
    long iterations, warmup;
    int dims[3];
    int periodic, inject_error;
    const char *output;
} options;

static int parse_dims(const char *text, int dims[3])
{
    long d[3];
    char extra;
    if (sscanf(text, "%ldx%ldx%ld%c", &d[0], &d[1], &d[2], &extra) != 3) return -1;
    for (int i = 0; i < 3; i++) {
        if (d[i] < 0 || d[i] > 1000000) return -1;
        dims[i] = (int)d[i];
    }
    return 0;
}

static int parse_options(int argc, char **argv, options *o, char *err, size_t cap)
{
    static const struct option longopts[] = {
        {"sizes", required_argument, 0, 's'},      {"precision", required_argument, 0, 'p'},
        {"iterations", required_argument, 0, 'i'}, {"warmup", required_argument, 0, 'w'},
        {"dims", required_argument, 0, 'd'},       {"periodic", no_argument, 0, 'P'},
        {"output", required_argument, 0, 'o'},     {"inject-error", no_argument, 0, 'I'},
        {"help", no_argument, 0, 'h'},             {"version", no_argument, 0, 'V'},
        {0, 0, 0, 0},
    };
    memset(o, 0, sizeof *o);
    const long defaults[] = {8, 16, 32, 64, 128};
    o->nsizes = 5;
    memcpy(o->sizes, defaults, sizeof defaults);
    o->esize = 4;
    o->iterations = 100;
    o->warmup = 10;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":s:p:i:w:d:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            o->nsizes = mb_parse_long_list(optarg, 1, 4096, o->sizes, MAX_SIZES);
            if (o->nsizes < 0) {
                snprintf(err, cap, "--sizes: '%s' is not a comma-separated list of edge lengths 1..4096", optarg);
                return 2;
            }
            break;
        case 'p':
            if (strcmp(optarg, "f32") == 0) o->esize = 4;
            else if (strcmp(optarg, "f64") == 0) o->esize = 8;
            else { snprintf(err, cap, "--precision: '%s' is not f32 or f64", optarg); return 2; }
            break;
        case 'i':
            if (mb_parse_long(optarg, 1, 100000000, &o->iterations)) {
                snprintf(err, cap, "--iterations: '%s' is not an integer >= 1", optarg);
                return 2;
            }
            break;
        case 'w':
            if (mb_parse_long(optarg, 0, 100000000, &o->warmup)) {
                snprintf(err, cap, "--warmup: '%s' is not an integer >= 0", optarg);
                return 2;
            }
            break;
        case 'd':
            if (parse_dims(optarg, o->dims)) { snprintf(err, cap, "--dims: '%s' is not PxQxR, e.g. 2x2x1", optarg); return 2; }
            break;
        case 'P': o->periodic = 1; break;
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
    long side;
    size_t bytes_max, bytes_total;
    double tmin, tavg, tmax;
    double tmedian; /* largest per-rank median: robust against the odd preempted iteration */
    long wrong;
    int ok;
} size_result;

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, compare_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Runs warmup + timed exchanges for one face size. Returns 0, or -1 when memory ran out on some rank. */
static int run_size(const options *o, MPI_Comm cart, const int dims[3], long side, int inject, size_result *res)
{
    int rank, size, coords[3];
    MPI_Comm_rank(cart, &rank);
    MPI_Comm_size(cart, &size);
    MPI_Cart_coords(cart, rank, 3, coords);

    halo_field h;
    halo_exchanger x;
    int ok = halo_field_alloc(&h, (int)side, (size_t)o->esize, coords, dims) == 0;
    if (ok && halo_exchanger_init(&x, cart, &h)) { halo_field_free(&h); ok = 0; }
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, cart);
    if (!all_ok) {
        if (ok) { halo_exchanger_free(&x); halo_field_free(&h); }
        return -1;
    }
    int has_neighbour[3][2];
    for (int a = 0; a < 3; a++) {
        has_neighbour[a][0] = x.lower[a] != MPI_PROC_NULL;
        has_neighbour[a][1] = x.upper[a] != MPI_PROC_NULL;
    }

    double sum = 0.0;
    double *times = malloc((size_t)o->iterations * sizeof *times);
    long wrong = 0;
    for (long it = 0; it < o->warmup + o->iterations; it++) {
        int iter = (int)(it & 0x7fffffff);
        halo_fill_send_planes(&h, iter);
        halo_clear_ghosts(&h);
        if (inject && rank == 0 && it == o->warmup) x.corrupt_next = 1;
        MPI_Barrier(cart);
        double t0 = MPI_Wtime();
        halo_exchange(&x, &h);
        double t = MPI_Wtime() - t0;
        if (inject && rank == 0 && it == o->warmup && x.corrupt_next) {
            /* No neighbour to receive from: damage a ghost cell directly so the check still has to fire. */
            halo_field_set(&h, HALO_HY, halo_index(h.n, 0, 1, 1), 12345.0);
            x.corrupt_next = 0;
        }
        wrong += (long)halo_validate_ghosts(&h, (const int(*)[2])has_neighbour, iter);
        if (it >= o->warmup) {
            sum += t;
            if (times) times[it - o->warmup] = t;
        }
    }
    double median = times ? median_of(times, (size_t)o->iterations) : sum / (double)o->iterations;
    free(times);
    MPI_Allreduce(&median, &res->tmedian, 1, MPI_DOUBLE, MPI_MAX, cart);

    double avg = sum / (double)o->iterations;
    unsigned long long sent = halo_bytes_sent(&x), sent_max, sent_total;
    MPI_Allreduce(&avg, &res->tmin, 1, MPI_DOUBLE, MPI_MIN, cart);
    MPI_Allreduce(&avg, &res->tmax, 1, MPI_DOUBLE, MPI_MAX, cart);
    MPI_Allreduce(&avg, &res->tavg, 1, MPI_DOUBLE, MPI_SUM, cart);
    res->tavg /= size;
    MPI_Allreduce(&sent, &sent_max, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, cart);
    MPI_Allreduce(&sent, &sent_total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, cart);
    MPI_Allreduce(&wrong, &res->wrong, 1, MPI_LONG, MPI_SUM, cart);
    res->side = side;
    res->bytes_max = (size_t)sent_max;
    res->bytes_total = (size_t)sent_total;
    res->ok = res->wrong == 0;

    halo_exchanger_free(&x);
    halo_field_free(&h);
    return 0;
}

/* Ranks x OpenMP threads beyond the CPUs a host's ranks may use make every exchange wait for descheduled
 * partners; the times are then about the scheduler. Warns (once per host) and returns 1 if so anywhere. */
static int oversubscribed(int threads)
{
    MPI_Comm host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    int hrank, total_threads;
    MPI_Comm_rank(host, &hrank);
    cpu_set_t mask;
    mb_set mine, all;
    mb_set_clear(&mine);
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask) == 0)
        for (int c = 0; c < CPU_SETSIZE && c < MB_MAX_CPUS; c++)
            if (CPU_ISSET(c, &mask)) mb_set_add(&mine, c);
    MPI_Allreduce(mine.bits, all.bits, MB_SET_WORDS, MPI_UINT64_T, MPI_BOR, host);
    MPI_Allreduce(&threads, &total_threads, 1, MPI_INT, MPI_SUM, host);
    MPI_Comm_free(&host);
    int over = total_threads > mb_set_count(&all);
    if (over && hrank == 0) {
        char hostname[64] = "?";
        gethostname(hostname, sizeof hostname - 1);
        fprintf(stderr, "halo: warning: %d threads in all on host %s with %d usable CPUs: oversubscribed, times will "
                        "include waiting for descheduled ranks (set OMP_NUM_THREADS)\n",
                total_threads, hostname, mb_set_count(&all));
    }
    MPI_Allreduce(MPI_IN_PLACE, &over, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    return over;
}

/* The largest face size needs six (N+2)^3 blocks per rank; refuse sizes whose ranks on one host would not fit
 * in 3/4 of its memory, rather than meet the OOM killer half-way through the sweep. */
static int fits_in_memory(const options *o, int rank)
{
    MPI_Comm host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    int local_ranks;
    MPI_Comm_size(host, &local_ranks);
    MPI_Comm_free(&host);
    long side = 0;
    for (int s = 0; s < o->nsizes; s++)
        if (o->sizes[s] > side) side = o->sizes[s];
    double per_rank = HALO_FIELDS * (double)(side + 2) * (double)(side + 2) * (double)(side + 2) * o->esize;
    double phys = (double)mb_physical_memory();
    int ok = phys == 0 || per_rank * local_ranks <= 0.75 * phys;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!ok && rank == 0) {
        char need[32], have[32];
        fprintf(stderr, "halo: error: face size %ld needs %s per rank, too much for %d rank(s) on a host with %s\n", side,
                mb_format_bytes(per_rank, need, sizeof need), local_ranks, mb_format_bytes(phys, have, sizeof have));
    }
    return ok;
}

static char *render(const options *o, int ranks, int threads, int over, const int dims[3], const size_result *res,
                    int nres, int valid)
{
    mb_json j;
    mb_json_init(&j);
    mb_json_begin_object(&j);
    mb_json_kstring(&j, "program", "halo");
    mb_json_kint(&j, "schema_version", 1);
    mb_json_kstring(&j, "version", MB_VERSION);
    mb_json_kbool(&j, "valid", valid);
    mb_json_kint(&j, "ranks", ranks);
    mb_json_kint(&j, "threads_per_rank", threads);
    mb_json_kbool(&j, "oversubscribed", over);
    mb_json_key(&j, "dims");
    mb_json_begin_array(&j);
    for (int a = 0; a < 3; a++) mb_json_int(&j, dims[a]);
    mb_json_end_array(&j);
    mb_json_kbool(&j, "periodic", o->periodic);
    mb_json_kstring(&j, "precision", o->esize == 4 ? "f32" : "f64");
    mb_json_kint(&j, "iterations", o->iterations);
    mb_json_kint(&j, "warmup", o->warmup);
    mb_json_key(&j, "results");
    mb_json_begin_array(&j);
    for (int s = 0; s < nres; s++) {
        const size_result *r = &res[s];
        mb_json_begin_object(&j);
        mb_json_kint(&j, "face_side", r->side);
        mb_json_kint(&j, "face_cells", r->side * r->side);
        mb_json_kint(&j, "bytes_per_exchange", (long long)r->bytes_max);
        mb_json_kint(&j, "bytes_all_ranks", (long long)r->bytes_total);
        mb_json_kdouble(&j, "time_min_s", r->tmin);
        mb_json_kdouble(&j, "time_avg_s", r->tavg);
        mb_json_kdouble(&j, "time_max_s", r->tmax);
        mb_json_kdouble(&j, "time_median_s", r->tmedian);
        mb_json_kdouble(&j, "bandwidth_gbs", r->tmax > 0 ? (double)r->bytes_total / r->tmax / 1e9 : 0.0);
        mb_json_kint(&j, "wrong_cells", r->wrong);
        mb_json_kbool(&j, "valid", r->ok);
        mb_json_end_object(&j);
    }
    mb_json_end_array(&j);
    mb_json_end_object(&j);
    return j.buf;
}

int main(int argc, char **argv)
{
    options o;
    char err[256] = "";
    int code = mb_answer_before_mpi("halo", parse_options(argc, argv, &o, err, sizeof err), usage, err);
    if (code >= 0) return code;

    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int dims[3] = {o.dims[0], o.dims[1], o.dims[2]}, dims_invalid = 0;
    {
        long product = (long)(dims[0] ? dims[0] : 1) * (dims[1] ? dims[1] : 1) * (dims[2] ? dims[2] : 1);
        if (product > size || (dims[0] && dims[1] && dims[2] && product != size) || size % product) {
            snprintf(err, sizeof err, "--dims %dx%dx%d does not fit %d ranks", dims[0], dims[1], dims[2], size);
            dims_invalid = 1;
        } else {
            MPI_Dims_create(size, 3, dims);
        }
    }
    if (dims_invalid) { /* only the process count can make --dims wrong, and that needs MPI */
        if (rank == 0) fprintf(stderr, "halo: error: %s\n", err);
        MPI_Finalize();
        return 2;
    }

    if (!fits_in_memory(&o, rank)) {
        MPI_Finalize();
        return 2;
    }

    int threads = omp_get_max_threads();
    int over = oversubscribed(threads);
    MPI_Allreduce(MPI_IN_PLACE, &threads, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

    int periods[3] = {o.periodic, o.periodic, o.periodic};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);

    size_result res[MAX_SIZES];
    int status = 0, nres = 0;
    for (int s = 0; s < o.nsizes; s++) {
        if (run_size(&o, cart, dims, o.sizes[s], o.inject_error && s == 0, &res[nres])) {
            if (rank == 0) fprintf(stderr, "halo: error: out of memory for face size %ld\n", o.sizes[s]);
            status = 1;
            break;
        }
        nres++;
    }
    int valid = status == 0;
    for (int s = 0; s < nres; s++) valid = valid && res[s].ok;
    if (rank == 0) {
        for (int s = 0; s < nres; s++)
            if (!res[s].ok)
                fprintf(stderr, "halo: INVALID: %ld received cells wrong for face size %ld\n", res[s].wrong, res[s].side);
        char *doc = render(&o, size, threads, over, dims, res, nres, valid);
        if (mb_write_document("halo", o.output, doc)) status = 1;
        free(doc);
    }
    if (!valid) status = 1;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return status;
}
