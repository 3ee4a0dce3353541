# solver/solver.mk: build, install and test the FDTD solver `yee` (included by the top-level Makefile).
#   make build-solver          Release build into $(BUILD)/solver, installs yee and yee-triad to $(PREFIX)/bin
#   make test-solver           release verification tests + sanitizer build with its small tests and fuzz
#   make bench-solver          benchmark (not part of make test): Mcells/s vs the triad roofline
SOLVER_BUILD := $(BUILD)/solver
SOLVER_SAN   := $(BUILD)/solver-sanitize

BUILD_TARGETS += build-solver
TEST_TARGETS  += test-solver

.PHONY: build-solver test-solver test-solver-release test-solver-sanitize bench-solver

build-solver:
	cmake -S solver -B $(SOLVER_BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	cmake --build $(SOLVER_BUILD) -j$(JOBS)
	cmake --install $(SOLVER_BUILD)

# Cavity modes, energy, decomposition invariance (mpirun, up to 8 ranks), divergence, bad input,
# field output (its tests use the venv's numpy/h5py through YEE_PY).
test-solver-release: build-solver
	cd $(SOLVER_BUILD) && YEE_PY=$(abspath $(PY)) ctest --output-on-failure -L verify

# ASan + UBSan build: small tests and >= 1000 fuzzed command lines / config files.
test-solver-sanitize:
	cmake -S solver -B $(SOLVER_SAN) -DCMAKE_BUILD_TYPE=Debug -DYEE_SANITIZE=ON -DYEE_MARCH=
	cmake --build $(SOLVER_SAN) -j$(JOBS)
	cd $(SOLVER_SAN) && YEE_PY=$(abspath $(PY)) ctest --output-on-failure -L sanitize

test-solver: test-solver-release test-solver-sanitize

bench-solver: build-solver
	python3 solver/bench/run_bench.py --yee $(PREFIX)/bin/yee --triad $(PREFIX)/bin/yee-triad --out $(BUILD)/solver-bench.json

# CUDA backend. CI has nvcc but no GPU: test-solver-cuda-build compiles the backend with
# nvcc (CUDA_ARCHS -> CMAKE_CUDA_ARCHITECTURES, default 90 = sm_90 + PTX) and runs its
# tests; the GPU ones report "Skipped" with the reason where nvidia-smi lists no GPU.
#   make build-solver-cuda       CUDA build into $(BUILD)/solver-cuda; installs yee-cuda, yee-cuda-copy to $(PREFIX)/bin
#   make bench-solver-cuda       on a GPU node: Gcells/s, GB/s, % of measured copy bandwidth
SOLVER_CUDA := $(BUILD)/solver-cuda
CUDA_ARCHS  ?= 90
TEST_TARGETS += test-solver-cuda-build

.PHONY: build-solver-cuda test-solver-cuda-build test-solver-cuda-run bench-solver-cuda

build-solver-cuda:
	cmake -S solver -B $(SOLVER_CUDA) -DCMAKE_BUILD_TYPE=Release -DYEE_BACKEND=cuda \
	  -DCMAKE_CUDA_ARCHITECTURES="$(CUDA_ARCHS)" -DYEE_CPU_BIN=$(abspath $(SOLVER_BUILD))/yee \
	  -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	cmake --build $(SOLVER_CUDA) -j$(JOBS)
	cmake --install $(SOLVER_CUDA)

# Without a CUDA compiler there is nothing to compile: say so instead of failing.
test-solver-cuda-build:
	@if command -v nvcc >/dev/null 2>&1 || [ -n "$$CUDACXX" ]; then \
	  $(MAKE) --no-print-directory test-solver-cuda-run; \
	else echo "test-solver-cuda-build: SKIP: no nvcc on PATH (and CUDACXX unset): the CUDA backend was not compiled"; fi

test-solver-cuda-run: build-solver-cuda build-solver
	cd $(SOLVER_CUDA) && { ctest --output-on-failure -L 'cuda-host|cuda-gpu'; rc=$$?; \
	  grep -h '^SKIP' Testing/Temporary/LastTest.log || true; exit $$rc; }

bench-solver-cuda: build-solver-cuda
	python3 solver/bench/run_cuda_bench.py --yee $(SOLVER_CUDA)/yee-cuda --copy $(SOLVER_CUDA)/yee-cuda-copy \
	  --out $(BUILD)/solver-cuda-bench.json
