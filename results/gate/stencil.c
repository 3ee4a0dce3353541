/* Fallback workload for the regression-gate check when the solver `yee` is not built:
 * a 3-D 7-point Jacobi sweep, a fixed amount of work per step, timed around the
 * time-stepping loop only; prints the JSON keys of yee's report that the gate reads.
 * Usage: stencil --n N --steps S   (an N^3 grid) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv) {
    long n = 64, steps = 50;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && (!strcmp(argv[i], "--n") || !strcmp(argv[i], "--nx"))) n = atol(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--steps")) steps = atol(argv[++i]);
        else { fprintf(stderr, "stencil: error: unknown argument %s\n", argv[i]); return 2; }
    }
    if (n < 3 || steps < 1) { fprintf(stderr, "stencil: error: need --nx >= 3 and --steps >= 1\n"); return 2; }
    size_t cells = (size_t)n * n * n;
    float *a = calloc(cells, sizeof *a), *b = calloc(cells, sizeof *b);
    if (!a || !b) { fprintf(stderr, "stencil: error: out of memory\n"); return 1; }
    a[(n / 2) * n * n + (n / 2) * n + n / 2] = 1.0f;
    double t0 = now();
    for (long s = 0; s < steps; s++) {
        for (long i = 1; i < n - 1; i++)
            for (long j = 1; j < n - 1; j++)
                for (long k = 1; k < n - 1; k++) {
                    size_t c = (i * n + j) * n + k;
                    b[c] = (a[c] + a[c - 1] + a[c + 1] + a[c - n] + a[c + n] + a[c - n * n] + a[c + n * n]) / 7.0f;
                }
        float *t = a; a = b; b = t;
    }
    double loop = now() - t0;
    double sum = 0;
    for (size_t c = 0; c < cells; c++) sum += a[c];
    printf("{\"schema\": \"gate-stencil\", \"valid\": %s, \"cells\": %zu, \"steps\": %ld, "
           "\"mcells_per_s\": %.6f, \"seconds\": {\"total\": %.9f}, \"checksum\": %.9g}\n",
           sum > 0 ? "true" : "false", cells, steps, cells * (double)steps / loop / 1e6, loop, sum);
    free(a); free(b);
    return sum > 0 ? 0 : 1;
}
