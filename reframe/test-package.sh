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
#   5. the smoke set run for real (-r) from the installed package under that configuration: no case
#      fails, every skip carries its reason and none tells the site to `make` anything (it has no
#      checkout), FdtdStrongScaling passes on a solver its SolverBinary fixture built from the sources
#      inside the installed package;
#   6. the oldest supported ReFrame ($RFM_OLDEST, pyproject's lower bound) installed into the same
#      environment: every check file loads, the same checks are listed, and step 5 passes again.
# Environment: PY (python with `build`; .venv/bin/python), OUT (build/package: dist/ and logs),
# RFM_OLDEST (4.9.0), PACKAGE_EXPECT_EQUAL (1, the default: the minimal configuration must list as many
# checks as the suite's own; 0: it must list >= 1 check when system and environment checks are skipped,
# and the counts are reported).
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
# (Python's byte-code caches are left out: a test stage running beside this one imports modules meanwhile)
checkout_state() { git status --porcelain --ignored -- reframe | grep -v -e '/__pycache__/$' -e '\.pyc$' || true; }
before=$(checkout_state)
rm -rf "$out/dist"
"$py" -m build --outdir "$out/dist" reframe > "$out/build.log" 2>&1 || { tail -20 "$out/build.log" >&2; fail "python -m build"; }
after=$(checkout_state)
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

# 5. the smoke set run for real from the installed package under the minimal configuration: no case
#    fails, every skip carries its reason, the FDTD cases pass on a solver built from the installed sources
# A site's environment holds nothing of this checkout: no prefix of its builds, no OSU or NetPIPE it found.
unset YEEBENCH_PREFIX OSU_HOME NETPIPE_HOME
# Open MPI refuses to start as root unless told; CI runs as root (a site's user needs neither variable).
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
smoke_run() {   # $1: a label for the logs
    rm -rf stage output
    "$rfm" -C site.py -c "$checks" -R -t smoke -S smoke=true -r --report-file "$out/smoke-$1.json" \
        > "$out/smoke-$1.log" 2>&1 || fail "$1: the smoke run exited $? (see $out/smoke-$1.log): $(grep -m3 'FAIL' "$out/smoke-$1.log")"
    "$tmp/venv/bin/python" - "$out/smoke-$1.json" "$n_smoke" > "$out/smoke-$1.summary" <<'PYEOF' || fail "$1: the smoke run's report (see $out/smoke-$1.log)"
import json, sys
report, expected = json.load(open(sys.argv[1])), int(sys.argv[2])
cases = [c for run in report['runs'][-1:] for c in run['testcases']]
problems = [f"{c['display_name']}: {c['result']}: {c.get('fail_reason')}" for c in cases if c['result'] not in ('pass', 'skip')]
reasons = {c['display_name']: (c.get('observations') or {}).get('skip_reason') for c in cases if c['result'] == 'skip'}
problems += [f'{name}: skipped without a reason' for name, why in reasons.items() if not why]
problems += [f'{name}: a site without a checkout cannot follow {why!r}' for name, why in reasons.items()
             if why and 'make ' in why]
fdtd = [c for c in cases if c['display_name'].startswith('FdtdStrongScaling')]
if not fdtd or any(c['result'] != 'pass' for c in fdtd):
    problems.append(f'FdtdStrongScaling did not pass: {[(c["display_name"], c["result"]) for c in fdtd]}')
run = [c for c in cases if not c.get('fixture')]
if len(run) != expected:
    problems.append(f'{len(run)} smoke cases ran or skipped, {expected} listed')
for p in problems:
    print('  ' + p, file=sys.stderr)
passed = sum(c['result'] == 'pass' for c in run)
print(f'{passed} passed, {len(run) - passed} skipped with a reason, of {len(run)} smoke cases')
sys.exit(1 if problems else 0)
PYEOF
    # the fixture's stage: where yee came from (origin.txt) and the source tree CMake configured
    fixture=$(ls -d stage/site/default/builtin/SolverBinary_* 2>/dev/null | head -n 1)
    [ -n "$fixture" ] || fail "$1: the smoke run left no SolverBinary stage directory"
    grep -q '^yee cmake ' "$fixture/origin.txt" || fail "$1: yee was not built by the fixture: $(cat "$fixture/origin.txt")"
    grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$site_packages/yeebench/_shipped/solver" "$fixture/build/CMakeCache.txt" \
        || fail "$1: the fixture did not build the installed solver sources: $(grep CMAKE_HOME_DIRECTORY "$fixture/build/CMakeCache.txt")"
}
"$rfm" -C site.py -c "$checks" -R -t smoke -S smoke=true -l > "$out/list-smoke.log" 2>&1 || fail "the smoke listing exited $?"
n_smoke=$(count "$out/list-smoke.log")
smoke_run newest
step "smoke run, ReFrame $("$rfm" --version): $(cat "$out/smoke-newest.summary"); the solver built from $site_packages/yeebench/_shipped/solver"

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
step "ReFrame $oldest (the oldest supported) installs and lists the same $n_oldest checks"
smoke_run oldest
step "smoke run, ReFrame $oldest: $(cat "$out/smoke-oldest.summary")"
step "ok (logs in $out)"
