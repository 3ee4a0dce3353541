#!/usr/bin/env bash
# Run the acceptance set (checks tagged `acceptance`) and write the sign-off page.
#   usage: run.sh OUT_DIR [reframe options, e.g. --system vcluster:srun -p host]
# Prints every check's `[acceptance] PASS|FAIL|NOT MEASURED` line and the page's path; exits with
# ReFrame's status (non-zero when a check failed) once the page is written, 1 if none could be.
# The page takes the availability log and the operator's waivers from the environment:
#   ACCEPTANCE_AVAILABILITY=LOG.csv  ACCEPTANCE_WAIVERS=waivers.yaml
set -uo pipefail
if [ $# -lt 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 2
fi
out=$1; shift
repo=$(cd "$(dirname "$0")/../../.." && pwd)
venv=${YEEBENCH_VENV:-$repo/.venv}
checks=()
# the acceptance checks (tag `acceptance`) live in their experiments' folders
for f in acceptance/acceptance acceptance/acceptance_node acceptance/acceptance_multicast acceptance/acceptance_scaling \
         numa/acceptance_numa pt2pt/acceptance_network io/acceptance_storage gpu/acceptance_gpu \
         gpu/acceptance_gpu_stress gpu/acceptance_opencl; do
    checks+=(-c "$repo/reframe/yeebench/checks/$f.py")
done

rm -rf "$out" && mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
rc=0
# serial: performance checks must not share the cores with each other
YEEBENCH_RFM_DIR=$out/reframe "$venv/bin/reframe" -C "$repo/reframe/config/settings.py" "${checks[@]}" \
    -t acceptance -r --exec-policy=serial --report-file "$out/report.json" "$@" > "$out/reframe.out" 2>&1 || rc=$?
sed 's/\x1b\[[0-9;]*m//g' "$out/reframe.out" | grep -a '^\[acceptance\]'
if [ ! -s "$out/report.json" ]; then
    echo "acceptance: ReFrame wrote no report; its output ($out/reframe.out) ends:"; tail -20 "$out/reframe.out"
    exit 1
fi
page_opts=()
[ -n "${ACCEPTANCE_AVAILABILITY:-}" ] && page_opts+=(--availability "$ACCEPTANCE_AVAILABILITY")
[ -n "${ACCEPTANCE_WAIVERS:-}" ] && page_opts+=(--waivers "$ACCEPTANCE_WAIVERS")
"$venv/bin/yeebench" acceptance report "$out/report.json" -o "$out/acceptance.html" \
    --results-page "$out/results.html" "${page_opts[@]}" > /dev/null || exit 1
grep -q '<h1>yeebench acceptance report</h1>' "$out/acceptance.html" || { echo "acceptance: no HTML page"; exit 1; }
echo "acceptance: page $out/acceptance.html (ReFrame output $out/reframe.out)"
if [ "$rc" -ne 0 ]; then
    # ReFrame's failure blocks whole, their reasons included, so that a log's last lines say why
    sed 's/\x1b\[[0-9;]*m//g' "$out/reframe.out" | awk '/^FAILURE INFO/ { p = 1 } /^-----/ { p = 0 } p' | head -80
fi
exit "$rc"
