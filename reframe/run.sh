#!/usr/bin/env bash
# `make run`: the smoke experiments on this machine (system `local`), recorded as a results run.
# Usage: bash reframe/run.sh [extra reframe options, e.g. -n FdtdStrongScaling or -S NetPIPEPt2Pt.repeats=50]
# Environment: VENV (.venv), PREFIX (build/install: where `make build` put the binaries),
#              YEEBENCH_RFM_DIR (build/reframe: stage, output, perflogs, reports), RESULTS_DIR (results),
#              RUN_SELECTION (default '--mode smoke', the smoke set at its smoke sizes; e.g. '-t full'
#              or '--mode smoke -t network').
set -uo pipefail
# The checks' build jobs run in their stage directories: relative paths are the caller's, made absolute
# before leaving its folder (a relative PREFIX would name nothing there, and yee would be rebuilt each run).
for var in PREFIX YEEBENCH_RFM_DIR RESULTS_DIR; do
    [ -n "${!var:-}" ] && printf -v "$var" '%s' "$(realpath -m -- "${!var}")"
done
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PREFIX=${PREFIX:-$PWD/build/install}
RFM_DIR=${YEEBENCH_RFM_DIR:-$PWD/build/reframe}
RESULTS_DIR=${RESULTS_DIR:-results}
export YEEBENCH_PREFIX=$PREFIX YEEBENCH_RFM_DIR=$RFM_DIR

if [ ! -x "$VENV/bin/reframe" ]; then
    echo "run: $VENV/bin/reframe is missing: run 'make deps' first" >&2
    exit 2
fi
[ -x "$PREFIX/bin/yee" ] || echo "run: note: $PREFIX/bin/yee not found; checks look on PATH or build it with CMake"

mkdir -p "$RFM_DIR/reports"
report=$RFM_DIR/reports/run-$(date -u +%Y%m%dT%H%M%SZ).json
read -r -a selection <<< "${RUN_SELECTION:---mode smoke}"

"$VENV/bin/reframe" -C reframe/config/settings.py -c reframe/yeebench/checks -R --system local \
    "${selection[@]}" "$@" -r --report-file "$report"
rfm_status=$?

run_dir=""
html=""
if [ ! -s "$report" ]; then
    echo "run: ReFrame wrote no report ($report)" >&2
elif ! "$VENV/bin/yeebench" results ingest --help > /dev/null 2>&1; then
    echo "run: note: 'yeebench results ingest' is not available in this checkout; the ReFrame report is kept"
else
    ingest_err=$(mktemp)
    run_dir=$("$VENV/bin/yeebench" results ingest "$report" --results-dir "$RESULTS_DIR" 2> "$ingest_err" | tail -n 1)
    cat "$ingest_err" >&2
    # plausibility warnings belong beside ReFrame's own account of the run
    if [ -f "$RFM_DIR/reframe.log" ]; then
        grep '^ingest: plausibility warning' "$ingest_err" | sed "s/^/[$(date -u +%FT%T)] warning: /" \
            >> "$RFM_DIR/reframe.log"
    fi
    rm -f "$ingest_err"
    if [ -n "$run_dir" ] && [ -d "$run_dir" ]; then
        html=$run_dir/report.html
        "$VENV/bin/yeebench" results report "$run_dir" -o "$html" > /dev/null || html=""
        [ -n "$html" ] && [ ! -s "$html" ] && html=""
    else
        echo "run: 'yeebench results ingest' did not record the report" >&2
        run_dir=""
    fi
fi

# only paths this run wrote (or that exist): never point at a file that is not there
show() { [ -e "$2" ] && printf '  %-16s %s\n' "$1" "$2"; return 0; }
echo
echo "run: where everything is"
show "ReFrame report" "$report"
show "perflogs" "$RFM_DIR/perflogs/local/default"
show "stage" "$RFM_DIR/local/stage"
show "output" "$RFM_DIR/local/output"
show "ReFrame log" "$RFM_DIR/reframe.log"
show "ReFrame DB" "$RFM_DIR/results-db/local.db"
[ -n "$run_dir" ] && show "results run" "$run_dir"
[ -n "$html" ] && show "HTML report" "$html"
if [ $rfm_status -ne 0 ]; then
    echo "run: some checks failed (ReFrame exit status $rfm_status); see the failure summary above" >&2
fi
exit $rfm_status
