#include "launcher.h"

#include <stdio.h>
#include <stdlib.h>

#include "version.h"

int mb_launcher_rank(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_RANK"};
    for (unsigned i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return atoi(v);
    }
    return 0;
}

int mb_answer_before_mpi(const char *program, int parsed, const char *usage, const char *err)
{
    if (!parsed) return -1;
    if (mb_launcher_rank() == 0) {
        if (parsed == 1) fputs(usage, stdout);
        else if (parsed == 3) printf("%s %s\n", program, MB_VERSION);
        else fprintf(stderr, "%s: error: %s\n", program, err);
    }
    return parsed == 2 ? 2 : 0;
}
