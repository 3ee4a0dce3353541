#include "stream_kernels.h"

/* Values are small multiples of 1/4 so that a + 3a is exact in binary floating point. */
static double initial_a(size_t i) { return 1.0 + 0.25 * (double)(i % 7); }

void mb_arrays_init(mb_arrays *x, int parallel)
{
    double *restrict a = x->a, *restrict b = x->b, *restrict c = x->c;
    const long n = (long)x->n;
    if (parallel) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) { a[i] = initial_a((size_t)i); b[i] = -1.0; c[i] = -1.0; }
    } else {
        for (long i = 0; i < n; i++) { a[i] = initial_a((size_t)i); b[i] = -1.0; c[i] = -1.0; }
    }
}

void mb_kernel_copy(mb_arrays *x)
{
    const double *restrict a = x->a;
    double *restrict c = x->c;
    const long n = (long)x->n;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) c[i] = a[i];
}

void mb_kernel_triad(mb_arrays *x)
{
    const double *restrict a = x->a, *restrict c = x->c;
    double *restrict b = x->b;
    const double s = MB_TRIAD_SCALAR;
    const long n = (long)x->n;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) b[i] = a[i] + s * c[i];
}

size_t mb_arrays_validate(const mb_arrays *x)
{
    size_t wrong = 0;
    const long n = (long)x->n;
#pragma omp parallel for schedule(static) reduction(+ : wrong)
    for (long i = 0; i < n; i++) {
        double a = initial_a((size_t)i);
        if (x->a[i] != a || x->c[i] != a || x->b[i] != a + MB_TRIAD_SCALAR * a) wrong++;
    }
    return wrong;
}
