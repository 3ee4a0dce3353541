#!/usr/bin/env bash
# The suite's smoke set inside a default-capability container: `docker run` with no --cap-add and
# Docker's default seccomp profile (process_vm_readv, i.e. single-copy CMA, and set_mempolicy refused),
# with the image's own single-copy settings removed, so every MPI case decides single-copy itself
# (yeebench.single_copy). Requires exit 0 and every case passed or skipped with its reason; prints each
# case's single-copy decision with the reason. Needs DOCKER_HOST (containers/ci-build.sh starts dockerd).
#   usage: containers/default-caps-smoke.sh IMAGE OUT_DIR     (log: OUT_DIR/default-caps.log)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 IMAGE OUT_DIR" >&2; exit 2; }
image=$1
out=$2
cd "$(dirname "$0")/.."
py=${PY:-.venv/bin/python}
runs=$out/default-caps
log=$out/default-caps.log
rm -rf --one-file-system "$runs"
mkdir -p "$runs"
chmod 0777 "$runs"      # the image runs as its unprivileged user (uid 1000)
echo "default-caps: docker run --rm --shm-size=512m $image, no --cap-add, image's single-copy settings unset"
t0=$(date +%s)
rc=0
timeout 600 docker run --rm --shm-size=512m -v "$runs:/yeebench-run" -e YEEBENCH_RUN_DIR=/yeebench-run \
    --entrypoint /usr/bin/env "$image" -u OMPI_MCA_btl_vader_single_copy_mechanism -u UCX_TLS \
    /opt/yeebench/bin/yeebench-entrypoint smoke > "$log" 2>&1 || rc=$?
t1=$(date +%s)
sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E 'single-copy|^\[ +(PASSED|FAILED) +\]' || true
echo "default-caps: smoke set exit $rc in $((t1 - t0)) s (log: $log)"
[ "$rc" -eq 0 ] || { echo "default-caps: error: the smoke set failed in a default container" >&2;
                     grep -E 'FAIL|rror' "$log" | tail -15 >&2; exit 1; }
"$py" containers/default_caps_verdict.py "$runs/report.json"
