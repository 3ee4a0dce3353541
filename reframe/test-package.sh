#!/usr/bin/env bash
# The yeebench package as a site installs it (make test-package):
#   1. an sdist and a wheel built from this checkout (python -m build), which must leave it as it was;
#   2. the wheel installed with the exact versions of reframe/constraints.txt into a fresh virtual
#      environment in a temporary folder outside the checkout, used from another temporary folder;
#   3. `yeebench checks-dir` inside that environment's site-packages; the shipped solver and probe
#      sources configure with CMake;
#   4. a minimal site configuration written as ReFrame's documentation writes one (one system `site`,
#      one local partition, mpirun, the `builtin` environment, no yeebench keys): the checks listed
#      with it, compared with the suite's own configuration from the checkout;
#   5. a --dry-run of an FDTD smoke case from the installed package: its SolverBinary build script
#      configures the solver sources inside the installed package;
#   6. the oldest supported ReFrame ($RFM_OLDEST, pyproject's lower bound) installed into the same
#      environment: every check file loads and the same checks are listed.
# Environment: PY (python with `build`; .venv/bin/python), OUT (build/package: dist/ and logs),
# RFM_OLDEST (4.9.0), PACKAGE_EXPECT_EQUAL (1: the minimal configuration must list as many checks as
# the suite's own; 0, the default until the checks stop asking for yeebench partition features: it
# must list >= 1 check when system and environment checks are skipped, and the counts are reported).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
py=${PY:-.venv/bin/python}
out=$(mkdir -p "${OUT:-build/package}" && cd "${OUT:-build/package}" && pwd)
oldest=${RFM_OLDEST:-4.9.0}
expect_equal=${PACKAGE_EXPECT_EQUAL:-1}
[ -x "$py" ] || { echo "test-package: $py is missing (make venv, or set PY)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/yeebench-package.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test-package: FAIL: $*" >&2; exit 1; }
step() { echo "test-package: $*"; }
pip_install() {
    "$tmp/venv/bin/pip" install --quiet --disable-pip-version-check "$@" > "$out/pip-install.log" 2>&1 \
        || { tail -20 "$out/pip-install.log" >&2; fail "pip install $*"; }
}
count() { sed -n 's/^Found \([0-9]*\) check(s)$/\1/p' "$1" | tail -n 1; }

# 1. sdist + wheel (the wheel is built from the sdist), the checkout untouched
before=$(git status --porcelain --ignored -- reframe)
rm -rf "$out/dist"
"$py" -m build --outdir "$out/dist" reframe > "$out/build.log" 2>&1 || { tail -20 "$out/build.log" >&2; fail "python -m build"; }
after=$(git status --porcelain --ignored -- reframe)
[ "$before" = "$after" ] || fail "building changed the checkout: $(diff <(echo "$before") <(echo "$after") | tail -n +2)"
wheel=$(ls "$out"/dist/yeebench-*.whl)
sdist=$(ls "$out"/dist/yeebench-*.tar.gz)
tar tzf "$sdist" > "$out/sdist-files.txt"
for f in solver/CMakeLists.txt solver/src/backends/cpu/traits.json microbench/CMakeLists.txt references/local.json; do
    grep -q "/yeebench/_shipped/$f$" "$out/sdist-files.txt" || fail "the sdist has no yeebench/_shipped/$f"
done
step "built $(basename "$sdist") and $(basename "$wheel") ($("$py" -m zipfile -l "$wheel" | tail -n +2 | wc -l) files), checkout unchanged"

# 2. a fresh environment outside the checkout, the exact versions of constraints.txt
python3 -m venv "$tmp/venv"
pip_install -c reframe/constraints.txt "$wheel"
site_packages=$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir "$tmp/site" && cd "$tmp/site"

# 3. the checks' folder and the shipped sources
checks=$("$tmp/venv/bin/yeebench" checks-dir) || fail "yeebench checks-dir exited $?"
[ "$checks" = "$site_packages/yeebench/checks" ] || fail "yeebench checks-dir printed $checks, not $site_packages/yeebench/checks"
for name in solver microbench; do
    src=$("$tmp/venv/bin/python" -c "from yeebench.package_data import source_tree; print(source_tree('$name'))")
    [ "$src" = "$site_packages/yeebench/_shipped/$name" ] || fail "source_tree('$name') is $src, not in the installed package"
    cmake -S "$src" -B "$tmp/cmake-$name" > "$out/cmake-$name.log" 2>&1 || { tail -20 "$out/cmake-$name.log" >&2; fail "cmake cannot configure the installed $name sources"; }
done
step "yeebench checks-dir: $checks; the installed solver and microbench sources configure"

# 4. a minimal site configuration, as ReFrame's documentation writes one
cat > site.py <<'EOF'
site_configuration = {
    'systems': [
        {
            'name': 'site',
            'descr': 'A site system, written as ReFrame documentation writes one',
            'hostnames': ['.*'],
            'partitions': [
                {
                    'name': 'default',
                    'scheduler': 'local',
                    'launcher': 'mpirun',
                    'environs': ['builtin'],
                }
            ]
        }
    ]
}
EOF
rfm=$tmp/venv/bin/reframe
"$rfm" -C site.py -c "$checks" -R -l > "$out/list-site.log" 2>&1 || fail "reframe -l with the minimal configuration exited $? (see $out/list-site.log)"
"$rfm" -C site.py -c "$checks" -R -l --skip-system-check --skip-prgenv-check > "$out/list-site-all.log" 2>&1 \
    || fail "reframe -l --skip-system-check exited $?"
(cd "$repo" && YEEBENCH_RFM_DIR="$tmp/rfm-suite" "$repo/.venv/bin/reframe" -C reframe/config/settings.py \
    -c reframe/yeebench/checks -R -l --system local) > "$out/list-suite.log" 2>&1 || fail "the suite's own listing exited $?"
n_site=$(count "$out/list-site.log"); n_all=$(count "$out/list-site-all.log"); n_suite=$(count "$out/list-suite.log")
! grep -q "skipping test file" "$out/list-site-all.log" || fail "check files did not load: $(grep 'skipping test file' "$out/list-site-all.log" | head -3)"
step "checks listed: minimal site configuration $n_site, the same skipping system/environment checks $n_all," \
     "the suite's own configuration (system local, from the checkout) $n_suite"
[ "${n_all:-0}" -gt 0 ] || fail "the installed package lists no checks even skipping the system and environment checks"
if [ "$expect_equal" = 1 ]; then
    [ "$n_site" = "$n_suite" ] || fail "the minimal configuration lists $n_site checks, the suite's own $n_suite"
fi

# 5. an FDTD smoke case from the installed package, up to its job scripts
# (the whole smoke set, under the minimal configuration: every case dry-runs or skips with a reason)
"$rfm" -C site.py -c "$checks" -R -t smoke -S smoke=true --dry-run > "$out/dry-run.log" 2>&1 \
    || fail "the smoke --dry-run exited $? (see $out/dry-run.log)"
! grep -q '\[ *FAIL *\]' "$out/dry-run.log" || fail "a smoke case failed its --dry-run: $(grep -m3 '\[ *FAIL' "$out/dry-run.log")"
build_script=$(ls stage/site/default/builtin/SolverBinary_*/rfm_build.sh 2>/dev/null | head -n 1)
[ -n "$build_script" ] || fail "the --dry-run wrote no SolverBinary build script"
grep -q -- "-S $site_packages/yeebench/_shipped/solver " "$build_script" \
    || fail "$build_script does not configure the installed solver sources: $(grep cmake "$build_script" | head -1)"
ls stage/site/default/builtin/FdtdStrongScaling_*/rfm_job.sh > /dev/null 2>&1 || fail "the --dry-run wrote no FdtdStrongScaling job script"
step "FDTD smoke --dry-run: job scripts written, the solver built from $site_packages/yeebench/_shipped/solver"

# 6. the oldest supported ReFrame
grep -v '^reframe-hpc==' "$repo/reframe/constraints.txt" > "$tmp/constraints-oldest.txt"
pip_install -c "$tmp/constraints-oldest.txt" "reframe-hpc==$oldest"
"$tmp/venv/bin/pip" check > "$out/pip-check.log" 2>&1 || fail "pip check with reframe-hpc $oldest: $(cat "$out/pip-check.log")"
"$rfm" -C site.py -c "$checks" -R -l --skip-system-check --skip-prgenv-check > "$out/list-oldest.log" 2>&1 \
    || fail "reframe $oldest -l exited $?"
grep -q "version: *$oldest$" "$out/list-oldest.log" || fail "the listing did not run ReFrame $oldest"
! grep -q "skipping test file" "$out/list-oldest.log" || fail "ReFrame $oldest: $(grep 'skipping test file' "$out/list-oldest.log" | head -3)"
n_oldest=$(count "$out/list-oldest.log")
[ "$n_oldest" = "$n_all" ] || fail "ReFrame $oldest lists $n_oldest checks, ReFrame $(grep -m1 '^reframe-hpc==' "$repo/reframe/constraints.txt" | cut -d= -f3) $n_all"
rm -rf stage output
"$rfm" -C site.py -c "$checks" -R -t smoke -S smoke=true --dry-run > "$out/dry-run-oldest.log" 2>&1 \
    || fail "ReFrame $oldest: the smoke --dry-run exited $? (see $out/dry-run-oldest.log)"
! grep -q '\[ *FAIL *\]' "$out/dry-run-oldest.log" || fail "ReFrame $oldest: a smoke case failed its --dry-run"
step "ReFrame $oldest (the oldest supported) installs, lists the same $n_oldest checks and dry-runs the smoke set"
step "ok (logs in $out)"
