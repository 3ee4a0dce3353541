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

# Cavity modes, energy, decomposition invariance (mpirun, up to 8 ranks), divergence, bad input.
test-solver-release: build-solver
	cd $(SOLVER_BUILD) && ctest --output-on-failure -L verify

# ASan + UBSan build: small tests and >= 1000 fuzzed command lines / config files.
test-solver-sanitize:
	cmake -S solver -B $(SOLVER_SAN) -DCMAKE_BUILD_TYPE=Debug -DYEE_SANITIZE=ON -DYEE_MARCH=
	cmake --build $(SOLVER_SAN) -j$(JOBS)
	cd $(SOLVER_SAN) && ctest --output-on-failure -L sanitize

test-solver: test-solver-release test-solver-sanitize

bench-solver: build-solver
	python3 solver/bench/run_bench.py --yee $(PREFIX)/bin/yee --triad $(PREFIX)/bin/yee-triad --out $(BUILD)/solver-bench.json
