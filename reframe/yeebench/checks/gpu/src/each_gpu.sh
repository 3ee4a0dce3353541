#!/usr/bin/env bash
# Usage: each_gpu.sh COUNT PROGRAM [ARGS...]
# Runs PROGRAM once on each of the node's first COUNT GPUs (one at a time, CUDA_VISIBLE_DEVICES set to
# that GPU alone), prefixing every output line with "gpuN " so the check can judge each GPU. Where the
# scheduler already restricted the job to some GPUs (CUDA_VISIBLE_DEVICES="2,3"), N indexes that list.
# Exit status: the worst of the runs.
set -u
count=$1; shift
IFS=, read -r -a visible <<< "${CUDA_VISIBLE_DEVICES:-}"
worst=0
for ((n = 0; n < count; n++)); do
    device=${visible[n]:-$n}
    CUDA_VISIBLE_DEVICES=$device "$@" 2>&1 | sed "s/^/gpu$n /"
    status=${PIPESTATUS[0]}
    ((status > worst)) && worst=$status
done
exit "$worst"
