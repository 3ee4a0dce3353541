/* pairmatrix: latency and bandwidth of every pair of ranks, plus the
 * correctness and time of collectives over all ranks.
 *
 * Run one rank per node.  Pairs are scheduled as a round-robin tournament
 * (circle method): every round, all ranks are paired and the pairs measure at
 * the same time, so the fabric carries N/2 simultaneous streams - the load
 * under which paper 003's RDMA over Ethernet failed beyond two nodes - and the
 * whole matrix takes N-1 rounds instead of N(N-1)/2.
 *
 * The whole tournament is repeated --rounds times (default 3) and each pair keeps its best
 * figures (lowest latency, highest bandwidth): on a busy or shared node one slow round must
 * not make a node look like an outlier.
 *
 * Output (rank 0, one line each):
 *   pair <rankA> <hostA> <rankB> <hostB> latency_us <x> bandwidth_MBs <y>
 *   collective <name> bytes <n> time_us <t> VALID|INVALID
 *   pairmatrix: ranks <N> pairs <P> VALID|INVALID
 * Exit 0 when every payload and collective result checked out, 1 otherwise,
 * 2 on bad arguments.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 16

typedef struct {
    long small, large;
    int lat_iters, bw_iters, coll_iters, rounds;
} options;

static int parse_options(int argc, char **argv, options *o)
{
    o->small = 8;
    o->large = 1 << 20;
    o->lat_iters = 200;
    o->bw_iters = 10;
    o->coll_iters = 50;
    o->rounds = 3;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (i + 1 >= argc)
            return fprintf(stderr, "pairmatrix: error: %s needs a value\n", a), 0;
        long v = strtol(argv[++i], NULL, 10);
        if (v < 1)
            return fprintf(stderr, "pairmatrix: error: %s must be a positive integer\n", a), 0;
        if (!strcmp(a, "--small")) o->small = v;
        else if (!strcmp(a, "--large")) o->large = v;
        else if (!strcmp(a, "--lat-iters")) o->lat_iters = (int)v;
        else if (!strcmp(a, "--bw-iters")) o->bw_iters = (int)v;
        else if (!strcmp(a, "--coll-iters")) o->coll_iters = (int)v;
        else if (!strcmp(a, "--rounds")) o->rounds = (int)v;
        else return fprintf(stderr, "pairmatrix: error: unknown option %s\n", a), 0;
    }
    return 1;
}

static void fill(unsigned char *buf, long n, int seed)
{
    for (long i = 0; i < n; ++i)
        buf[i] = (unsigned char)((i * 31 + seed) & 0xff);
}

static int check(const unsigned char *buf, long n, int seed)
{
    for (long i = 0; i < n; ++i)
        if (buf[i] != (unsigned char)((i * 31 + seed) & 0xff))
            return 0;
    return 1;
}

/* Half round-trip time (s) of ping-pong between me and peer; `first` pings.
 * The pinger's pattern travels there and back, so both ends can check it. */
static double pingpong(unsigned char *buf, long n, int iters, int me, int peer, int first, int *ok)
{
    if (first)
        fill(buf, n, me);
    double t0 = 0;
    for (int it = -2; it < iters; ++it) { /* two warm-up round trips */
        if (it == 0)
            t0 = MPI_Wtime();
        if (first) {
            MPI_Send(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
    }
    double t = (MPI_Wtime() - t0) / (2.0 * iters);
    *ok &= check(buf, n, first ? me : peer);
    return t;
}

/* Unidirectional bandwidth (bytes/s) from sender to receiver with a window of messages.
 * The sender may send one buffer WINDOW times at once; pending receives must not overlap
 * (MPI standard), so the receiver posts them into `window`, WINDOW buffers of n bytes. */
static double stream(unsigned char *buf, unsigned char *window, long n, int iters, int peer, int sender, int me,
                     int *ok)
{
    MPI_Request req[WINDOW];
    char ack = 0;
    double t0 = 0;
    if (sender)
        fill(buf, n, me);
    for (int it = -1; it < iters; ++it) {
        if (it == 0)
            t0 = MPI_Wtime();
        for (int w = 0; w < WINDOW; ++w) {
            if (sender)
                MPI_Isend(buf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[w]);
            else
                MPI_Irecv(window + (size_t)w * (size_t)n, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[w]);
        }
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        if (sender)
            MPI_Recv(&ack, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(&ack, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
    }
    double t = MPI_Wtime() - t0;
    if (!sender)
        for (int w = 0; w < WINDOW; ++w)
            *ok &= check(window + (size_t)w * (size_t)n, n, peer);
    return (double)n * WINDOW * iters / t;
}

/* Round r of the circle method for n players (n even): partner of player p. */
static int partner(int p, int r, int n)
{
    if (p == n - 1)
        return r;
    if (p == r)
        return n - 1;
    return ((2 * r - p) % (n - 1) + (n - 1)) % (n - 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, size, len;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    options o;
    if (!parse_options(argc, argv, &o)) {
        MPI_Finalize();
        return 2;
    }
    char host[MPI_MAX_PROCESSOR_NAME] = {0};
    MPI_Get_processor_name(host, &len);
    char *hosts = malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    long bufsize = o.large > o.small ? o.large : o.small;
    unsigned char *buf = malloc((size_t)bufsize);
    unsigned char *window = malloc((size_t)bufsize * WINDOW);
    if (!buf || !window || !hosts) {
        fprintf(stderr, "pairmatrix: error: cannot allocate %ld x %d bytes of message buffers\n", bufsize, WINDOW + 1);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int ok = 1;

    /* results[i*size+j] for i<j: latency (s) and bandwidth (B/s), gathered at rank 0 */
    double *lat = calloc((size_t)size * size, sizeof(double));
    double *bw = calloc((size_t)size * size, sizeof(double));
    int players = size + (size % 2); /* odd: one player sits out each round */
    for (int i = 0; i < size * size; ++i)
        lat[i] = 1e30; /* best (lowest) latency kept; unmeasured entries are reset below */
    for (int round = 0; round < o.rounds; ++round) {
        for (int r = 0; r < players - 1; ++r) {
            int peer = partner(me, r, players);
            MPI_Barrier(MPI_COMM_WORLD);
            if (peer >= size)
                continue;
            int low = me < peer;
            double t = pingpong(buf, o.small, o.lat_iters, me, peer, low, &ok);
            double b_out = stream(buf, window, o.large, o.bw_iters, peer, low, me, &ok);
            double b_back = stream(buf, window, o.large, o.bw_iters, peer, !low, me, &ok);
            double b = b_out < b_back ? b_out : b_back; /* the weaker direction */
            if (low) {
                if (t < lat[me * size + peer])
                    lat[me * size + peer] = t;
                if (b > bw[me * size + peer])
                    bw[me * size + peer] = b;
            }
        }
    }
    for (int i = 0; i < size * size; ++i)
        if (lat[i] >= 1e30)
            lat[i] = 0; /* only the measuring rank of a pair contributes to the sums */
    MPI_Allreduce(MPI_IN_PLACE, lat, size * size, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, bw, size * size, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        for (int i = 0; i < size; ++i)
            for (int j = i + 1; j < size; ++j)
                printf("pair %d %s %d %s latency_us %.3f bandwidth_MBs %.1f\n", i,
                       hosts + (size_t)i * MPI_MAX_PROCESSOR_NAME, j,
                       hosts + (size_t)j * MPI_MAX_PROCESSOR_NAME, lat[i * size + j] * 1e6,
                       bw[i * size + j] / 1e6);

    /* Collectives over all ranks: results checked, time per call reported. */
    long counts[2] = {1, o.large / (long)sizeof(double)};
    for (int c = 0; c < 2; ++c) {
        long n = counts[c] > 0 ? counts[c] : 1;
        double *x = malloc((size_t)n * sizeof(double)), *y = malloc((size_t)n * sizeof(double));
        for (long i = 0; i < n; ++i)
            x[i] = me + 1 + (double)i;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int it = 0; it < o.coll_iters; ++it)
            MPI_Allreduce(x, y, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double t = (MPI_Wtime() - t0) / o.coll_iters;
        int good = 1;
        for (long i = 0; i < n; ++i) /* sum over ranks of (rank+1+i), exact in double */
            good &= y[i] == (double)size * (size + 1) / 2 + (double)size * i;
        MPI_Allreduce(MPI_IN_PLACE, &good, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        ok &= good;
        if (me == 0)
            printf("collective allreduce bytes %ld time_us %.3f %s\n", n * (long)sizeof(double),
                   t * 1e6, good ? "VALID" : "INVALID");
        free(x);
        free(y);
    }
    long token = me == 0 ? 123456789L : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < o.coll_iters; ++it)
        MPI_Bcast(&token, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    double t = (MPI_Wtime() - t0) / o.coll_iters;
    int good = token == 123456789L;
    MPI_Allreduce(MPI_IN_PLACE, &good, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    ok &= good;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (me == 0) {
        printf("collective bcast bytes %d time_us %.3f %s\n", (int)sizeof(long), t * 1e6,
               good ? "VALID" : "INVALID");
        printf("pairmatrix: ranks %d pairs %d %s\n", size, size * (size - 1) / 2,
               ok ? "VALID" : "INVALID");
    }
    free(buf);
    free(window);
    free(hosts);
    free(lat);
    free(bw);
    MPI_Finalize();
    return ok ? 0 : 1;
}
