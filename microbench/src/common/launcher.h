/* The rank a launcher gave this process, known before MPI_Init, so that --help and argument errors are
 * answered at once, by one process only, without starting MPI. */
#ifndef MB_LAUNCHER_H
#define MB_LAUNCHER_H

/* From OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID or MV2_COMM_WORLD_RANK; 0 when none is set. */
int mb_launcher_rank(void);

/* Option parsers return 0 = run, 1 = --help, 2 = bad argument (message in err), 3 = --version.
 * For 1..3 this prints the answer (under a launcher from its rank 0 only) and returns the exit
 * code (0 or 2); for 0 it returns -1 and the program goes on to start MPI. */
int mb_answer_before_mpi(const char *program, int parsed, const char *usage, const char *err);

#endif
