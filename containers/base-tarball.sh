#!/usr/bin/env bash
# Prints the path of the Debian 12 (bookworm) minbase root-filesystem tarball both image builds start
# from, making it first when it is not cached:
#   containers/base-tarball.sh [LOG]     # $YEEBENCH_CACHE/debian-bookworm-minbase.tar (default /var/cache/yeebench)
# `debootstrap --variant=minbase bookworm` from the Debian mirror (about a minute, root only), without
# device nodes (Docker provides /dev; Charliecloud and `apptainer build --fakeroot` refuse them).
# Two runs making it at once each write their own temporary and rename it: the tarball is always whole.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,6s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
cache=${YEEBENCH_CACHE:-/var/cache/yeebench}
log=${1:-/dev/null}
base_tar=$cache/debian-bookworm-minbase.tar
if [ -s "$base_tar" ]; then echo "$base_tar"; exit 0; fi
[ "$(id -u)" -eq 0 ] || { echo "base-tarball: $base_tar is missing and debootstrap needs root (run: sudo $0)" >&2; exit 2; }
command -v debootstrap > /dev/null || { echo "base-tarball: $base_tar is missing and debootstrap is not installed (apt-get install debootstrap)" >&2; exit 2; }
mkdir -p "$cache"
echo "base-tarball: debootstrap --variant=minbase bookworm (about a minute; log: $log)" >&2
rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
. "$(dirname "$0")/lib/remove-tree.sh"
# a debootstrap stopped half-way leaves /proc and /sys mounted in the target: remove_tree unmounts first
trap 'remove_tree "$rootfs"; rm -f "$base_tar.$$"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian > "$log" 2>&1 \
    || { echo "base-tarball: debootstrap failed, see $log" >&2; exit 1; }
tar -C "$rootfs" --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -cf "$base_tar.$$" .
mv "$base_tar.$$" "$base_tar"
echo "$base_tar"
