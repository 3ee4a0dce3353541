#!/usr/bin/env bash
# Apptainer stage of containers/ci-build.sh, run while its private dockerd ($DOCKER_HOST) holds $IMAGE:
#   1. apptainer from PATH, else the lab's unpacked into build/ (containers/apptainer.sh); neither: exit 3;
#   2. `apptainer build yeebench.sif containers/yeebench.def` (Bootstrap: docker-daemon), then its %test;
#   3. the ReFrame smoke set inside the SIF (`apptainer run yeebench.sif smoke`);
#   4. native vs container through ReFrame's Apptainer platform: the host's mpirun starts one
#      `apptainer exec` per rank (hybrid MPI), solver Mcells/s and NetPIPE latency/bandwidth ratios;
#   5. build/containers/ci-apptainer.json: SIF size, sha256, timings, smoke result, ratios.
# The SIF records the Docker image id it was built from (SIF.image-id): while the image is the same, a later
# run uses it rather than building it again. APPTAINER_CI_STEPS=build stops after step 2.
# Environment: IMAGE (yeebench:latest), OUT (build/containers), PY (.venv/bin/python), APPTAINER_CI_STEPS.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
out=${OUT:-$repo/build/containers}
image=${IMAGE:-yeebench:latest}
py=${PY:-$repo/.venv/bin/python}
steps=${APPTAINER_CI_STEPS:-all}
log() { echo "apptainer-ci: $*"; }
fail() { log "error: $*"; exit 1; }
case $steps in all|build) ;; *) log "error: APPTAINER_CI_STEPS=$steps: expected all or build"; exit 2 ;; esac
mkdir -p "$out"

rc=0; app=$(bash containers/apptainer.sh) || rc=$?
[ "$rc" -eq 3 ] && { log "SKIPPED: no apptainer on PATH and no lab copy (see above)"; exit 3; }
[ "$rc" -eq 0 ] || exit 1
# As root without every capability (CAP_SYS_RESOURCE in some containers) `apptainer exec` needs --drop-caps.
read -r -a opts <<< "$("$py" -c 'import sys; sys.path.insert(0, "reframe")
from yeebench import apptainer; print(" ".join(apptainer.exec_options()))')"
version=$("$app" --version)
log "$version ($app)${opts[*]:+, exec options: ${opts[*]}}"

# --- 2. the SIF -----------------------------------------------------------------------------------------
def=containers/yeebench.def
if [ "$image" != yeebench:latest ]; then        # the recipe names yeebench:latest; another tag gets a copy
    def=$out/yeebench.def && sed "s|^From: yeebench:latest$|From: $image|" containers/yeebench.def > "$def"
fi
sif=$out/yeebench.sif
t0=$(date +%s)
image_id=$(docker image inspect -f '{{.Id}}' "$image") || fail "no Docker image $image (DOCKER_HOST=${DOCKER_HOST:-default})"
if [ -f "$sif" ] && [ "$(cat "$sif.image-id" 2> /dev/null)" = "$image_id" ]; then
    log "$sif was built from this image ($image_id): using it"
else
    # The new image replaces the old one by a rename: a stage running the old one keeps reading it.
    rm -f "$sif.image-id" "$sif.tmp"
    log "apptainer build $sif $def (log: $out/apptainer-build.log)"
    # --disable-cache: each build's layers differ, and the user's cache (~/.apptainer/cache) would keep
    # every one of them (about 210 MB a build).
    # gzip at level 1: see SIF_MKSQUASHFS_ARGS in containers/sif-build.sh
    squash=${SIF_MKSQUASHFS_ARGS--comp gzip -Xcompression-level 1}
    "$app" build --notest --disable-cache ${squash:+--mksquashfs-args "$squash"} "$sif.tmp" "$def" \
        > "$out/apptainer-build.log" 2>&1 \
        || { tail -5 "$out/apptainer-build.log"; rm -f "$sif.tmp"; fail "$def: apptainer build failed (bootstrap docker-daemon:$image)"; }
    mv -f "$sif.tmp" "$sif"
    "$app" test "${opts[@]}" "$sif" > "$out/apptainer-test.log" 2>&1 \
        || { tail -5 "$out/apptainer-test.log"; rm -f "$sif"; fail "$sif: the image's %test failed (log $out/apptainer-test.log)"; }
    echo "$image_id" > "$sif.image-id"
fi
t1=$(date +%s)
size=$(stat -c %s "$sif")
sha=$(sha256sum "$sif" | cut -d' ' -f1)
log "built $sif in $((t1 - t0)) s: $((size / 1000000)) MB, sha256 $sha"
[ "$steps" = build ] && exit 0

# --- 3. the smoke set inside the SIF ---------------------------------------------------------------------
rundir=$out/apptainer-smoke
rm -rf "$rundir" && mkdir -p "$rundir"
log "smoke set inside the SIF: apptainer run ${opts[*]} $sif smoke (log: $out/apptainer-smoke.log)"
timeout 600 "$app" run "${opts[@]}" --cleanenv --env "YEEBENCH_RUN_DIR=$rundir" "$sif" smoke \
    > "$out/apptainer-smoke.log" 2>&1 \
    || { grep -E 'FAIL|PASSED|FAILED|rror' "$out/apptainer-smoke.log" | tail -15; fail "smoke set inside $sif failed"; }
sed 's/\x1b\[[0-9;]*m//g' "$out/apptainer-smoke.log" | grep -E '^\[ +(PASSED|FAILED) +\]' \
    || fail "no ReFrame summary in $out/apptainer-smoke.log"
t2=$(date +%s)

# --- 4. native vs container, hybrid MPI, through ReFrame's Apptainer platform ------------------------------
log "ReFrame: native vs container on Apptainer (hybrid: mpirun ... apptainer exec) (log: $out/reframe-apptainer.log)"
rc=0
"$repo/.venv/bin/reframe" -C reframe/config/settings.py -c reframe/yeebench/checks/containers/container.py \
    --prefix "$out/reframe-apptainer" --report-file "$out/reframe-apptainer.json" --exec-policy=serial \
    -S platform=Apptainer -S "image=$sif" -r > "$out/reframe-apptainer.log" 2>&1 || rc=$?
grep -E '^\[ +(OK|FAIL) +\]|^\[  PASSED  \]|^\[  FAILED  \]' "$out/reframe-apptainer.log" || true
[ "$rc" -eq 0 ] || { tail -30 "$out/reframe-apptainer.log"; fail "Apptainer container check failed (rc $rc)"; }
t3=$(date +%s)

"$py" containers/ci_summary.py --out "$out/ci-apptainer.json" --image "$sif" --size "$size" --sha256 "$sha" \
    --runtime "$version" --timing build=$((t1 - t0)) --timing smoke=$((t2 - t1)) \
    --timing native_vs_container=$((t3 - t2)) --smoke-log "$out/apptainer-smoke.log" \
    --reframe-report "$out/reframe-apptainer.json" || fail "see the summary above"
log "ok in $((t3 - t0)) s"
