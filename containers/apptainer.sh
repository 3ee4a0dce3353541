#!/usr/bin/env bash
# Prints the path of the `apptainer` to use, for scripts and make:
#   containers/apptainer.sh            # the user's apptainer on PATH, else the lab's unpacked into build/
# Order: `apptainer` on PATH; else $YEEBENCH_LAB/apptainer/apptainer-*-amd64.tar.gz (default ../shared/lab
# from the repository root), checked against the lab's SHA256SUMS and unpacked once into
# build/apptainer/ (it is relocatable). Neither: exit 3 with one line naming where it looked.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h|--help) sed -n '2,6s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
if command -v apptainer > /dev/null; then command -v apptainer; exit 0; fi
lab=${YEEBENCH_LAB:-../shared/lab}
dest=${YEEBENCH_APPTAINER_DIR:-build/apptainer}
tarball=$(ls "$lab"/apptainer/apptainer-*-amd64.tar.gz 2>/dev/null | sort | tail -1 || true)
if [ -z "$tarball" ]; then
    echo "apptainer.sh: no apptainer on PATH and no $lab/apptainer/apptainer-*-amd64.tar.gz (YEEBENCH_LAB)" >&2
    exit 3
fi
name=$(basename "$tarball" .tar.gz)
version=${name#apptainer-}; version=${version%%-*}
exe=$dest/apptainer-$version/bin/apptainer
if [ ! -x "$exe" ] || [ ! -f "$dest/$name.verified" ]; then
    sum=$(awk -v f="./apptainer/$name.tar.gz" '$2 == f {print $1}' "$lab/SHA256SUMS" 2>/dev/null || true)
    [ -n "$sum" ] || { echo "apptainer.sh: $tarball is not listed in $lab/SHA256SUMS" >&2; exit 1; }
    echo "$sum  $tarball" | sha256sum --quiet -c - 2>/dev/null \
        || { echo "apptainer.sh: $tarball does not match its sha256 in $lab/SHA256SUMS" >&2; exit 1; }
    rm -rf "$dest/apptainer-$version" && mkdir -p "$dest"
    tar -C "$dest" -xzf "$tarball"
    [ -x "$exe" ] || { echo "apptainer.sh: $tarball holds no apptainer-$version/bin/apptainer" >&2; exit 1; }
    echo "$sum" > "$dest/$name.verified"
fi
echo "$(cd "$(dirname "$exe")" && pwd)/apptainer"
