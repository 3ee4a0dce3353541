# solver/solver.mk: build, install and test the FDTD solver `yee` (included by the top-level Makefile).
#   make build-solver          Release build into $(BUILD)/solver, installs yee and yee-triad to $(PREFIX)/bin
#   make test-solver           release verification tests + sanitizer build with its small tests and fuzz
#   make bench-solver          benchmark (not part of make test): Mcells/s vs the triad roofline
SOLVER_BUILD := $(BUILD)/solver
SOLVER_SAN   := $(BUILD)/solver-sanitize

BUILD_TARGETS += build-solver
TEST_TARGETS  += test-solver
TEST_QUIET    += test-solver

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

# The wavefront kernel's table (solver/README.md): fused and wavefront, 1 rank x 2 threads and
# 2 ranks x 1 thread, f32/f64, 128^3-384^3 (about 10 minutes on 2 cores; needs a quiet machine).
BENCH_SOLVER_ARGS ?= --sizes 128,256,384 --precisions f32,f64 --layouts 1x2,2x1 --kernels fused,wavefront --repeats 3
bench-solver: build-solver
	python3 solver/bench/run_bench.py --yee $(PREFIX)/bin/yee --triad $(PREFIX)/bin/yee-triad $(BENCH_SOLVER_ARGS) \
	  --out $(BUILD)/solver-bench.json

# The other backends: every folder of src/backends/ with a backend.cmake besides cpu (the
# reference build above), the list CMakeLists.txt reads. A backend's optional backend.mk sets
# SOLVER_BACKEND_TOOLCHAIN_<b> (a shell test: is its compiler here?) and SOLVER_BACKEND_CMAKE_ARGS_<b>.
#   make build-solver-<b>        build into $(BUILD)/solver-<b>; installs its binaries to $(PREFIX)/bin
#   make test-solver-<b>-build   (part of make test) that build and its tests where the toolchain
#                                exists (tests needing absent hardware report "Skipped" with the
#                                reason); elsewhere one SKIP line naming what is missing
SOLVER_BACKENDS := $(sort $(patsubst solver/src/backends/%/backend.cmake,%,$(wildcard solver/src/backends/*/backend.cmake)))
SOLVER_OTHER_BACKENDS := $(filter-out cpu,$(SOLVER_BACKENDS))
-include $(wildcard solver/src/backends/*/backend.mk)

define solver_backend_rules
TEST_TARGETS += test-solver-$(1)-build
TEST_QUIET   += test-solver-$(1)-build
.PHONY: build-solver-$(1) test-solver-$(1)-build test-solver-$(1)-run

build-solver-$(1):
	cmake -S solver -B $(BUILD)/solver-$(1) -DCMAKE_BUILD_TYPE=Release -DYEE_BACKEND=$(1) \
	  $$(SOLVER_BACKEND_CMAKE_ARGS_$(1)) -DYEE_CPU_BIN=$$(abspath $$(SOLVER_BUILD))/yee \
	  -DCMAKE_INSTALL_PREFIX=$$(PREFIX)
	cmake --build $(BUILD)/solver-$(1) -j$$(JOBS)
	cmake --install $(BUILD)/solver-$(1)

test-solver-$(1)-build:
	@if $$(or $$(SOLVER_BACKEND_TOOLCHAIN_$(1)),true); then \
	  $$(MAKE) --no-print-directory test-solver-$(1)-run; \
	else echo "test-solver-$(1)-build: SKIP: $$(SOLVER_BACKEND_MISSING_$(1)): the $(1) backend was not compiled"; fi

test-solver-$(1)-run: build-solver-$(1) build-solver
	cd $(BUILD)/solver-$(1) && { ctest --output-on-failure; rc=$$$$?; \
	  grep -h '^SKIP' Testing/Temporary/LastTest.log || true; exit $$$$rc; }
endef
$(foreach b,$(SOLVER_OTHER_BACKENDS),$(eval $(call solver_backend_rules,$(b))))
