/* The rank a launcher gave this process, known before MPI_Init, so that --help and argument errors are
 * answered at once, by one process only, without starting MPI. */
#ifndef MB_LAUNCHER_H
#define MB_LAUNCHER_H

/* From OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID or MV2_COMM_WORLD_RANK; 0 when none is set. */
int mb_launcher_rank(void);

#endif
