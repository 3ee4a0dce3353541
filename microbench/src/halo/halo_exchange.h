/* The solver's halo pattern on a 3-D Cartesian communicator: once per half step, the two tangential
 * components of E go to the lower neighbour along each axis and those of H to the upper neighbour,
 * packed into contiguous buffers, with pre-posted MPI_Irecv and MPI_Isend. */
#ifndef MB_HALO_EXCHANGE_H
#define MB_HALO_EXCHANGE_H

#include <mpi.h>

#include "halo_field.h"

typedef struct {
    MPI_Comm cart;
    MPI_Datatype type;    /* MPI_FLOAT or MPI_DOUBLE */
    int lower[3], upper[3]; /* neighbour ranks, MPI_PROC_NULL at walls */
    size_t face_bytes;    /* one face, both tangential components */
    void *send[3], *recv[3];
    int corrupt_next;     /* test hook: damage the next received buffer before unpacking */
} halo_exchanger;

int halo_exchanger_init(halo_exchanger *x, MPI_Comm cart, const halo_field *h);
void halo_exchanger_free(halo_exchanger *x);
/* One full exchange: the E phase then the H phase. */
void halo_exchange(halo_exchanger *x, halo_field *h);
/* Bytes this rank sends in one halo_exchange. */
size_t halo_bytes_sent(const halo_exchanger *x);

#endif
