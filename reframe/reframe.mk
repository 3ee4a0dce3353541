# ReFrame suite: the experiment checks (reframe/yeebench/checks/<experiment>/),
# their library (reframe/yeebench: base classes, fixtures, placement, parsers) and the configuration.
#   make run          install what is missing, build, run the smoke set on this machine, record results
#   make test-suite   CI stage: a real ReFrame run of the smoke set that must pass (<= 5 min on 2 cores)
# Stage, output, perflogs and reports go to $(BUILD)/reframe (git-ignored).
SUITE_RFM_DIR := $(abspath $(BUILD)/reframe)
SUITE_REPORT  := $(SUITE_RFM_DIR)/reports/test-suite.json
# Extra ReFrame options, e.g. SUITE_RFM_OPTS='-n NetPIPEPt2Pt' or '-S FdtdStrongScaling.grid=64'
SUITE_RFM_OPTS ?=

PYTEST_PATHS += reframe/yeebench/tests
TEST_TARGETS += test-suite

.PHONY: run test-suite

run: deps build
	@VENV=$(VENV) PREFIX=$(PREFIX) YEEBENCH_RFM_DIR=$(SUITE_RFM_DIR) bash reframe/run.sh $(SUITE_RFM_OPTS)

test-suite: venv
	@test -x $(PREFIX)/bin/yee || { echo "$@: $(PREFIX)/bin has no yee: run 'make build' first"; exit 2; }
	YEEBENCH_PREFIX=$(PREFIX) YEEBENCH_RFM_DIR=$(SUITE_RFM_DIR) $(VENV)/bin/reframe \
	  -C reframe/config/settings.py -c reframe/yeebench/checks -R --system local --mode smoke $(SUITE_RFM_OPTS) \
	  -r --report-file $(SUITE_REPORT)

# Static checks of the check library, run by `make test`:
#   make lint             ruff (pinned in reframe/pyproject.toml's test extra) over the suite's Python
#   make test-dry-run     every check through ReFrame's pipeline up to the job scripts (--dry-run),
#                         warnings as errors, on `local` (all cases) and on the Slurm template
#                         `generic-slurm` with a launch host PATH holding nothing (no MPI, OSU, NetPIPE;
#                         --flex-alloc-nodes=2: the acceptance checks' "all nodes" would ask scontrol)
LINT_PATHS := reframe results containers spack .ci
TEST_TARGETS += lint test-dry-run
TEST_QUIET   += lint test-dry-run

.PHONY: lint test-dry-run

lint: venv
	$(VENV)/bin/ruff check --config reframe/pyproject.toml $(LINT_PATHS)

test-dry-run: venv
	@rm -rf $(SUITE_RFM_DIR)/dry-run
	@# the two systems in parallel (one core each): about a minute instead of two
	@YEEBENCH_PREFIX=$(PREFIX) YEEBENCH_RFM_DIR=$(SUITE_RFM_DIR)/dry-run/local $(VENV)/bin/reframe \
	  -C reframe/config/settings.py -c reframe/yeebench/checks -R --system local --dry-run --warn-as-error -q & local=$$!; \
	env -i HOME=$(abspath $(SUITE_RFM_DIR)/dry-run) PATH=/nonexistent \
	  YEEBENCH_RFM_DIR=$(abspath $(SUITE_RFM_DIR)/dry-run/generic-slurm) $(abspath $(VENV))/bin/reframe \
	  -C reframe/config/settings.py -c reframe/yeebench/checks -R --system generic-slurm -p host --dry-run --warn-as-error -q \
	  --flex-alloc-nodes=2; slurm=$$?; wait $$local; local=$$?; \
	echo "test-dry-run: local exit $$local, generic-slurm (empty launch-host PATH) exit $$slurm"; \
	test $$local -eq 0 && test $$slurm -eq 0
