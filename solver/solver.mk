# solver/solver.mk: build, install and test the FDTD solver `yee` (included by the top-level Makefile).
SOLVER_BUILD := $(BUILD)/solver
SOLVER_SAN   := $(BUILD)/solver-sanitize

BUILD_TARGETS += build-solver
TEST_TARGETS  += test-solver

.PHONY: build-solver test-solver test-solver-release test-solver-sanitize

build-solver:
	cmake -S solver -B $(SOLVER_BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	cmake --build $(SOLVER_BUILD) -j$(JOBS)
	cmake --install $(SOLVER_BUILD)

# Release build: every verification test (cavity, energy, decomposition, divergence, bad input).
test-solver-release: build-solver
	cd $(SOLVER_BUILD) && YEE_PY=$(abspath $(PY)) ctest --output-on-failure -j1

# Sanitizer build (ASan + UBSan): the small tests and the fuzz test.
test-solver-sanitize:
	cmake -S solver -B $(SOLVER_SAN) -DCMAKE_BUILD_TYPE=Debug -DYEE_SANITIZE=ON -DYEE_MARCH= -DYEE_SANITIZE_TESTS=ON
	cmake --build $(SOLVER_SAN) -j$(JOBS)
	cd $(SOLVER_SAN) && YEE_PY=$(abspath $(PY)) ctest --output-on-failure -j1 -L sanitize

test-solver: test-solver-release test-solver-sanitize
