/* STREAM-style kernels on three arrays with a static OpenMP schedule (the same one used for first touch). */
#ifndef MB_STREAM_KERNELS_H
#define MB_STREAM_KERNELS_H

#include <stddef.h>

#define MB_TRIAD_SCALAR 3.0

typedef struct {
    double *a, *b, *c;
    size_t n;
} mb_arrays;

/* Writes the initial values; parallel = each thread touches the part it later works on, else thread 0 touches all. */
void mb_arrays_init(mb_arrays *x, int parallel);
void mb_kernel_copy(mb_arrays *x);  /* c = a          : 2 words moved per element */
void mb_kernel_triad(mb_arrays *x); /* b = a + s * c  : 3 words moved per element */
/* Checks every element against what copy followed by triad must give; returns the number of wrong elements. */
size_t mb_arrays_validate(const mb_arrays *x);

#endif
