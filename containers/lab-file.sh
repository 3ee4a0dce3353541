#!/usr/bin/env bash
# Prints the absolute path of a file of the lab (an offline stand-in for site downloads), after checking it
# against the lab's SHA256SUMS:
#   containers/lab-file.sh mirror/osu-micro-benchmarks/osu-micro-benchmarks-7.4.tar.gz
# The lab is $YEEBENCH_LAB (default ../shared/lab from the repository root). Exit 3 with one line when
# the lab or the file is absent; exit 1 when the file does not match its checksum.
set -euo pipefail
cd "$(dirname "$0")/.."
rel=${1:?usage: lab-file.sh PATH_INSIDE_THE_LAB}
lab=${YEEBENCH_LAB:-../shared/lab}
[ -f "$lab/$rel" ] || { echo "lab-file: $lab/$rel not found (YEEBENCH_LAB=$lab)" >&2; exit 3; }
sum=$(awk -v f="./$rel" '$2 == f {print $1}' "$lab/SHA256SUMS" 2>/dev/null || true)
[ -n "$sum" ] || { echo "lab-file: $rel is not listed in $lab/SHA256SUMS" >&2; exit 1; }
echo "$sum  $lab/$rel" | sha256sum --quiet -c - > /dev/null 2>&1 \
    || { echo "lab-file: $lab/$rel does not match its sha256 in $lab/SHA256SUMS" >&2; exit 1; }
echo "$(cd "$(dirname "$lab/$rel")" && pwd)/$(basename "$rel")"
