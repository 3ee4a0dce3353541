#!/usr/bin/env bash
# Builds one SIF from a definition file and, when that fails, says in one line which file and which
# step (bootstrap, %files, %post of a stage, ...) failed:
#   containers/sif-build.sh APPTAINER DEF SIF LOG [apptainer build options...]
# The image is written to SIF.tmp and renamed to SIF only when the build succeeded, so a failed or
# interrupted build never leaves a SIF behind (nor keeps an older one: SIF is removed first).
# SIF_BUILD_NEED_MIB=N: refuse to start, in one line, where APPTAINER_TMPDIR (default /tmp: apptainer
# unpacks every stage there) has less than N MiB free, rather than failing half-way on a full disk.
# SIF_MKSQUASHFS_ARGS: how the image's squashfs is compressed (default: gzip at level 1, a format every
# Apptainer and kernel reads; mksquashfs's own level 9 took 96 CPU s for a 0.9 GB image against 10 s,
# for an image 11 % larger). Empty: mksquashfs's default.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,11s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
[ $# -ge 4 ] || { echo "usage: sif-build.sh APPTAINER DEF SIF LOG [apptainer build options...]" >&2; exit 2; }
app=$1 def=$2 sif=$3 log=$4; shift 4
[ -f "$def" ] || { echo "sif-build: $def: no such definition file" >&2; exit 2; }
here=$(dirname "$0")
need=${SIF_BUILD_NEED_MIB:-0}
[[ $need =~ ^[0-9]+$ ]] || { echo "sif-build: SIF_BUILD_NEED_MIB=$need: expected a number of MiB" >&2; exit 2; }
tmpdir=${APPTAINER_TMPDIR:-${TMPDIR:-/tmp}}
free_mib() { df -Pm "$1" 2>/dev/null | awk 'NR == 2 {print $4}'; }
free=$( [ "$need" -gt 0 ] && free_mib "$tmpdir" || true)
if [ -n "$free" ] && [ "$free" -lt "$need" ]; then
    echo "sif-build: $def: $tmpdir has $free MiB free, the build needs about $need MiB there" \
         "(free some, or set APPTAINER_TMPDIR to a bigger folder)" >&2
    exit 1
fi
squash=${SIF_MKSQUASHFS_ARGS--comp gzip -Xcompression-level 1}
rm -f "$sif" "$sif.tmp"
trap 'rm -f "$sif.tmp"' EXIT
if ! "$app" build ${squash:+--mksquashfs-args "$squash"} "$@" "$sif.tmp" "$def" > "$log" 2>&1; then
    step=$(python3 "$here/build_step.py" "$log" "$def" 2>/dev/null || echo 'an unknown step')
    case $step in
        *'no space left on device'*) step="$step ($tmpdir has $(free_mib "$tmpdir") MiB free now," \
                                          "$(dirname "$sif") $(free_mib "$(dirname "$sif")") MiB)" ;;
    esac
    echo "sif-build: $def: apptainer build failed in $step (log: $log)" >&2
    exit 1
fi
mv -f "$sif.tmp" "$sif"
