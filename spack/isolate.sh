# Sourced by spack/stage.sh after find-spack.sh: keeps everything Spack writes under $STATE (build/spack
# by default) and away from ~/.spack and /etc/spack, and makes Spack work offline.
#  - $STATE/user is Spack's user scope (SPACK_USER_CONFIG_PATH, where ~/.spack would be): install tree,
#    build and test stages, caches; builtin packages and source mirror when the lab provides them.
#  - $STATE/system is an empty system scope (SPACK_SYSTEM_CONFIG_PATH instead of /etc/spack).
#  - Bootstrapping is off (no downloads): the concretizer is clingo from PyPI in the suite's virtualenv
#    (reframe/pyproject.toml), which Spack uses as SPACK_PYTHON.

export SPACK_USER_CONFIG_PATH=$STATE/user
export SPACK_SYSTEM_CONFIG_PATH=$STATE/system
export SPACK_USER_CACHE_PATH=$STATE/cache
export SPACK_PYTHON=${SPACK_PYTHON:-$REPO/$VENV/bin/python}
if ! "$SPACK_PYTHON" -c 'import clingo' 2>/dev/null; then
    echo "spack: $SPACK_PYTHON cannot import clingo (make venv installs it; bootstrapping is off)" >&2
    exit 1
fi
mkdir -p "$SPACK_USER_CONFIG_PATH" "$SPACK_SYSTEM_CONFIG_PATH" "$SPACK_USER_CACHE_PATH"

# `::` replaces Spack's defaults instead of adding to them.
cat > "$SPACK_USER_CONFIG_PATH/config.yaml" <<EOF
config:
  install_tree:
    root: $STATE/opt
  build_stage:: [$STATE/stage]
  test_stage: $STATE/test-stage
  source_cache: $STATE/source-cache
  misc_cache: $STATE/cache/misc
EOF
cat > "$SPACK_USER_CONFIG_PATH/bootstrap.yaml" <<EOF
bootstrap:
  enable: false
  root: $STATE/bootstrap
EOF
rm -f "$SPACK_USER_CONFIG_PATH/repos.yaml" "$SPACK_USER_CONFIG_PATH/mirrors.yaml"
if [[ -n ${YEEBENCH_SPACK_PACKAGES:-} ]]; then
    printf 'repos:\n  builtin: %s\n' "$YEEBENCH_SPACK_PACKAGES" > "$SPACK_USER_CONFIG_PATH/repos.yaml"
fi
if [[ -n ${YEEBENCH_SPACK_MIRROR:-} ]]; then
    printf 'mirrors:\n  lab: file://%s\n' "$YEEBENCH_SPACK_MIRROR" > "$SPACK_USER_CONFIG_PATH/mirrors.yaml"
    # The lab re-packed the OSU release tarballs, so they cannot match the sha256 the recipe pins:
    # checksums are off on these test machines only (never do this with sources from the internet).
    printf '  checksum: false\n' >> "$SPACK_USER_CONFIG_PATH/config.yaml"
fi
