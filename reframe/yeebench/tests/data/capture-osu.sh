#!/usr/bin/env bash
# Re-record the OSU fixtures of one OSU install: capture-osu.sh PREFIX VERSION [OUT_DIR]
# (PREFIX as built by microbench/osu/build-osu.sh; 2 ranks, ob1+vader, small sizes, few iterations;
# ONLY=1 re-records just the -f, -T and barrier outputs).
set -euo pipefail
prefix=$1 version=$2 out=${3:-$(dirname "$0")/osu}
base=$prefix/libexec/osu-micro-benchmarks/mpi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
run() {   # run NAME BENCHMARK ARGS...: stdout only, as the checks read it
    local name=$1 bench=$2; shift 2
    local exe; exe=$(find "$base" -name "$bench" -type f | head -n 1)
    mpirun -np 2 --oversubscribe "$exe" "$@" > "$out/$version-$name.txt"
    echo "recorded $out/$version-$name.txt"
}
[ -n "${ONLY:-}" ] || for b in osu_latency osu_bw osu_bibw osu_mbw_mr; do run "$b" "$b" -m 65536 -i 100 -x 10; done
[ -n "${ONLY:-}" ] || for b in osu_allreduce osu_bcast osu_alltoall; do run "$b" "$b" -m 65536 -i 50 -x 5; done
run osu_allreduce-f osu_allreduce -f -m 4096 -i 50 -x 5
run osu_latency-T3 osu_latency -T mpi_char -T mpi_int -T mpi_float -m 4096 -i 50 -x 5
run osu_allreduce-T3 osu_allreduce -T mpi_char -T mpi_int -T mpi_float -m 4096 -i 50 -x 5
run osu_barrier osu_barrier -i 100 -x 10
run osu_barrier-f osu_barrier -f -i 100 -x 10
