#!/usr/bin/env bash
# The Spack stage of `make test` (make test-spack): the commands spack/README.md shows, for real.
#   1. spack -e . concretize -f                    writes spack.lock
#   2. spack -e . install --test=root              our two packages with their ctest suites, OSU, ...
#   3. spack -e . test run / test results          the recipes' stand-alone tests, part by part
#   4. spack env activate . and ReFrame's smoke set with -p spack (every binary from the view), plus
#      the solver's scaling smoke cases with -p host (the CMake build in $PREFIX) in the same run: the
#      Spack-built / CMake-built Mcells/s ratio, and the run ingested with spack.lock in its provenance.
# Spack state lives in $STATE (build/spack): user scope, caches, install tree (see spack/isolate.sh);
# a second run reuses what the first installed. Each step logs to $STATE/logs/<step>.log; a failure
# prints that path and the log's last error lines. No Spack anywhere: one line saying where we looked.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
STATE=${SPACK_STATE:-$REPO/build/spack}
VENV=${VENV:-.venv}
PREFIX=${PREFIX:-$REPO/build/install}
PY=$REPO/$VENV/bin/python
LOGS=$STATE/logs
# sha256 of the spack.lock whose install and tests passed: ReFrame never runs on anything else.
READY=$STATE/ready
FACTS=(env PYTHONPATH="$REPO/spack" "$PY" -m stage_facts)

source spack/find-spack.sh
if [[ -z $SPACK_HOME ]]; then
    echo "test-spack: skipped: no Spack (looked at $SPACK_LOOKED_AT)"
    exit 0
fi
source spack/isolate.sh
set +u; source "$SPACK_HOME/share/spack/setup-env.sh"; set -u
mkdir -p "$LOGS"
echo "test-spack: $SPACK_ORIGIN; state in $STATE (ready after $SECONDS s; $(uptime | sed 's/.*load/load/'))"
[[ -n $YEEBENCH_SPACK_MIRROR ]] && echo "test-spack: source mirror $YEEBENCH_SPACK_MIRROR (checksums off: lab tarballs)"

SUMMARY=("$(printf '%-12s %4d s' setup $SECONDS)")   # finding/unpacking Spack, its shell setup
step() {  # step NAME COMMAND...: run it with its output in $LOGS/NAME.log, timed
    local name=$1 start=$SECONDS; shift
    local log=$LOGS/$name.log
    echo "test-spack: [$name] $*  (log: $log)"
    if ! "$@" > "$log" 2>&1; then
        echo "test-spack: [$name] FAILED after $((SECONDS - start)) s; log: $log" >&2
        { grep -E -i -A2 'error|fail|fatal' "$log" || tail -n 20 "$log"; } | tail -n 20 | sed 's/^/    /' >&2
        exit 1
    fi
    SUMMARY+=("$(printf '%-12s %4d s' "$name" $((SECONDS - start)))")
    echo "test-spack: [$name] done in $((SECONDS - start)) s"
}
fact() {  # fact WHAT ARGS...: one line of facts from stage_facts.py, added to the summary; fails the stage
    local line
    line=$("${FACTS[@]}" "$@") || { echo "test-spack: $line" >&2; exit 1; }
    echo "test-spack:   $line"
    SUMMARY+=("             $line")
}

rm -f "$READY"
step concretize spack -e . concretize -f
fact lock spack.lock

step install spack -e . install --test=root
for package in yee yeebench-microbench; do
    # Build-time tests run only when a package is built; a reused install shows the log of its build.
    fact ctest "$package" "$(spack -e . location -i "$package")/.spack/install-time-test-log.txt"
done

spack -e . test remove -y yeebench > /dev/null 2>&1 || true   # the alias of an earlier run
step test-run spack -e . test run --alias yeebench yee yeebench-microbench
step test-results spack -e . test results -l yeebench
fact test-run "$LOGS/test-results.log"
sha256sum spack.lock | cut -d' ' -f1 > "$READY"

run_reframe() {
    [[ $(cat "$READY" 2>/dev/null) == $(sha256sum spack.lock | cut -d' ' -f1) ]] \
        || { echo "the environment is not the one installed and tested: not running ReFrame on it"; return 1; }
    spack env activate .
    export PATH=$PATH:$REPO/$VENV/bin   # reframe, after the view
    # The smoke set with -p spack; the solver's scaling smoke cases also with -p host, which takes the
    # CMake build in $PREFIX; cases one at a time so that the two solver builds are timed alike.
    # NetPIPE has no Spack package (it comes from the OS): it runs no Spack-built program, so it is not
    # part of this run. Checks tagged built-in-job build their program in the job: they run, and the
    # origins fact names them as not judged.
    unset OSU_HOME   # OSU from the view (on PATH), not from elsewhere
    YEEBENCH_PREFIX=$PREFIX YEEBENCH_RFM_DIR=$STATE/reframe \
        reframe -C reframe/config/settings.py -c reframe/yeebench/checks -R --system local --mode smoke -x NetPIPEPt2Pt \
        -p spack -p host -S valid_prog_environs=spack \
        -S FdtdStrongScaling.valid_prog_environs=spack,host -S FdtdWeakScaling.valid_prog_environs=spack,host \
        --exec-policy=serial --keep-stage-files -r --report-file $STATE/reframe/report.json
}
rm -f "$STATE/reframe/report.json"
step reframe run_reframe
fact origins "$STATE/reframe/report.json" "$REPO/.spack-env/view" "$PREFIX"
fact ratio "$STATE/reframe/report.json" "$STATE/mcells-ratio.json"
step ingest yeebench results ingest $STATE/reframe/report.json --results-dir $STATE/results
fact provenance "$LOGS/ingest.log" spack.lock

echo "test-spack: passed in $SECONDS s ($(uptime | sed 's/.*load/load/'))"
printf '  %s\n' "${SUMMARY[@]}"
