/* MPI C bindings: every rank contributes rank+1; the sum over N ranks must be
 * N(N+1)/2 on every rank (MPI_Allreduce), and rank 0 lists the hosts seen. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, len;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char host[MPI_MAX_PROCESSOR_NAME] = {0};
    MPI_Get_processor_name(host, &len);

    long mine = rank + 1, total = 0, expected = (long)size * (size + 1) / 2;
    MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int ok = total == expected, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);

    static char hosts[4096][MPI_MAX_PROCESSOR_NAME];
    static char gathered[4096 * MPI_MAX_PROCESSOR_NAME];
    if (size <= 4096)
        MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, gathered, MPI_MAX_PROCESSOR_NAME,
                   MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int distinct = 0;
        for (int r = 0; r < size && size <= 4096; ++r) {
            const char *h = gathered + (size_t)r * MPI_MAX_PROCESSOR_NAME;
            int seen = 0;
            for (int d = 0; d < distinct && !seen; ++d)
                seen = strcmp(hosts[d], h) == 0;
            if (!seen)
                strcpy(hosts[distinct++], h);
        }
        printf("mpi c: ranks %d hosts %d sum %ld expected %ld %s\n", size, distinct, total,
               expected, all_ok ? "VALID" : "INVALID");
    }
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
