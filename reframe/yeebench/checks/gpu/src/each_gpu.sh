#!/usr/bin/env bash
# Usage: each_gpu.sh COUNT PROGRAM [ARGS...]
# Runs PROGRAM once on each of this node's first COUNT GPUs (one at a time, CUDA_VISIBLE_DEVICES set to
# that GPU alone), prefixing every output line with "HOST gpuN " so the check can judge each GPU of each
# node (the job runs this script once per node). Where the scheduler already restricted the job to some
# GPUs (CUDA_VISIBLE_DEVICES="2,3"), N indexes that list. COUNT "all": one run seeing every GPU the job
# was given, its lines prefixed "HOST node " (the device query).
# Exit status: the worst of the runs.
set -u
count=$1; shift
host=$(hostname)
if [[ $count == all ]]; then
    "$@" 2>&1 | sed "s/^/$host node /"
    exit "${PIPESTATUS[0]}"
fi
IFS=, read -r -a visible <<< "${CUDA_VISIBLE_DEVICES:-}"
worst=0
for ((n = 0; n < count; n++)); do
    device=${visible[n]:-$n}
    CUDA_VISIBLE_DEVICES=$device "$@" 2>&1 | sed "s/^/$host gpu$n /"
    status=${PIPESTATUS[0]}
    ((status > worst)) && worst=$status
done
exit "$worst"
