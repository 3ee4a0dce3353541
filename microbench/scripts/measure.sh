#!/usr/bin/env bash
# Records the figures quoted in microbench/README.md: numa-bw copy/triad under several memory policies and
# halo time vs face size, with the machine's description and load, into one folder of raw JSON + summary.md.
#
# usage: microbench/scripts/measure.sh [BIN_DIR] [OUT_DIR]
#   BIN_DIR  where affinity, numa-bw, halo are (default: build/install/bin)
#   OUT_DIR  default: microbench/measurements/<host>-<UTC date>
# Environment: MB_SIZE (bytes per numa-bw array, default 256Mi), MB_RANKS (halo ranks, default 2),
#              MB_SIZES (halo face edges, default 8,16,32,64,128,256)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-build/install/bin}
out=${2:-$here/measurements/$(hostname -s)-$(date -u +%Y%m%dT%H%M%SZ)}
size=${MB_SIZE:-256Mi}
ranks=${MB_RANKS:-2}
sizes=${MB_SIZES:-8,16,32,64,128,256}
cores=$(nproc)
for p in affinity numa-bw halo; do
  [[ -x $bin/$p ]] || { echo "measure.sh: error: $bin/$p not found (run make build first)" >&2; exit 2; }
done
if [[ $(id -u) == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
mkdir -p "$out"

{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $cores CPUs online"
  echo "load_before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "numactl --hardware:"; numactl --hardware | sed 's/^/  /'
} > "$out/machine.txt"

run() { # name, command...: JSON to name.json, the command line to commands.txt
  local name=$1; shift
  echo "$name: $*" >> "$out/commands.txt"
  "$@" > "$out/$name.json"
}
bw=("$bin/numa-bw" --size "$size" --repeats 20)
run affinity-bind-core mpirun -np "$ranks" --bind-to core "$bin/affinity" --expect core
run numa-bw-1thread env OMP_NUM_THREADS=1 OMP_PROC_BIND=close "${bw[@]}"
run numa-bw-all env OMP_NUM_THREADS="$cores" OMP_PROC_BIND=close "${bw[@]}"
run numa-bw-serial-touch env OMP_NUM_THREADS="$cores" OMP_PROC_BIND=close "${bw[@]}" --first-touch serial
run numa-bw-interleave env OMP_NUM_THREADS="$cores" OMP_PROC_BIND=close numactl --interleave=all "${bw[@]}"
run numa-bw-membind0 env OMP_NUM_THREADS="$cores" OMP_PROC_BIND=close numactl --membind=0 "${bw[@]}" --expect-nodes 0
for prec in f32 f64; do
  run "halo-$prec" env OMP_NUM_THREADS=1 mpirun -np "$ranks" --bind-to core "$bin/halo" --sizes "$sizes" --precision "$prec"
done
# One rank exchanging with itself (periodic): the pack/copy/unpack cost without waiting for a partner rank.
run halo-self-f32 env OMP_NUM_THREADS=1 "$bin/halo" --periodic --sizes "$sizes" --precision f32
echo "load_after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"

python3 - "$out" > "$out/summary.md" <<'PY'
import json, os, sys
out = sys.argv[1]
load = lambda n: json.load(open(os.path.join(out, n + ".json")))
print("| numa-bw run | threads | policy | pages by node | copy best / avg GB/s | triad best / avg GB/s |")
print("|---|---|---|---|---|---|")
for name in ("numa-bw-1thread", "numa-bw-all", "numa-bw-serial-touch", "numa-bw-interleave", "numa-bw-membind0"):
    d = load(name); k = d["kernels"]
    pages = ", ".join(f"{n}: {f:.2f}" for n, f in d["pages"]["fraction_by_node"].items())
    print(f"| {name} | {d['threads']} | {d['mempolicy']} ({d['first_touch']} touch) | {pages} | "
          f"{k['copy']['best_gbs']:.1f} / {k['copy']['avg_gbs']:.1f} | {k['triad']['best_gbs']:.1f} / {k['triad']['avg_gbs']:.1f} |")
print()
print("| halo precision | ranks, dims | face edge | face cells | bytes sent by busiest rank | time median (us) | time min / avg / max (us) | bandwidth all ranks GB/s |")
print("|---|---|---|---|---|---|---|---|")
for name in ("halo-f32", "halo-f64", "halo-self-f32"):
    d = load(name)
    prec = d["precision"] + (" self" if name.endswith("self-f32") else "")
    for r in d["results"]:
        print(f"| {prec} | {d['ranks']}, {'x'.join(map(str, d['dims']))} | {r['face_side']} | {r['face_cells']} | "
              f"{r['bytes_per_exchange']} | {r['time_median_s']*1e6:.1f} | {r['time_min_s']*1e6:.1f} / {r['time_avg_s']*1e6:.1f} / {r['time_max_s']*1e6:.1f} | "
              f"{r['bandwidth_gbs']:.3f} |")
PY
echo "$out"
