#!/usr/bin/env bash
# Build the OSU Micro-Benchmarks from a release tarball with the MPI compiler wrappers on PATH.
#
#   microbench/osu/build-osu.sh TARBALL PREFIX
#
# Installs into PREFIX/libexec/osu-micro-benchmarks (OSU's own layout), atomically: the build goes
# to a scratch folder beside PREFIX and its libexec tree is renamed into place only when configure,
# make and make install all succeeded, so a failed build leaves nothing where the suite looks.
# Cached: a stamp inside the installed tree records the tarball's sha256 and `mpicc --showme:version`;
# a second call with the same inputs does nothing.  Environment: MPICC (mpicc), MPICXX (mpicxx),
# JOBS (nproc), OSU_BUILD_LOG (PREFIX/../osu-build.log).
# On failure: one line `build-osu: TARBALL: STEP failed (...)` on stderr, exit 1.  Usable on its own
# (e.g. in an image build): it needs only bash, tar, gzip, make, sha256sum and an MPI.
set -uo pipefail

usage() { echo "usage: $0 TARBALL PREFIX   (an osu-micro-benchmarks-<version>.tar.gz release tarball)"; }
case "${1:-}" in -h|--help) usage; exit 0;; esac
[ $# -eq 2 ] || { usage >&2; exit 2; }

tarball=$1
prefix=$2
mkdir -p "$prefix" || { echo "build-osu: cannot create $prefix" >&2; exit 1; }
prefix=$(cd "$prefix" && pwd)
MPICC=${MPICC:-mpicc}
MPICXX=${MPICXX:-mpicxx}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
log=${OSU_BUILD_LOG:-$(dirname "$prefix")/osu-build.log}
dest=$prefix/libexec/osu-micro-benchmarks
stamp_name=.yeebench-osu-build

fail() {   # fail STEP DETAIL: the one line, then clean up the scratch folder
    echo "build-osu: $tarball: $1 failed${2:+ ($2)}" >&2
    [ -n "${scratch:-}" ] && rm -rf "$scratch"
    exit 1
}

[ -f "$tarball" ] || fail "reading the tarball" "no such file"
command -v "$MPICC" > /dev/null || fail "finding the MPI compiler" "$MPICC not on PATH"
sha=$(sha256sum "$tarball" | cut -d' ' -f1) || fail "reading the tarball"
mpi_version=$("$MPICC" --showme:version 2>&1 || "$MPICC" -v 2>&1 | head -n 1)
stamp="tarball_sha256=$sha mpi=$mpi_version"
if [ -f "$dest/$stamp_name" ] && [ "$(cat "$dest/$stamp_name")" = "$stamp" ]; then
    echo "build-osu: $dest is up to date ($(basename "$tarball"))"
    exit 0
fi

gzip -t "$tarball" 2> /dev/null || fail "gunzip" "not a valid gzip file"
tops=$(tar -tzf "$tarball" 2> /dev/null | cut -d/ -f1 | sort -u) || fail "listing the tarball"
top=$(echo "$tops" | head -n 1)
[ "$(echo "$tops" | wc -l)" -eq 1 ] && [[ $top == osu-micro-benchmarks-* ]] \
    || fail "checking the top folder" "expected one osu-micro-benchmarks-<version>/, found: $(echo $tops | cut -c1-80)"

scratch=$(mktemp -d "$prefix/.osu-build.XXXXXX") || fail "creating a scratch folder in $prefix"
trap 'rm -rf "$scratch"' EXIT
trap 'rm -rf "$scratch"; exit 130' INT TERM
echo "build-osu: building $top from $tarball with $MPICC (log: $log)"
: > "$log"
tar -xzf "$tarball" -C "$scratch" >> "$log" 2>&1 || fail "unpacking"
src=$scratch/$top
# Give every file one time stamp: make then never thinks configure or Makefile.in are stale and
# never re-runs autotools (7.2's Makefile.am is rejected by a fresh automake).
find "$src" -exec touch -h -d '2000-01-01 00:00:00' {} + >> "$log" 2>&1 || fail "normalising file times"
(cd "$src" && ./configure CC="$MPICC" CXX="$MPICXX" --prefix="$scratch/install") >> "$log" 2>&1 \
    || fail "configure" "see $log"
make -C "$src" -j "$JOBS" >> "$log" 2>&1 || fail "make" "see $log"
make -C "$src" install >> "$log" 2>&1 || fail "make install" "see $log"
built=$scratch/install/libexec/osu-micro-benchmarks
[ -x "$built/mpi/pt2pt/standard/osu_latency" ] || [ -x "$built/mpi/pt2pt/osu_latency" ] \
    || fail "make install" "no osu_latency installed"
echo "$stamp" > "$built/$stamp_name"
echo "${top#osu-micro-benchmarks-}" > "$built/VERSION"

# Swap the new tree in: a rename, so the suite sees either the old tree or the complete new one.
mkdir -p "$prefix/libexec" || fail "installing into $prefix"
[ -e "$dest" ] && { mv "$dest" "$scratch/old" || fail "replacing $dest"; }
mv "$built" "$dest" || fail "installing into $dest"
rm -rf "$scratch"
echo "build-osu: installed $top into $dest"
