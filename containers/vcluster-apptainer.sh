#!/usr/bin/env bash
# Hybrid MPI with the Apptainer image across two nodes of the virtual Slurm cluster, through ReFrame:
#   containers/vcluster-apptainer.sh [SIF]        # default build/containers/yeebench.sif (containers/ci-build.sh)
#   OUT=build/containers/vcluster-apptainer-spack containers/vcluster-apptainer.sh build/containers/spack-sif/yeebench-spack.sif
# Brings up its own 2-node cluster (own state directory, unshaped links), runs reframe/yeebench/checks/containers/container.py
# on both vcluster partitions with one rank per node: `srun --mpi=pmix ... apptainer exec` and
# `mpirun ... apptainer exec` against the same launcher line on the host binaries, then takes the cluster
# down again in every case. Figures: $OUT/ci-vcluster-apptainer.json (OUT: build/containers/vcluster-apptainer).
# Skips (exit 0, reason printed) without apptainer, where the cluster cannot run, or without the SIF when its
# build recorded why it skipped (SIF.skipped); a missing SIF with no such record, or a file that is not a SIF, fails at once, naming it, before any cluster is started and with nothing recorded.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
case "${1:-}" in -h|--help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
sif=$(realpath -m "${1:-build/containers/yeebench.sif}")
out=${OUT:-$repo/build/containers/vcluster-apptainer}
py=${PY:-$repo/.venv/bin/python}
yb=$repo/.venv/bin/yeebench
log() { echo "vcluster-apptainer: $*"; }
# A missing image is skipped only where the stage that builds it recorded why it could not (SIF.skipped):
# an image that should exist and does not is a failure, not a skip.
if [ ! -f "$sif" ]; then
    [ -f "$sif.skipped" ] && { log "SKIPPED: no image $sif: its build was skipped: $(cat "$sif.skipped")"; exit 0; }
    log "error: no image $sif, and no record that its build was skipped ($sif.skipped): build it first" \
        "(make test-containers, or make test-containers-spack for the Spack image)"
    exit 1
fi
problem=$(PYTHONPATH=reframe "$py" -c 'import sys; from yeebench import apptainer; print(apptainer.sif_problem(sys.argv[1]) or "")' "$sif")
[ -z "$problem" ] || { log "error: before starting the cluster: $problem"; exit 1; }
rc=0; bash containers/apptainer.sh > /dev/null || rc=$?
[ "$rc" -eq 3 ] && { log "SKIPPED: no apptainer (see above)"; exit 0; }
[ "$rc" -eq 0 ] || exit 1
reason=$("$yb" vcluster preflight 2>&1) || { log "SKIPPED: $reason"; exit 0; }

rm -rf "$out" && mkdir -p "$out"
state=$(mktemp -d /run/yeebench-vcluster-apptainer.XXXXXX)
cluster_up=0
finish() {
    local rc=$?
    [ "$cluster_up" = 1 ] && "$yb" vcluster down --state-dir "$state" || true
    rmdir "$state" 2>/dev/null || true
    exit $rc
}
trap finish EXIT
trap 'exit 130' INT TERM
t0=$(date +%s)
"$yb" vcluster up --nodes 2 --state-dir "$state"
cluster_up=1
t1=$(date +%s)
log "ReFrame on vcluster (srun and mpirun partitions), one rank per node (log: $out/reframe.log)"
rc=0
YEEBENCH_RFM_DIR=$out/reframe YEEBENCH_PREFIX=${YEEBENCH_PREFIX:-$repo/build/install} \
    "$yb" vcluster exec --state-dir "$state" -- "$repo/.venv/bin/reframe" -C reframe/config/settings.py \
    -c reframe/yeebench/checks/containers/container.py --system vcluster --exec-policy=serial \
    -S platform=Apptainer -S "image=$sif" -S ranks_per_node=1 \
    --report-file "$out/report.json" -r > "$out/reframe.log" 2>&1 || rc=$?
t2=$(date +%s)
sed 's/\x1b\[[0-9;]*m//g' "$out/reframe.log" | grep -E '^\[ +(OK|FAIL|SKIP) +\]|^P: |^\[  PASSED  \]|^\[  FAILED  \]' || true
[ "$rc" -eq 0 ] || { tail -40 "$out/reframe.log"; log "error: the hybrid checks failed (rc $rc)"; exit 1; }
"$py" containers/ci_summary.py --out "$out/ci-vcluster-apptainer.json" --image "$sif" --size "$(stat -c %s "$sif")" \
    --sha256 "$(sha256sum "$sif" | cut -d' ' -f1)" --runtime "$("$(bash containers/apptainer.sh)" --version) (vcluster, 2 nodes)" \
    --timing up=$((t1 - t0)) --timing reframe=$((t2 - t1)) --reframe-report "$out/report.json" \
    || { log "error: see the summary above"; exit 1; }
log "ok"
