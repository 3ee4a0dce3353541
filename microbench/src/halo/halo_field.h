/* A rank's cubic subdomain of the six Yee field components with one ghost layer, and the known values
 * used to prove that halo data arrived intact and from the right place. */
#ifndef MB_HALO_FIELD_H
#define MB_HALO_FIELD_H

#include <stddef.h>

enum { HALO_EX, HALO_EY, HALO_EZ, HALO_HX, HALO_HY, HALO_HZ, HALO_FIELDS };

#define HALO_EMPTY (-1.0) /* ghost cells are reset to this before each exchange */

typedef struct {
    int n;               /* interior cells per axis; arrays hold (n+2)^3 with ghosts at index 0 and n+1 */
    size_t esize;        /* 4 (f32) or 8 (f64) */
    void *f[HALO_FIELDS];
    int coords[3], dims[3]; /* position of this rank in the Cartesian grid, for global cell numbers */
} halo_field;

int halo_field_alloc(halo_field *h, int n, size_t esize, const int coords[3], const int dims[3]);
void halo_field_free(halo_field *h);

static inline size_t halo_index(int n, int i, int j, int k)
{
    return ((size_t)i * (size_t)(n + 2) + (size_t)j) * (size_t)(n + 2) + (size_t)k;
}

double halo_field_get(const halo_field *h, int field, size_t idx);
void halo_field_set(halo_field *h, int field, size_t idx, double v);

/* The two field components tangential to a face normal to axis (0 x, 1 y, 2 z), offset by 0 (E) or 3 (H). */
void halo_tangential(int axis, int base, int comp[2]);

/* Value of a field at a local index (ghosts included) in iteration iter; exact in f32 and f64. */
double halo_expected(const halo_field *h, int field, int i, int j, int k, int iter);

/* Writes iteration iter's values into the planes that will be sent: E at local index 1, H at local index n. */
void halo_fill_send_planes(halo_field *h, int iter);
/* Resets every ghost plane to HALO_EMPTY. */
void halo_clear_ghosts(halo_field *h);
/* Checks the ghost planes: received ones (has_neighbour) must hold the neighbour's values of iteration iter,
 * the others must still be HALO_EMPTY. has_neighbour[axis][0] = lower side, [1] = upper side.
 * Returns the number of wrong cells. */
size_t halo_validate_ghosts(const halo_field *h, const int has_neighbour[3][2], int iter);

#endif
