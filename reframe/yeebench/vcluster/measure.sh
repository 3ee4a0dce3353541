#!/usr/bin/env bash
# Intra- vs inter-node NetPIPE on the virtual cluster, for each link rate given (default: none 1gbit),
# with the time to bring the cluster up and down. Run from the repository root as root:
#   bash reframe/yeebench/vcluster/measure.sh [RATE...]       e.g.  none 1gbit 10gbit
# Prints one line per rate, launcher and locality; the ReFrame reports stay in build/vcluster-measure/.
set -euo pipefail
cd "$(dirname "$0")/../../.."
Y=.venv/bin/yeebench
OUT=build/vcluster-measure
NODES=${NODES:-2}
mkdir -p "$OUT"
for rate in "${@:-none 1gbit}"; do
  for r in $rate; do
    t0=$(date +%s.%N); $Y vcluster up --nodes "$NODES" --link-rate "$r" >/dev/null; t1=$(date +%s.%N)
    rc=0
    YEEBENCH_RFM_DIR=$PWD/$OUT/rfm-$r $Y vcluster exec -- .venv/bin/reframe -C reframe/config/settings.py \
      -c reframe/yeebench/checks/pt2pt/vcluster_pt2pt.py --system vcluster --exec-policy=serial -r \
      --report-file "$PWD/$OUT/report-$r.json" >"$OUT/reframe-$r.out" 2>&1 || rc=$?
    t2=$(date +%s.%N); $Y vcluster down >/dev/null; t3=$(date +%s.%N)
    printf 'link %-7s up %.1f s, down %.1f s, reframe exit %d, load %s\n' "$r" "$(awk "BEGIN{print $t1 - $t0}")" \
      "$(awk "BEGIN{print $t3 - $t2}")" "$rc" "$(cut -d' ' -f1 /proc/loadavg)"
    .venv/bin/python - "$OUT/report-$r.json" <<'PY'
import sys
from yeebench.vcluster.verify import load_rows
rows = load_rows(sys.argv[1])
for part in sorted({r.partition for r in rows}):
    for loc in ("intra", "inter"):
        v = {r.metric: r.value for r in rows if r.partition == part and r.locality == loc}
        if v:
            print(f"  {part:<7} {loc:<6} latency_1B {v.get('latency_1B', float('nan')):9.2f} us   "
                  f"bw_large {v.get('bw_large', float('nan')):8.1f} MB/s   bw_peak {v.get('bw_peak', float('nan')):8.1f} MB/s")
PY
  done
done
