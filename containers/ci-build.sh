#!/usr/bin/env bash
# Builds the yeebench Docker image on this machine and runs it for real, with nothing but the Debian mirror
# and PyPI reachable:
#   1. installs docker.io, debootstrap and charliecloud if missing (as root);
#   2. makes the debian:bookworm base image with `debootstrap --variant=minbase` (the tarball is cached in
#      $YEEBENCH_CACHE, default /var/cache/yeebench, so later runs skip this step);
#   3. starts a private dockerd (own socket, data and exec roots, no bridge, no iptables);
#   4. builds containers/Dockerfile, runs the ReFrame smoke set inside the container (solver, NetPIPE, probes),
#      then the native-vs-container ReFrame check (reframe/yeebench/checks/containers/container.py) when ReFrame is set up,
#      and Charliecloud when it is installed (YEEBENCH_CHARLIECLOUD=0 skips it);
#   5. stops the dockerd it started, by PID, on any exit, and removes its own state directory.
# Two runs on one machine: each has its own state directory (/run/yeebench-docker.XXXXXX: socket, pidfile,
# exec root); the cached data root is held with a lock, and a second run prints the holder and waits.
# Figures go to build/containers/ci-build.json. Skips (exit 0, reason printed) only where containers
# cannot run: not root, or no overlay filesystem / cgroups.
# CI_BUILD_STEPS=default-caps (make test-containers-default-caps): steps 1-4 up to the image (a cache hit
# after make test-containers), its `build` stage tagged too, then only containers/default-caps-run.sh:
# `make run` from this checkout in a default-capability container of that stage, deciding single-copy itself.
# CI_BUILD_STEPS=images (make containers-images): steps 1-4 up to the image, its `build` stage, and the
# Apptainer SIF derived from it (containers/apptainer-ci.sh build), running nothing: the builds that a later
# run of the other steps finds done (Docker's layer cache; the SIF kept while the image id is the same).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
cache=${YEEBENCH_CACHE:-/var/cache/yeebench}
out=$repo/build/containers
image=${YEEBENCH_IMAGE:-yeebench:latest}
py=${PY:-$repo/.venv/bin/python}
log() { echo "ci-build: $*"; }
steps=${CI_BUILD_STEPS:-all}
case $steps in all|default-caps|images) ;; *) log "error: CI_BUILD_STEPS=$steps: expected all, default-caps or images"; exit 2 ;; esac
state=          # this run's state directory, once made
sif_skipped=$out/yeebench.sif.skipped   # why no SIF was built, for the stages that would run it
[ "$steps" = default-caps ] && sif_skipped=$out/default-caps.skipped     # only the SIF's builders speak for it
# (best effort: a user who may not write build/ still gets the skip and its reason)
skip() { log "SKIPPED: $*"; { mkdir -p "$out" && echo "$*" > "$sif_skipped"; } 2> /dev/null || true; exit 0; }
rm -f "$sif_skipped" 2> /dev/null || true

[ "$(id -u)" -eq 0 ] || skip "needs root to start a private Docker daemon (run: sudo $0)"
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || skip "the kernel has no overlay filesystem"
grep -qw overlay /proc/filesystems || skip "the kernel has no overlay filesystem"
[ -d /sys/fs/cgroup ] && [ -n "$(ls -A /sys/fs/cgroup 2>/dev/null)" ] || skip "no cgroup filesystem mounted"
[ -x "$py" ] || { log "error: $py is missing (run make venv)"; exit 2; }

debs="docker.io debootstrap"
[ "${YEEBENCH_CHARLIECLOUD:-1}" = 1 ] && [ "$steps" = all ] && debs="$debs charliecloud"
DEB_PACKAGES="$debs" bash reframe/install-deps.sh
mkdir -p "$cache" "$out"
t_start=$(date +%s)

# --- 2. base image tarball (cached) -------------------------------------------------------------------
base_tar=$(YEEBENCH_CACHE="$cache" bash containers/base-tarball.sh "$out/debootstrap.log") || exit 1
log "base tarball: $base_tar"
t_base=$(date +%s)

# --- 3. private dockerd ------------------------------------------------------------------------------
dockerd_pid=
stop_dockerd() {
    local rc=$?
    if [ -n "$dockerd_pid" ] && kill -0 "$dockerd_pid" 2>/dev/null; then
        log "stopping dockerd (pid $dockerd_pid)"
        kill -TERM "$dockerd_pid"
        for _ in $(seq 1 30); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 1; done
        kill -0 "$dockerd_pid" 2>/dev/null && { log "dockerd did not stop, killing it"; kill -KILL "$dockerd_pid"; }
    fi
    # Only our own state directory (socket, pidfile, exec root): another run's is never touched. dockerd
    # leaves its network namespace mounted in the exec root (exec/netns/default): unmount what is below it.
    if [ -n "$state" ] && [ -f "$state/owner" ]; then
        remove_tree "$state"
    fi
    exit $rc
}
trap stop_dockerd EXIT
trap 'exit 130' INT TERM

. containers/lib/run-state.sh
. containers/lib/remove-tree.sh
# Docker's data root cannot be shared by two daemons: wait for a run that holds it (up to 30 min).
mkdir -p "$cache/docker-data"
hold_lock "$cache/docker-data" 1800 "the Docker layer cache $cache/docker-data" || exit 1
state=$(new_state_dir /run/yeebench-docker) || { log "error: cannot create a state directory in /run"; exit 1; }
export DOCKER_HOST=unix://$state/docker.sock
dockerd --bridge=none --iptables=false --ip6tables=false --ip-masq=false --storage-driver overlay2 \
    --default-ulimit nofile=20000:20000 --default-ulimit nproc=4096:4096 \
    -H "$DOCKER_HOST" --data-root "$cache/docker-data" --exec-root "$state/exec" \
    --pidfile "$state/docker.pid" > "$out/dockerd.log" 2>&1 &
dockerd_pid=$!
for _ in $(seq 1 60); do
    docker version > /dev/null 2>&1 && break
    kill -0 "$dockerd_pid" 2>/dev/null || { log "error: dockerd exited, see $out/dockerd.log"; tail -5 "$out/dockerd.log"; exit 1; }
    sleep 1
done
docker version > /dev/null || { log "error: dockerd did not answer within 60 s"; exit 1; }
log "dockerd pid $dockerd_pid, DOCKER_HOST=$DOCKER_HOST"

# The layer store keeps the tagged images (the cache of the next build) and nothing else: every build
# leaves the images it replaced untagged (about 1 GB each), and they would fill the disk within a day.
prune_untagged() {
    docker image prune -f > /dev/null || true
    log "Docker layer cache $cache/docker-data: $(du -sh "$cache/docker-data" 2>/dev/null | cut -f1)," \
        "$(df -Ph "$cache" | awk 'NR == 2 {print $4}') free"
}
prune_untagged

if ! docker image inspect debian:bookworm > /dev/null 2>&1; then
    docker import "$base_tar" debian:bookworm > /dev/null
fi

# --- 4. build (containers/build-image.sh: wheelhouse from PyPI on this host, context, docker build) -------
log "docker build $image (log: $out/docker-build.log)"
t0=$(date +%s)
# -march=native like the host build of `make build`, so native and container runs execute the same code.
# OSU from the user's OSU_TARBALL, else the lab's 7.4 release (checksum verified), else none (OSU checks skip).
osu_tarball=${OSU_TARBALL:-$(bash containers/lab-file.sh mirror/osu-micro-benchmarks/osu-micro-benchmarks-7.4.tar.gz || true)}
log "OSU Micro-Benchmarks in the image: ${osu_tarball:-none (no OSU_TARBALL, no lab)}"
build_stage=
[ "$steps" = all ] || build_stage=${YEEBENCH_BUILD_IMAGE:-yeebench-build:latest}
ENGINE=docker PY="$py" OUT="$out" JOBS="${JOBS:-2}" YEE_MARCH="${YEE_MARCH:-native}" OSU_TARBALL="$osu_tarball" \
    BUILD_STAGE_IMAGE="$build_stage" bash containers/build-image.sh "$image"
t1=$(date +%s)
size=$(docker image inspect -f '{{.Size}}' "$image")
prune_untagged
log "built $image in $((t1 - t0)) s, $((size / 1000000)) MB"

# The runtime image must not carry compilers.
if docker run --rm --network none --entrypoint /bin/sh "$image" -c 'command -v gcc || command -v cc || command -v c++ || command -v gfortran'; then
    log "error: the runtime image contains a compiler"; exit 1
fi

if [ "$steps" = images ]; then
    t_sif=$(date +%s)
    rc=0
    [ "${YEEBENCH_APPTAINER:-1}" = 1 ] && { IMAGE="$image" OUT="$out" PY="$py" APPTAINER_CI_STEPS=build \
        bash containers/apptainer-ci.sh || rc=$?; }
    case $rc in
        0) ;;
        3) log "Apptainer SIF not built (see above)"; echo "no apptainer (containers/apptainer.sh)" > "$sif_skipped" ;;
        *) log "error: Apptainer SIF build failed"; exit 1 ;;
    esac
    t_end=$(date +%s)
    log "images: ok in $((t_end - t_start)) s (base $((t_base - t_start)) s, build $((t1 - t0)) s, SIF $((t_end - t_sif)) s)"
    exit 0
fi

if [ "$steps" = default-caps ]; then
    t_run=$(date +%s)
    PY="$py" bash containers/default-caps-run.sh "$build_stage" "$out" || exit 1
    t_end=$(date +%s)
    log "default-caps: ok in $((t_end - t_start)) s (base $((t_base - t_start)) s, build $((t1 - t0)) s, run $((t_end - t_run)) s)"
    exit 0
fi

# --- run: the ReFrame smoke set inside the container, as the unprivileged user (solver, NetPIPE and probes
# with mpirun, on the image's own binaries) --------------------------------------------------------------
# Exactly the README's command: without CAP_SYS_NICE the NUMA policy cases skip, naming the refused call.
log "in-container smoke set: docker run --rm --shm-size=512m $image (log: $out/smoke.log)"
timeout 420 docker run --rm --shm-size=512m "$image" > "$out/smoke.log" 2>&1 \
    || { log "error: in-container smoke set failed"; grep -E 'FAIL|PASSED|FAILED|rror' "$out/smoke.log" | tail -15; exit 1; }
sed 's/\x1b\[[0-9;]*m//g' "$out/smoke.log" | grep -E '^\[ +(PASSED|FAILED) +\]' || { log "error: no ReFrame summary in $out/smoke.log"; exit 1; }
t2=$(date +%s)

# --- native vs container, through ReFrame ------------------------------------------------------------------
ratio_status=skipped
if [ -f reframe/config/settings.py ] && [ "${YEEBENCH_CONTAINER_CHECK:-1}" = 1 ]; then
    log "ReFrame: native vs container (reframe/yeebench/checks/containers/container.py)"
    rc=0
    YEEBENCH_PREFIX=${YEEBENCH_PREFIX:-$repo/build/install} "$repo/.venv/bin/reframe" \
        -C reframe/config/settings.py -c reframe/yeebench/checks/containers/container.py \
        --prefix "$out/reframe" --report-file "$out/reframe-report.json" \
        --exec-policy=serial -S "SolverRun.image=$image" -S "NetpipeRun.image=$image" \
        -r > "$out/reframe.log" 2>&1 || rc=$?
    grep -E '^\[ +(OK|FAIL) +\]|ratio|^\[  PASSED  \]|^\[  FAILED  \]' "$out/reframe.log" || true
    [ "$rc" -eq 0 ] || { log "error: container check failed (rc $rc), see $out/reframe.log"; tail -30 "$out/reframe.log"; exit 1; }
    grep -q 'PASSED' "$out/reframe.log" || { log "error: container check ran nothing, see $out/reframe.log"; exit 1; }
    ratio_status=passed
else
    log "ReFrame container check not run (reframe/config/settings.py missing or YEEBENCH_CONTAINER_CHECK=0)"
fi
t3=$(date +%s)

# --- Apptainer: SIF from this Docker image, the smoke set inside it, native vs container (hybrid MPI) ------
# containers/apptainer-ci.sh; skipped with the reason where no apptainer is found (PATH, then the lab).
t_app0=$(date +%s)
app_status=skipped
if [ "${YEEBENCH_APPTAINER:-1}" = 1 ]; then
    rc=0
    IMAGE="$image" OUT="$out" PY="$py" bash containers/apptainer-ci.sh || rc=$?
    case $rc in
        0) app_status=passed ;;
        3) log "Apptainer stage skipped (see above)"; echo "no apptainer (containers/apptainer.sh)" > "$sif_skipped" ;;
        *) log "error: Apptainer stage failed"; exit 1 ;;
    esac
else
    echo "YEEBENCH_APPTAINER=$YEEBENCH_APPTAINER" > "$sif_skipped"
fi
t_app1=$(date +%s)

# --- Charliecloud (unprivileged runtime), when installed -------------------------------------------------
ch_status=skipped
if [ "${YEEBENCH_CHARLIECLOUD:-1}" = 1 ] && command -v ch-run > /dev/null; then
    bash containers/charliecloud-run.sh "$image" "$out/charliecloud" | tee "$out/charliecloud.log"
    grep -q '^charliecloud: ok' "$out/charliecloud.log" && ch_status=passed || { log "error: Charliecloud run failed"; exit 1; }
    rm -rf "$out/charliecloud"     # the unpacked image (~760 MB)
fi
t4=$(date +%s)

check_report=()
[ "$ratio_status" = passed ] && check_report=(--reframe-report "$out/reframe-report.json")
"$py" containers/ci_summary.py --out "$out/ci-build.json" --image "$image" --size "$size" \
    --timing base=$((t_base - t_start)) --timing build=$((t1 - t0)) --timing smoke=$((t2 - t1)) \
    --timing native_vs_container=$((t3 - t2)) --timing apptainer=$((t_app1 - t_app0)) \
    --timing charliecloud=$((t4 - t_app1)) --timing total=$((t4 - t_start)) \
    --smoke-log "$out/smoke.log" "${check_report[@]}" --charliecloud "$ch_status" \
    || { log "error: see the summary above"; exit 1; }
log "ok in $((t4 - t_start)) s"
