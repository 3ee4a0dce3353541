# Acceptance set (reframe/checks/acceptance*.py, tag `acceptance`): included by the top-level Makefile.
#   make acceptance       run the acceptance set on this machine and write the sign-off page
#   make test-acceptance  the same, as a CI stage: fails when a check fails or no page is produced
# Unit tests of the acceptance library run in test-python (PYTEST_PATHS).
ACCEPTANCE_CHECKS := $(foreach f,acceptance acceptance_node acceptance_perf acceptance_gpu,-c reframe/checks/$(f).py)
ACCEPTANCE_OUT    := $(abspath $(BUILD)/acceptance)
# Extra ReFrame options, e.g. ACCEPTANCE_RFM_OPTS='--system vcluster -S AcceptanceNetwork.tolerance=1.0'
ACCEPTANCE_RFM_OPTS ?= -p host

PYTEST_PATHS += reframe/yeebench/acceptance/tests
TEST_TARGETS += test-acceptance

.PHONY: acceptance test-acceptance

# The ReFrame run's exit status is kept until the page is written, so a failing check still
# yields the page that says why; serial execution keeps timings from sharing the cores.
acceptance test-acceptance: venv
	@test -x $(PREFIX)/bin/numa-bw || { echo "$@: $(PREFIX)/bin has no binaries: run 'make build' first"; exit 2; }
	@rm -rf $(ACCEPTANCE_OUT) && mkdir -p $(ACCEPTANCE_OUT)
	@set -o pipefail; rc=0; \
	YEEBENCH_PREFIX=$(PREFIX) YEEBENCH_RFM_DIR=$(ACCEPTANCE_OUT)/reframe \
	  $(VENV)/bin/reframe -C reframe/config/settings.py $(ACCEPTANCE_CHECKS) -t acceptance \
	  $(ACCEPTANCE_RFM_OPTS) -r --exec-policy=serial --report-file $(ACCEPTANCE_OUT)/report.json \
	  > $(ACCEPTANCE_OUT)/reframe.out 2>&1 || rc=$$?; \
	grep -a '^\[acceptance\]\|^\[ *\(PASSED\|FAILED\) *\]' $(ACCEPTANCE_OUT)/reframe.out | sed 's/\x1b\[[0-9;]*m//g'; \
	test -s $(ACCEPTANCE_OUT)/report.json || { echo "$@: ReFrame wrote no report (see $(ACCEPTANCE_OUT)/reframe.out)"; tail -20 $(ACCEPTANCE_OUT)/reframe.out; exit 1; }; \
	$(VENV)/bin/yeebench acceptance report $(ACCEPTANCE_OUT)/report.json -o $(ACCEPTANCE_OUT)/acceptance.html --results-page $(ACCEPTANCE_OUT)/results.html || exit 1; \
	grep -q '<h1>yeebench acceptance report</h1>' $(ACCEPTANCE_OUT)/acceptance.html || { echo "$@: no HTML page"; exit 1; }; \
	echo "$@: page $(ACCEPTANCE_OUT)/acceptance.html, ReFrame output $(ACCEPTANCE_OUT)/reframe.out"; \
	if [ $$rc -ne 0 ]; then tail -40 $(ACCEPTANCE_OUT)/reframe.out; fi; exit $$rc
