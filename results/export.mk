# results/export.mk: the smoke run in a real time-series database (included by the top-level Makefile
# after reframe/reframe.mk, whose test-suite stage records the run it pushes).
#   make test-export   push the run test-suite just recorded to a VictoriaMetrics started on 127.0.0.1
#                      (each format it accepts), read every figure back equal, answer the Grafana
#                      dashboard's queries from it; the database is stopped by its PID in every case
# It judges no timing, but it needs test-suite's report, and test-suite runs in the measured phase:
# so it is a measured stage (not TEST_QUIET), listed after test-suite, and starts once test-suite passed.
DEB_TEST     += victoria-metrics
TEST_TARGETS += test-export
TEST_AFTER   += test-export:test-suite

.PHONY: test-export

test-export: venv
	@test -s $(SUITE_REPORT) || { echo "$@: $(SUITE_REPORT) is missing: run 'make test-suite' first"; exit 2; }
	$(PY) results/export_ci.py --report $(SUITE_REPORT) --out $(BUILD)/export
