/* triad_mpi: node memory bandwidth of R ranks x T OpenMP threads measured together.
 *
 * usage: triad_mpi --bytes N [--repeats K]
 *   N bytes per array in total (three double arrays), split evenly over the ranks;
 *   each rank's threads split its share again.  Every repetition starts on all ranks
 *   together (two barriers) and ends when the last rank is done (a barrier), so the
 *   figure is all bytes moved divided by one wall interval that holds every rank's work:
 *   processes are never summed from runs that did not overlap in time.
 * Prints on rank 0:
 *   triad ranks R threads T bytes_per_array N best_GBs X avg_GBs Y VALID|INVALID
 * GB is 1e9 bytes; STREAM counting (24 bytes per element, no write-allocate).
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(int rank, const char *why)
{
    if (rank == 0)
        fprintf(stderr, "triad_mpi: %s\nusage: triad_mpi --bytes N [--repeats K]  (N >= 4096, 2 <= K <= 10000)\n",
                why);
    return 2;
}

int main(int argc, char **argv)
{
    int provided, rank, ranks;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    long long total = 0;
    long repeats = 10;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bytes") && i + 1 < argc)
            total = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = atol(argv[++i]);
        else {
            int rc = usage(rank, "unknown or incomplete option");
            MPI_Finalize();
            return rc;
        }
    }
    if (total < 4096 || repeats < 2 || repeats > 10000) {
        int rc = usage(rank, "--bytes and --repeats out of range");
        MPI_Finalize();
        return rc;
    }
    size_t n = (size_t)(total / (long long)sizeof(double) / ranks);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    int ok = a && b && c, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (rank == 0) fprintf(stderr, "triad_mpi: cannot allocate 3 x %zu bytes per rank\n", n * sizeof(double));
        MPI_Finalize();
        return 1;
    }
    /* first touch by the threads that later work on the same part */
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) { a[i] = 0.0; b[i] = 2.0; c[i] = 1.0; }

    const double scalar = 3.0;
    double best = 0.0, sum = 0.0;
    for (long k = 0; k < repeats; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD); /* no rank starts before rank 0 has read its clock */
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++) a[i] = b[i] + scalar * c[i];
        MPI_Barrier(MPI_COMM_WORLD); /* ... and rank 0 stops it only once every rank is done */
        double seconds = MPI_Wtime() - t0;
        double gbs = 24.0 * (double)n * ranks / seconds / 1e9;
        if (k > 0) { /* the first repetition warms up */
            sum += gbs;
            if (gbs > best) best = gbs;
        }
    }
    size_t wrong = 0;
#pragma omp parallel for reduction(+ : wrong)
    for (size_t i = 0; i < n; i++) wrong += a[i] != 2.0 + scalar * 1.0;
    unsigned long long local = wrong, total_wrong = 0;
    MPI_Reduce(&local, &total_wrong, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("triad ranks %d threads %d bytes_per_array %lld best_GBs %.4f avg_GBs %.4f %s\n", ranks,
               omp_get_max_threads(), (long long)(n * sizeof(double)) * ranks, best, sum / (repeats - 1),
               total_wrong ? "INVALID" : "VALID");
    free(a); free(b); free(c);
    MPI_Finalize();
    return total_wrong ? 1 : 0;
}
