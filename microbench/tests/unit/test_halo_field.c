/* The halo value scheme: exact values, detection of wrong/missing/stale ghost data, without MPI. */
#include <math.h>

#include "check.h"
#include "halo_field.h"

/* Copies what a neighbour above would send (its E plane 1) into our upper ghost, by hand. */
static void receive_from_upper(halo_field *me, const halo_field *up, int axis)
{
    const int n = me->n;
    int comp[2];
    halo_tangential(axis, HALO_EX, comp);
    for (int c = 0; c < 2; c++)
        for (int u = 1; u <= n; u++)
            for (int v = 1; v <= n; v++) {
                int src[3] = {u, u, u}, dst[3] = {u, u, u};
                /* the two in-plane axes take u and v in increasing axis order */
                int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
                src[a1] = dst[a1] = u;
                src[a2] = dst[a2] = v;
                src[axis] = 1;
                dst[axis] = n + 1;
                halo_field_set(me, comp[c], halo_index(n, dst[0], dst[1], dst[2]),
                               halo_field_get(up, comp[c], halo_index(n, src[0], src[1], src[2])));
            }
}

static int run(size_t esize)
{
    const int n = 6, dims[3] = {1, 1, 2};
    const int low[3] = {0, 0, 0}, high[3] = {0, 0, 1};
    halo_field me, up;
    CHECK(halo_field_alloc(&me, n, esize, low, dims) == 0);
    CHECK(halo_field_alloc(&up, n, esize, high, dims) == 0);

    /* Values are small integers, exact in f32, and differ between iterations and components. */
    double v = halo_expected(&me, HALO_EY, 3, 4, 5, 7);
    CHECK(v >= 1.0 && v <= 1048577.0 && v == floor(v));
    CHECK(halo_expected(&me, HALO_EY, 3, 4, 5, 8) != v || halo_expected(&me, HALO_EY, 3, 4, 5, 9) != v);
    CHECK(halo_expected(&me, HALO_EX, 3, 4, 5, 7) != v || halo_expected(&me, HALO_EZ, 3, 4, 5, 7) != v);
    /* Our ghost n+1 along z is the upper rank's first interior cell: same global cell, same value. */
    CHECK(halo_expected(&me, HALO_EX, 2, 3, n + 1, 4) == halo_expected(&up, HALO_EX, 2, 3, 1, 4));

    const int none[3][2] = {{0, 0}, {0, 0}, {0, 0}};
    const int z_upper[3][2] = {{0, 0}, {0, 0}, {0, 1}};
    halo_fill_send_planes(&me, 4);
    halo_fill_send_planes(&up, 4);
    halo_clear_ghosts(&me);
    CHECK(halo_validate_ghosts(&me, none, 4) == 0);
    CHECK(halo_validate_ghosts(&me, z_upper, 4) == 2u * n * n); /* nothing arrived yet: every cell wrong */

    receive_from_upper(&me, &up, 2);
    CHECK(halo_validate_ghosts(&me, z_upper, 4) == 0);
    CHECK(halo_validate_ghosts(&me, z_upper, 5) > 0); /* stale data from an older iteration is caught */
    CHECK(halo_validate_ghosts(&me, none, 4) > 0);    /* data where no neighbour exists is caught */

    halo_field_set(&me, HALO_EY, halo_index(n, 2, 2, n + 1), 12345.5); /* one corrupted cell */
    CHECK(halo_validate_ghosts(&me, z_upper, 4) == 1);

    halo_field_free(&me);
    halo_field_free(&up);
    return 0;
}

int main(void)
{
    int c[2];
    halo_tangential(0, HALO_EX, c);
    CHECK(c[0] == HALO_EY && c[1] == HALO_EZ);
    halo_tangential(1, HALO_HX, c);
    CHECK(c[0] == HALO_HX && c[1] == HALO_HZ);
    halo_tangential(2, HALO_EX, c);
    CHECK(c[0] == HALO_EX && c[1] == HALO_EY);
    run(4);
    run(8);
    CHECK_DONE();
}
