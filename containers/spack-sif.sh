#!/usr/bin/env bash
# Builds the Spack-built Apptainer image from containers/yeebench-spack.def (generated from spack.yaml)
# and runs it for real, offline but for the Debian mirror:
#   containers/spack-sif.sh [--cold] [--build-only]
#   1. the Debian 12 minbase root filesystem (containers/base-tarball.sh, cached), unpacked for the build;
#   2. hand-ins: Spack and its package release (spack/find-spack.sh: yours, else the lab's), the lab's
#      source mirror, wheels of the yeebench package, ReFrame and clingo (pip, on this host), and, unless
#      --cold, what `make test-spack` built here pushed to a build cache plus its spack.lock;
#   3. apptainer build (--fakeroot where root lacks capabilities), the image's %test;
#   4. the ReFrame smoke set inside the SIF on the image's Spack view (`apptainer run SIF smoke`);
#   5. native vs container through ReFrame's Apptainer platform (hybrid: mpirun ... apptainer exec);
#   6. build/containers/spack-sif/ci-apptainer-spack.json: size, sha256, baked spack.lock sha256, timings,
#      smoke result, ratios.
# --cold: no build cache and no spack.lock (Spack concretises and builds in the image, as a user would).
# --build-only: steps 1-3, then stop. The SIF records what it was built from (SIF.inputs: spack.lock, the .def
# and the checkout's files); a later run whose inputs are the same uses it rather than building it again.
# Skips (exit 0, reason printed) without apptainer, without Spack, or where --fakeroot cannot be set up.
# Environment: OUT (build/containers/spack-sif), PY (.venv/bin/python), YEEBENCH_CACHE, YEEBENCH_LAB,
# YEEBENCH_PREFIX (the host build the comparison runs natively).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
cold=0
build_only=0
for arg in "$@"; do
    case "$arg" in
        -h|--help) sed -n '2,19s/^# \{0,1\}//p' "$0"; exit 0 ;;
        --cold) cold=1 ;;
        --build-only) build_only=1 ;;
        *) echo "spack-sif: unknown argument $arg (see --help)" >&2; exit 2 ;;
    esac
done
out=${OUT:-$REPO/build/containers/spack-sif}
py=${PY:-$REPO/.venv/bin/python}
VENV=${VENV:-.venv}
def=containers/yeebench-spack.def
sif=$out/yeebench-spack.sif
log() { echo "spack-sif: $*"; }
fail() { log "error: $*"; exit 1; }
# A skip leaves its reason beside the image's path, for the stages that would run the image.
skip() { log "SKIPPED: $*"; { echo "$*" > "$sif.skipped"; } 2> /dev/null || true; exit 0; }
[ -x "$py" ] || fail "$py is missing (run make venv)"
mkdir -p "$out"
rm -f "$sif.skipped" 2> /dev/null || true
rm -f "$out/ci-apptainer-spack.json"    # a failed run records nothing
t_start=$(date +%s)

# --- apptainer, and how this user may build a .def with %post -------------------------------------------
rc=0; app=$(bash containers/apptainer.sh) || rc=$?
[ "$rc" -eq 3 ] && skip "no apptainer on PATH and no lab copy (see above)"
[ "$rc" -eq 0 ] || exit 1
read -r -a exec_opts <<< "$("$py" -c 'import sys; sys.path.insert(0, "reframe")
from yeebench import apptainer; print(" ".join(apptainer.exec_options()))')"
build_opts=()
if [ "$(id -u)" -ne 0 ] || [ ${#exec_opts[@]} -gt 0 ]; then
    # Not root, or root without every capability: %post runs in a user namespace that maps root.
    build_opts=(--fakeroot)
    user=$(id -un)
    if ! grep -q "^$user:" /etc/subuid 2>/dev/null || ! grep -q "^$user:" /etc/subgid 2>/dev/null; then
        if [ "${CI:-}" = true ] && [ "$(id -u)" -eq 0 ]; then
            log "CI: mapping $user's subordinate ids for apptainer build --fakeroot (/etc/subuid, /etc/subgid)"
            grep -q "^$user:" /etc/subuid 2>/dev/null || echo "$user:100000:65536" >> /etc/subuid
            grep -q "^$user:" /etc/subgid 2>/dev/null || echo "$user:100000:65536" >> /etc/subgid
        else
            skip "apptainer build --fakeroot needs subordinate ids for $user: echo $user:100000:65536 | sudo tee -a /etc/subuid /etc/subgid"
        fi
    fi
fi
log "$("$app" --version) ($app), build options: ${build_opts[*]:-none}, exec options: ${exec_opts[*]:-none}"

# --- Spack and its package release (the user's own first, else the lab's; spack/find-spack.sh) ----------
STATE=${SPACK_STATE:-$REPO/build/spack}
source spack/find-spack.sh
[ -n "$SPACK_HOME" ] || skip "no Spack (looked at $SPACK_LOOKED_AT)"
binds=(--bind "$SPACK_HOME:/mnt/spack:ro")
if [ -n "${YEEBENCH_SPACK_PACKAGES:-}" ]; then
    packages_root=${YEEBENCH_SPACK_PACKAGES%/repos/spack_repo/builtin}
    [ -d "$packages_root/repos/spack_repo/builtin" ] || fail "$YEEBENCH_SPACK_PACKAGES is not a spack-packages checkout's repos/spack_repo/builtin"
    binds+=(--bind "$packages_root:/mnt/spack-packages:ro")
fi
build_args=(--build-arg checksum=true)
if [ -n "$YEEBENCH_SPACK_MIRROR" ]; then
    binds+=(--bind "$YEEBENCH_SPACK_MIRROR:/mnt/mirror:ro")
    # The lab re-packed the OSU release tarballs: they cannot match the recipe's sha256 (test machines only).
    build_args=(--build-arg checksum=false)
fi
log "$SPACK_ORIGIN${YEEBENCH_SPACK_MIRROR:+; source mirror $YEEBENCH_SPACK_MIRROR (checksums off)}"

# What the image is made of: spack.lock, the recipe and the checkout's files (the yeebench wheel), cold or not.
# No git checkout: no record, so the image is always built.
inputs=$({ cat spack.lock "$def" 2> /dev/null; echo "cold=$cold"; git ls-files -s && git diff HEAD; } \
    | sha256sum | cut -d' ' -f1) && git rev-parse --git-dir > /dev/null 2>&1 || inputs=
rootfs=$out/base-rootfs
. containers/lib/remove-tree.sh
cleanup() { remove_tree "$rootfs"; }
trap cleanup EXIT
reuse=0
[ -n "$inputs" ] && [ -f "$sif" ] && [ "$(cat "$sif.inputs" 2> /dev/null)" = "$inputs" ] && reuse=1
t_base=$t_start; t_handin=$t_start; t_build=$t_start
if [ "$reuse" = 1 ]; then
    log "$sif was built from this spack.lock, recipe and checkout: using it"
else    # steps 1-3, left unindented: they are the script's main line
rm -f "$sif.inputs"

# --- 1. base root filesystem -------------------------------------------------------------------------
base_tar=$(bash containers/base-tarball.sh "$out/debootstrap.log") || exit 1   # it names the file and the step
tar -tf "$base_tar" ./etc/debian_version > /dev/null 2>&1 || fail "$base_tar: not a root-filesystem tarball (no ./etc/debian_version); remove it to have it made again"
remove_tree "$rootfs" && mkdir -p "$rootfs"
tar -C "$rootfs" -xf "$base_tar"
t_base=$(date +%s)

# --- 2. hand-ins: wheels, build cache and spack.lock -------------------------------------------------
handin=$out/handin
mkdir -p "$handin"
rm -rf "$handin/wheels" "$handin/spack.lock"
clingo=$("$py" -c 'import tomllib; deps = tomllib.load(open("reframe/pyproject.toml", "rb"))["project"]["optional-dependencies"]["test"]
print(next(d for d in deps if d.startswith("clingo")))')
log "wheels: yeebench, its dependencies (reframe/constraints.txt) and $clingo (pip, log: $out/pip-wheel.log)"
"$py" -m pip wheel --quiet --disable-pip-version-check -c reframe/constraints.txt -w "$handin/wheels" ./reframe "$clingo" \
    > "$out/pip-wheel.log" 2>&1 \
    || { tail -5 "$out/pip-wheel.log"; fail "pip wheel failed, see $out/pip-wheel.log"; }
if [ "$cold" = 1 ]; then
    rm -rf "$handin/buildcache"
    log "cold build: no build cache, no spack.lock (Spack concretises and builds inside the image build)"
else
    ready=$STATE/ready
    [ -f spack.lock ] && [ "$(cat "$ready" 2>/dev/null)" = "$(sha256sum spack.lock | cut -d' ' -f1)" ] \
        || fail "no tested Spack environment here (spack.lock and $ready disagree): run make test-spack first, or pass --cold"
    source spack/isolate.sh
    set +u; source "$SPACK_HOME/share/spack/setup-env.sh"; set -u
    log "spack buildcache push of what make test-spack installed (log: $out/buildcache.log)"
    spack -e . buildcache push --unsigned --update-index --with-build-dependencies "$handin/buildcache" \
        > "$out/buildcache.log" 2>&1 || { tail -5 "$out/buildcache.log"; fail "spack buildcache push failed, see $out/buildcache.log"; }
    cp spack.lock "$handin/spack.lock"
fi
binds+=(--bind "$handin:/mnt/yeebench:ro")
t_handin=$(date +%s)

# --- 3. apptainer build and %test --------------------------------------------------------------------
options=("${build_opts[@]}" --notest --build-arg "base=$rootfs" "${build_args[@]}" "${binds[@]}")
log "apptainer build ${options[*]} $sif $def (log: $out/apptainer-build.log)"
# Both stages unpack in APPTAINER_TMPDIR: 2.7 GB at the peak of a build-cache build measured on a
# 2-core Debian 12 node; refuse up front below 4 GiB rather than stop half-way on a full disk.
SIF_BUILD_NEED_MIB=${SIF_BUILD_NEED_MIB:-4096} \
    bash containers/sif-build.sh "$app" "$def" "$sif" "$out/apptainer-build.log" "${options[@]}" || exit 1   # one line
t_build=$(date +%s)
fi
"$app" test "${exec_opts[@]}" "$sif" > "$out/apptainer-test.log" 2>&1 \
    || { tail -5 "$out/apptainer-test.log"; rm -f "$sif.inputs"; fail "$sif: the image's %test failed (log: $out/apptainer-test.log)"; }
size=$(stat -c %s "$sif")
sha=$(sha256sum "$sif" | cut -d' ' -f1)
lock_sha=$("$app" exec "${exec_opts[@]}" "$sif" sha256sum /opt/spack-environment/spack.lock | cut -d' ' -f1) \
    || fail "$sif: no /opt/spack-environment/spack.lock in the image (step: reading the baked spack.lock)"
t_test=$(date +%s)
log "built $sif in $((t_build - t_handin)) s: $((size / 1000000)) MB, sha256 $sha, spack.lock sha256 $lock_sha"
[ -n "$inputs" ] && echo "$inputs" > "$sif.inputs"
[ "$build_only" = 1 ] && { log "built (--build-only) in $((t_test - t_start)) s"; exit 0; }

# --- 4. the smoke set inside the SIF, on the image's Spack view -------------------------------------------
rundir=$out/smoke
rm -rf "$rundir" && mkdir -p "$rundir"
log "smoke set inside the SIF: apptainer run ${exec_opts[*]} $sif smoke (log: $out/smoke.log)"
timeout 600 "$app" run "${exec_opts[@]}" --cleanenv --env "YEEBENCH_RUN_DIR=$rundir" "$sif" smoke > "$out/smoke.log" 2>&1 \
    || { grep -E 'FAIL|PASSED|FAILED|rror' "$out/smoke.log" | tail -15; fail "smoke set inside $sif failed (log: $out/smoke.log)"; }
sed 's/\x1b\[[0-9;]*m//g' "$out/smoke.log" | grep -E '^\[ +(PASSED|FAILED) +\]' || fail "no ReFrame summary in $out/smoke.log"
t_smoke=$(date +%s)

# --- 5. native vs container, hybrid MPI, through ReFrame's Apptainer platform ------------------------------
log "ReFrame: native vs container on Apptainer (hybrid: mpirun ... apptainer exec) (log: $out/reframe.log)"
rc=0
YEEBENCH_PREFIX=${YEEBENCH_PREFIX:-$REPO/build/install} "$REPO/$VENV/bin/reframe" -C reframe/config/settings.py \
    -c reframe/yeebench/checks/containers/container.py --prefix "$out/reframe" --report-file "$out/reframe-report.json" \
    --exec-policy=serial -S platform=Apptainer -S "image=$sif" -r > "$out/reframe.log" 2>&1 || rc=$?
sed 's/\x1b\[[0-9;]*m//g' "$out/reframe.log" | grep -E '^\[ +(OK|FAIL) +\]|^\[  PASSED  \]|^\[  FAILED  \]' || true
[ "$rc" -eq 0 ] || { tail -30 "$out/reframe.log"; fail "native vs container on $sif failed (rc $rc)"; }
t_compare=$(date +%s)

"$py" containers/ci_summary.py --out "$out/ci-apptainer-spack.json" --image "$sif" --size "$size" --sha256 "$sha" \
    --spack-lock-sha256 "$lock_sha" --runtime "$("$app" --version) ($([ "$cold" = 1 ] && echo cold || echo build cache))" \
    --timing base=$((t_base - t_start)) --timing handin=$((t_handin - t_base)) --timing build=$((t_build - t_handin)) \
    --timing test=$((t_test - t_build)) --timing smoke=$((t_smoke - t_test)) \
    --timing native_vs_container=$((t_compare - t_smoke)) --timing total=$((t_compare - t_start)) \
    --smoke-log "$out/smoke.log" --reframe-report "$out/reframe-report.json" || fail "see the summary above"
log "ok in $((t_compare - t_start)) s ($(uptime | sed 's/.*load/load/'))"
