#!/usr/bin/env bash
# Writes the Docker build context for containers/Dockerfile to stdout as a tar stream:
# solver/, microbench/, reframe/ and containers/ from the work tree (sources only) plus the wheelhouse
# given as $1 (a folder of .whl files), which lands at containers/wheels inside the context, and an optional
# OSU Micro-Benchmarks release tarball $2, which lands in containers/osu/ (the image builds it when present).
# A tar stream instead of the repository root avoids sending .venv/, build/ and results to the daemon.
set -euo pipefail
wheels=${1:?usage: build-context.sh WHEELHOUSE_DIR > context.tar}
cd "$(dirname "$0")/.."
osu_tarball=${2:-}
[ -d "$wheels" ] || { echo "build-context: wheelhouse $wheels is not a folder" >&2; exit 2; }
case "$osu_tarball" in
    '') ;;
    */osu-micro-benchmarks-*.tar.gz|osu-micro-benchmarks-*.tar.gz)
        [ -f "$osu_tarball" ] || { echo "build-context: OSU tarball $osu_tarball not found" >&2; exit 2; } ;;
    *) echo "build-context: $osu_tarball is not an osu-micro-benchmarks-<version>.tar.gz" >&2; exit 2 ;;
esac
# containers/osu/ always exists in the context (the Dockerfile copies it); it holds the tarball when given.
extra=$(mktemp -d)
trap 'rm -rf "$extra"' EXIT
mkdir "$extra/osu"
[ -z "$osu_tarball" ] || cp "$osu_tarball" "$extra/osu/"
for d in solver microbench reframe containers; do
    [ -d "$d" ] || { echo "build-context: $d/ is missing from the work tree" >&2; exit 2; }
done
# GNU tar exits 1 when a file changed while it was read (someone editing the tree): the archive is still
# complete, so that is a warning; any other failure is an error.
rc=0
tar -c --owner=0 --group=0 --warning=no-file-changed \
    --exclude='./build' --exclude='*/build' --exclude='*/build-*' --exclude='.venv' \
    --exclude='__pycache__' --exclude='*.pyc' --exclude='*.egg-info' \
    --exclude='reframe/output' --exclude='reframe/stage' --exclude='reframe/perflogs' \
    --exclude='containers/wheels' --exclude='containers/osu' \
    solver microbench reframe containers \
    -C "$(cd "$wheels" && pwd)/.." --transform="s,^$(basename "$wheels"),containers/wheels," "$(basename "$wheels")" \
    -C "$extra" --transform="s,^osu,containers/osu," osu || rc=$?
if [ "$rc" -eq 1 ]; then
    echo "build-context: warning: a file changed while it was archived" >&2
elif [ "$rc" -ne 0 ]; then
    exit "$rc"
fi
