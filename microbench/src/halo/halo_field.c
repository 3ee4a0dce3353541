#include "halo_field.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int halo_field_alloc(halo_field *h, int n, size_t esize, const int coords[3], const int dims[3])
{
    memset(h, 0, sizeof *h);
    h->n = n;
    h->esize = esize;
    memcpy(h->coords, coords, sizeof h->coords);
    memcpy(h->dims, dims, sizeof h->dims);
    size_t cells = (size_t)(n + 2) * (size_t)(n + 2) * (size_t)(n + 2);
    for (int f = 0; f < HALO_FIELDS; f++) {
        h->f[f] = calloc(cells, esize);
        if (!h->f[f]) { halo_field_free(h); return -1; }
    }
    return 0;
}

void halo_field_free(halo_field *h)
{
    for (int f = 0; f < HALO_FIELDS; f++) { free(h->f[f]); h->f[f] = NULL; }
}

double halo_field_get(const halo_field *h, int field, size_t idx)
{
    return h->esize == 4 ? (double)((const float *)h->f[field])[idx] : ((const double *)h->f[field])[idx];
}

void halo_field_set(halo_field *h, int field, size_t idx, double v)
{
    if (h->esize == 4) ((float *)h->f[field])[idx] = (float)v;
    else ((double *)h->f[field])[idx] = v;
}

void halo_tangential(int axis, int base, int comp[2])
{
    /* In ascending order, as the solver packs them: x -> (y, z), y -> (x, z), z -> (x, y). */
    comp[0] = base + (axis == 0 ? 1 : 0);
    comp[1] = base + (axis == 2 ? 1 : 2);
}

/* Global cell number along one axis, wrapping for periodic neighbours. */
static uint32_t global_coord(const halo_field *h, int axis, int local)
{
    long g = (long)h->coords[axis] * h->n + local - 1;
    long size = (long)h->dims[axis] * h->n;
    return (uint32_t)(((g % size) + size) % size);
}

double halo_expected(const halo_field *h, int field, int i, int j, int k, int iter)
{
    uint32_t v = global_coord(h, 0, i) * 73856093u ^ global_coord(h, 1, j) * 19349663u ^
                 global_coord(h, 2, k) * 83492791u ^ (uint32_t)(field + 1) * 2654435761u ^ (uint32_t)iter * 40503u;
    v ^= v >> 13;
    return (double)(v & 0xFFFFFu) + 1.0; /* 20 bits: exact in float, never HALO_EMPTY */
}

/* Runs the statement for every interior cell (u, v) of the plane at local index p normal to axis. */
#define FOR_PLANE(axis, p, n, ...)                                                          \
    for (int u_ = 1; u_ <= (n); u_++)                                                         \
        for (int v_ = 1; v_ <= (n); v_++) {                                                   \
            int i = (axis) == 0 ? (p) : u_;                                                   \
            int j = (axis) == 1 ? (p) : ((axis) == 0 ? u_ : v_);                              \
            int k = (axis) == 2 ? (p) : v_;                                                   \
            __VA_ARGS__;                                                                      \
        }

void halo_fill_send_planes(halo_field *h, int iter)
{
    const int n = h->n;
    for (int axis = 0; axis < 3; axis++) {
        int ce[2], ch[2];
        halo_tangential(axis, HALO_EX, ce);
        halo_tangential(axis, HALO_HX, ch);
        for (int c = 0; c < 2; c++) {
            FOR_PLANE(axis, 1, n, halo_field_set(h, ce[c], halo_index(n, i, j, k), halo_expected(h, ce[c], i, j, k, iter)))
            FOR_PLANE(axis, n, n, halo_field_set(h, ch[c], halo_index(n, i, j, k), halo_expected(h, ch[c], i, j, k, iter)))
        }
    }
}

void halo_clear_ghosts(halo_field *h)
{
    const int n = h->n;
    for (int f = 0; f < HALO_FIELDS; f++)
        for (int axis = 0; axis < 3; axis++) {
            FOR_PLANE(axis, 0, n, halo_field_set(h, f, halo_index(n, i, j, k), HALO_EMPTY))
            FOR_PLANE(axis, n + 1, n, halo_field_set(h, f, halo_index(n, i, j, k), HALO_EMPTY))
        }
}

size_t halo_validate_ghosts(const halo_field *h, const int has_neighbour[3][2], int iter)
{
    const int n = h->n;
    size_t wrong = 0;
    for (int axis = 0; axis < 3; axis++) {
        int ce[2], ch[2];
        halo_tangential(axis, HALO_EX, ce);
        halo_tangential(axis, HALO_HX, ch);
        for (int c = 0; c < 2; c++) {
            /* E arrives from the upper neighbour into ghost n+1; H from the lower one into ghost 0. */
            FOR_PLANE(axis, n + 1, n, {
                double want = has_neighbour[axis][1] ? halo_expected(h, ce[c], i, j, k, iter) : HALO_EMPTY;
                if (halo_field_get(h, ce[c], halo_index(n, i, j, k)) != want) wrong++;
            })
            FOR_PLANE(axis, 0, n, {
                double want = has_neighbour[axis][0] ? halo_expected(h, ch[c], i, j, k, iter) : HALO_EMPTY;
                if (halo_field_get(h, ch[c], halo_index(n, i, j, k)) != want) wrong++;
            })
        }
    }
    return wrong;
}
