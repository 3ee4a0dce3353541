#!/usr/bin/env bash
# Print the OSU Micro-Benchmarks release tarball the suite should build, first match wins:
#   1. OSU_TARBALL   a tarball path (an error when set but missing)
#   2. OSU_MIRROR    a Spack-style source mirror (folder or file:// URL):
#                    <mirror>/osu-micro-benchmarks/osu-micro-benchmarks-<version>.tar.gz
#   3. the lab       $YEEBENCH_LAB/mirror (default ../shared/lab from the repository root), same
#                    layout, each tarball checked against $YEEBENCH_LAB/SHA256SUMS
# OSU_VERSION picks a version from a mirror (default: the newest there).
# Exit 0 with the path on stdout; 3 with one line naming every place searched when there is none;
# 1 with one line when a tarball is there but unusable (missing file, checksum mismatch).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
lab=${YEEBENCH_LAB:-$repo/../shared/lab}
lab=$(cd "$lab" 2> /dev/null && pwd || echo "$lab")
name=osu-micro-benchmarks

pick() {   # pick MIRROR_DIR: the tarball of OSU_VERSION, or the newest, in a Spack-style mirror
    local dir=$1/$name
    if [ -n "${OSU_VERSION:-}" ]; then
        [ -f "$dir/$name-$OSU_VERSION.tar.gz" ] && echo "$dir/$name-$OSU_VERSION.tar.gz"
        return 0
    fi
    ls "$dir"/$name-*.tar.gz 2> /dev/null | sort -V | tail -n 1
}

if [ -n "${OSU_TARBALL:-}" ]; then
    [ -f "$OSU_TARBALL" ] || { echo "osu: OSU_TARBALL=$OSU_TARBALL: no such file" >&2; exit 1; }
    echo "$OSU_TARBALL"
    exit 0
fi
searched="OSU_TARBALL (not set)"
want=${OSU_VERSION:+ version $OSU_VERSION}
if [ -n "${OSU_MIRROR:-}" ]; then
    mirror=${OSU_MIRROR#file://}
    found=$(pick "$mirror")
    [ -n "$found" ] && { echo "$found"; exit 0; }
    searched+="; OSU_MIRROR=$OSU_MIRROR (no $name/$name-*.tar.gz$want)"
else
    searched+="; OSU_MIRROR (not set)"
fi
found=$( [ -d "$lab/mirror" ] && pick "$lab/mirror" )
if [ -n "$found" ]; then
    rel=./mirror/$name/$(basename "$found")
    sum=$(awk -v f="$rel" '$2 == f {print $1}' "$lab/SHA256SUMS" 2> /dev/null)
    [ -n "$sum" ] || { echo "osu: $found is not listed in $lab/SHA256SUMS" >&2; exit 1; }
    echo "$sum  $found" | sha256sum --check --status \
        || { echo "osu: $found does not match its sha256 in $lab/SHA256SUMS" >&2; exit 1; }
    echo "$found"
    exit 0
fi
searched+="; lab $lab/mirror/$name (none$want)"
echo "no OSU tarball: searched $searched" >&2
exit 3
