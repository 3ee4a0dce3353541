# Sourced by spack/stage.sh: which Spack the stage uses. Sets SPACK_HOME (the Spack instance's root
# folder), SPACK_ORIGIN (a few words for the log) and, for the lab's copy, YEEBENCH_SPACK_PACKAGES (the
# builtin package repository); YEEBENCH_SPACK_MIRROR names the lab's source mirror when there is one.
#
# Order: a user's own Spack first (`spack` on PATH, then $SPACK_ROOT), else the lab's release tarballs
# ($YEEBENCH_LAB, default ../shared/lab), checked against the lab's SHA256SUMS and unpacked once into
# $STATE/lab. With none of them: SPACK_HOME stays empty and SPACK_LOOKED_AT says where we looked.

SPACK_HOME=
LAB=${YEEBENCH_LAB:-$(cd .. && pwd)/shared/lab}
LAB_SPACK=spack/spack-1.1.0.tar.gz
LAB_PACKAGES=spack/spack-packages-2025.11.0.tar.gz
SPACK_LOOKED_AT="spack on PATH, \$SPACK_ROOT (${SPACK_ROOT:-unset}), $LAB/$LAB_SPACK"

spack_on_path=$(type -P spack || true)
if [[ -n $spack_on_path ]]; then
    SPACK_HOME=$(cd "$(dirname "$(readlink -f "$spack_on_path")")/.." && pwd)
    SPACK_ORIGIN="the user's Spack on PATH ($SPACK_HOME)"
elif [[ -n ${SPACK_ROOT:-} && -x $SPACK_ROOT/bin/spack ]]; then
    SPACK_HOME=$SPACK_ROOT
    SPACK_ORIGIN="the user's Spack at \$SPACK_ROOT ($SPACK_HOME)"
elif [[ -f $LAB/$LAB_SPACK && -f $LAB/$LAB_PACKAGES ]]; then
    unpacked=$STATE/lab
    sums=$(cd "$LAB" && sha256sum "$LAB_SPACK" "$LAB_PACKAGES")
    if [[ ! -f $unpacked/SHA256SUMS ]] || [[ $(cat "$unpacked/SHA256SUMS") != "$sums" ]]; then
        for f in "$LAB_SPACK" "$LAB_PACKAGES"; do
            if ! grep -qxF "$(grep -F "  $f" <<<"$sums" | cut -d' ' -f1)  ./$f" "$LAB/SHA256SUMS"; then
                echo "spack: $LAB/$f does not match $LAB/SHA256SUMS; not using it" >&2
                exit 1
            fi
        done
        echo "spack: unpacking the lab's Spack 1.1.0 and spack-packages v2025.11.0 into $unpacked"
        rm -rf "$unpacked" && mkdir -p "$unpacked"
        tar -C "$unpacked" -xzf "$LAB/$LAB_SPACK"
        tar -C "$unpacked" -xzf "$LAB/$LAB_PACKAGES"
        echo "$sums" > "$unpacked/SHA256SUMS"
    fi
    SPACK_HOME=$unpacked/spack-1.1.0
    SPACK_ORIGIN="the lab's Spack 1.1.0 ($LAB), unpacked in $unpacked"
    YEEBENCH_SPACK_PACKAGES=${YEEBENCH_SPACK_PACKAGES:-$unpacked/spack-packages-2025.11.0/repos/spack_repo/builtin}
fi
# The lab's source mirror serves OSU offline whichever Spack runs.
YEEBENCH_SPACK_MIRROR=
if [[ -n $SPACK_HOME && -d $LAB/mirror ]]; then
    YEEBENCH_SPACK_MIRROR=$LAB/mirror
fi
