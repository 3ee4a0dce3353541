# yeebench: `make run` runs the smoke experiments on this machine, `make test` runs every test.
# Each part of the suite adds its own targets in a fragment (solver/solver.mk, ...), included below.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV   ?= .venv
PY     := $(VENV)/bin/python
BUILD  ?= build
PREFIX ?= $(abspath $(BUILD)/install)
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)

# Debian/Ubuntu packages the suite needs to build and run.
DEB_CORE := build-essential cmake pkg-config gfortran openmpi-bin libopenmpi-dev libucx0 ucx-utils \
            hwloc libhwloc-dev numactl libnuma-dev netpipe-openmpi libhdf5-openmpi-dev hdf5-tools \
            python3 python3-venv python3-dev
# Extra packages that only the full test suite needs (containers, virtual cluster, HTML report).
DEB_TEST := chromium docker.io debootstrap charliecloud slurm-wlm munge libpmix-dev iproute2 fio

# Filled in by the fragments. TEST_TARGETS: every stage of `make test`, in order. A stage may also say how
# it shares the machine (.ci/stages.py): TEST_BACKGROUND (builds, and runs of what they built, that judge no
# figure) and TEST_QUIET (stages whose outcome does not depend on timing) run first, TEST_JOBS at a time; the rest,
# which judge measured figures, run one at a time after them. TEST_AFTER holds STAGE:DEP pairs (STAGE starts
# once DEP passed), TEST_HOLDS RESOURCE:STAGE pairs (two stages holding one resource never run at once).
BUILD_TARGETS   :=
TEST_TARGETS    :=
TEST_BACKGROUND :=
TEST_QUIET      := test-python
TEST_AFTER      :=
# pytest's vcluster tests look at the machine's namespaces: no virtual cluster beside them
TEST_HOLDS      := vcluster:test-python
PYTEST_PATHS    := .ci

-include solver/solver.mk
-include microbench/microbench.mk
-include microbench/osu.mk
-include reframe/reframe.mk
-include reframe/package.mk
-include results/results.mk
-include results/export.mk
-include containers/containers.mk
-include reframe/vcluster.mk
-include reframe/acceptance.mk
-include reframe/fuzz.mk
-include spack/spack.mk
-include containers/spack-sif.mk

.PHONY: help deps deps-system deps-test venv build test test-plan test-python run clean disk-room

help:
	@echo "yeebench"
	@echo "  make run     install what is missing, build, run the smoke experiments, record results"
	@echo "  make test    install what is missing, build, run every test (what CI runs); stage times at the end"
	@echo "  make test-plan  which stages make test runs side by side and which alone"
	@echo "  make build   build the solver and the microbenchmarks into $(PREFIX)"
	@echo "  make deps    install Debian packages and the Python virtualenv ($(VENV))"
	@echo "  make clean   remove $(BUILD)/ (the virtualenv and results are kept)"

deps: deps-system venv

deps-system:
	@DEB_PACKAGES="$(DEB_CORE)" bash reframe/install-deps.sh

deps-test:
	@DEB_PACKAGES="$(DEB_CORE) $(DEB_TEST)" bash reframe/install-deps.sh

venv: $(VENV)/.installed

$(VENV)/.installed: reframe/pyproject.toml reframe/constraints.txt
	@command -v python3 >/dev/null || { echo "deps: python3 is missing (apt-get install python3 python3-venv)"; exit 2; }
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -c reframe/constraints.txt -e 'reframe[test]'
	@touch $@

build: deps-system $(BUILD_TARGETS)
	@echo "build: binaries in $(PREFIX)/bin"

test-python: venv
	$(VENV)/bin/pytest -q -p no:cacheprovider --durations=25 $(PYTEST_PATHS)

# TEST_JOBS=1 runs every stage in one line; TEST_BUDGET_MIN=0 lifts the time limit (CI stops at 90 minutes).
# One shared stage more than cores (at most 4): they wait on MPI start-ups, child processes and I/O much
# of the time (the solver's ctest alone keeps 0.73 of 2 cores busy), so a third stage fills the gaps.
TEST_JOBS       ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n + 1 < 4 ? n + 1 : 4 )))
TEST_BUDGET_MIN ?= 75
# TEST_KEEP_GOING=1: every stage whose prerequisites passed runs even after a failure (a full table of times)
TEST_KEEP_GOING ?=
TEST_LOGS       := $(BUILD)/test-logs
TEST_MEASURED   = $(filter-out $(TEST_BACKGROUND) $(TEST_QUIET),$(TEST_TARGETS))
# Priority among the shared stages: the longest without prerequisites first (pytest), then the builds,
# then the quiet stages longest first (TEST_QUIET_LONG: a long stage started last runs alone at the end).
TEST_QUIET_LONG := test-solver test-package test-fuzz test-dry-run
TEST_SHARED     = test-python $(TEST_BACKGROUND) $(foreach s,$(TEST_QUIET_LONG),$(filter $(s),$(TEST_QUIET))) \
                  $(filter-out test-python $(TEST_QUIET_LONG),$(TEST_QUIET))

MAKE_STARTED    := $(shell date +%s)

test: disk-room deps-test venv build
	@python3 .ci/stages.py --logs $(TEST_LOGS) --jobs $(TEST_JOBS) --budget-min $(TEST_BUDGET_MIN) \
	  --done "deps-test+venv+build=$$(( $$(date +%s) - $(MAKE_STARTED) ))" --shared "$(TEST_SHARED)" \
	  --measured "$(TEST_MEASURED)" --after "$(TEST_AFTER)" --holds "$(TEST_HOLDS)" $(if $(TEST_KEEP_GOING),--keep-going)
	@echo "make test: all test stages passed"

# The stage plan `make test` would run, without running it.
test-plan:
	@echo "phase 1 ($(TEST_JOBS) at a time, by priority): $(TEST_SHARED)"
	@echo "phase 2 (one at a time): $(TEST_MEASURED)"
	@echo "waits: $(TEST_AFTER)"; echo "holds: $(TEST_HOLDS)"

# The free space the run starts with, where it writes: the build tree, /tmp (apptainer unpacks images
# there) and the image cache, so that a stage that later stops on a full disk is explained up front.
disk-room:
	@for d in . "$${TMPDIR:-/tmp}" "$(YEEBENCH_CACHE)"; do [ -d "$$d" ] || continue; \
	    df -Pm "$$d" | awk -v d="$$d" 'NR == 2 {printf "make test: %s MiB free in %s (%s)\n", $$4, d, $$6}'; done

clean:
	rm -rf $(BUILD)
