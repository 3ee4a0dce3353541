#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages named in $DEB_PACKAGES that are missing.
# Without root or on another distribution it prints exactly what to install and exits 2.
set -euo pipefail
packages=${DEB_PACKAGES:?DEB_PACKAGES is empty}

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "deps: this is not a Debian/Ubuntu system, so nothing was installed."
    echo "deps: install Open MPI (with UCX), hwloc, numactl, HDF5 (parallel), NetPIPE, CMake >= 3.18,"
    echo "deps: C/C++/Fortran compilers and Python 3 with venv, or build them with Spack:"
    echo "deps:     spack env activate . && spack concretize -f && spack install"
    exit 2
fi

missing=()
for pkg in $packages; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all $(wc -w <<<"$packages") Debian packages present"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "deps: missing Debian packages; install them with:"
    echo "    sudo apt-get install -y --no-install-recommends ${missing[*]}"
    exit 2
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
