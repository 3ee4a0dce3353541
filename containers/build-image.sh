#!/usr/bin/env bash
# Builds the yeebench Docker image with the Docker (or Podman) engine you already have:
#   containers/build-image.sh [IMAGE]            # default yeebench:latest; engine from $ENGINE (docker|podman)
# Steps: a wheelhouse of the Python package and its dependencies (reframe/constraints.txt) (pip, on this host), the build
# context (containers/build-context.sh), then `docker build -f containers/Dockerfile`.
# Environment: ENGINE (docker), PY (python with pip; default .venv/bin/python), JOBS (2),
# YEE_MARCH (empty = portable; `native` for an image that only runs on CPUs like this one),
# OUT (build/containers: wheelhouse and logs), OSU_TARBALL (an osu-micro-benchmarks-<v>.tar.gz release
# to build into the image under /opt/yeebench/osu; none: the image has no OSU and the OSU checks skip),
# BUILD_STAGE_IMAGE (also tag the Dockerfile's `build` stage, compilers included, under this name).
set -euo pipefail
cd "$(dirname "$0")/.."
image=${1:-yeebench:latest}
engine=${ENGINE:-docker}
py=${PY:-.venv/bin/python}
out=${OUT:-build/containers}
case "$image" in -h|--help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
command -v "$engine" > /dev/null || { echo "build-image: $engine not found (ENGINE=docker|podman)" >&2; exit 2; }
[ -x "$py" ] || { echo "build-image: $py is missing (make venv, or set PY)" >&2; exit 2; }
# Ask the engine first: without a daemon every later step (wheels, context) is wasted work.
"$engine" info > /dev/null 2>&1 || {
    echo "build-image: no $engine daemon answers (DOCKER_HOST=${DOCKER_HOST:-default}); start one," \
         "or run containers/ci-build.sh, which starts a private one" >&2; exit 2; }
mkdir -p "$out"

# Wheelhouse: the yeebench wheel (with the solver and probe sources, references and topology files it ships;
# reframe/setup.py builds outside the work tree) and the exact versions of reframe/constraints.txt.
# SOURCE_DATE_EPOCH: the same sources give the same wheel bytes, so an unchanged checkout is a layer-cache
# hit (and keeps the image id, from which the SIF is derived); without it each wheel carries its build time.
wheels=$out/wheels
rm -rf "$wheels" && mkdir -p "$wheels"
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-315532800} "$py" -m pip wheel --quiet --disable-pip-version-check -c reframe/constraints.txt -w "$wheels" ./reframe \
    > "$out/pip-wheel.log" 2>&1 \
    || { echo "build-image: pip wheel failed, see $out/pip-wheel.log" >&2; tail -5 "$out/pip-wheel.log" >&2; exit 1; }

bash containers/build-context.sh "$wheels" ${OSU_TARBALL:+"$OSU_TARBALL"} > "$out/context.tar"
build_opts=(--network host --build-arg JOBS="${JOBS:-2}" --build-arg YEE_MARCH="${YEE_MARCH:-}")
t0=$(date +%s)
DOCKER_BUILDKIT=0 "$engine" build "${build_opts[@]}" -t "$image" -f containers/Dockerfile - \
    < "$out/context.tar" > "$out/docker-build.log" 2>&1 \
    || { echo "build-image: $engine build failed; last lines:" >&2; tail -25 "$out/docker-build.log" >&2; exit 1; }
# The same context and arguments: every step of the stage is a cache hit of the build above.
if [ -n "${BUILD_STAGE_IMAGE:-}" ]; then
    DOCKER_BUILDKIT=0 "$engine" build "${build_opts[@]}" --target build -t "$BUILD_STAGE_IMAGE" \
        -f containers/Dockerfile - < "$out/context.tar" >> "$out/docker-build.log" 2>&1 \
        || { echo "build-image: $engine build --target build failed; last lines:" >&2
             tail -25 "$out/docker-build.log" >&2; exit 1; }
fi
rm -f "$out/context.tar"
echo "build-image: built $image with $engine in $(( $(date +%s) - t0 )) s (log: $out/docker-build.log)"
