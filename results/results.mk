# results/results.mk: the results tooling's tests and the CI performance-regression gate
# (included by the top-level Makefile).
PYTEST_PATHS += reframe/yeebench/results/tests
TEST_TARGETS += test-gate test-suite-report
TEST_AFTER   += test-suite-report:test-suite

.PHONY: test-gate gate-benchmark test-suite-report

# The HTML report of the smoke run that `test-suite` just made, in headless Chromium: the layout checks
# on a real run's figures (about 20 s; the smoke set is not run again). Screenshots:
# $(BUILD)/report-screenshots/smoke-run-{1280,800}px.png
test-suite-report: venv
	@test -s $(SUITE_REPORT) || { echo "$@: $(SUITE_REPORT) is missing: run 'make test-suite' first"; exit 2; }
	YEEBENCH_SUITE_REPORT=$(SUITE_REPORT) $(VENV)/bin/pytest -q -p no:cacheprovider \
	  reframe/yeebench/results/tests/test_results_report.py -k this_checkouts_smoke_run

# Two short runs of the gate check, ingested and compared with default settings: must pass.
test-gate: venv
	rm -rf $(BUILD)/gate
	YEEBENCH_PREFIX=$(PREFIX) $(PY) results/gate/gate_ci.py --out $(BUILD)/gate

# Detection / false-alarm rates of the gate on this machine (about 20-40 minutes; not part of `make test`).
gate-benchmark: venv
	YEEBENCH_PREFIX=$(PREFIX) $(PY) results/gate/gate_benchmark.py --trials 20 --out $(BUILD)/gate-benchmark

.PHONY: history-benchmark
# Compare time against 1,000 recorded runs x 50 figures (synthetic; about 2 minutes, most of it the first
# cache build). Not part of `make test`: timings on a shared machine are not a pass/fail test.
history-benchmark: venv
	$(PY) results/history_benchmark.py --runs 1000 --figures 50 --out $(BUILD)/history-benchmark

.PHONY: gate-readme-benchmark
# False alarms and detection of a real 20 % solver slowdown on the README's `make run` workflow (reframe/run.sh,
# smoke selection, default compare settings with the recorded history); about 1.5-4 minutes per trial.
gate-readme-benchmark: venv
	$(PY) results/gate/readme_benchmark.py --trials 20 --prefix $(PREFIX) --out $(BUILD)/gate-readme -- --repeat 5 -n FdtdStrongScaling

.PHONY: scale-benchmark test-scale
# Cost of ingest, compare and report against the size of a run: the recorded smoke run on 1, 10, 100 and
# 1,000 nodes of 16 partitions in 4 environments (27 to 27,016 test cases; results/scale_report.py), each
# tool timed for wall and CPU seconds, peak memory and output size; about 10 minutes. Not part of
# `make test` (timings on a shared machine are no pass/fail test); results/README.md has the table.
scale-benchmark: venv
	$(PY) results/scale_benchmark.py --scales 1,10,100,1000 --out $(BUILD)/scale-benchmark

# The tools' CPU time grows no faster than the run between 270 and 2,716 test cases (exponent at most
# 1.15): a per-test-case cost that grows faster (a quadratic match, a schema walk per row) fails here.
TEST_TARGETS += test-scale
TEST_QUIET   += test-scale
test-scale: venv
	$(PY) results/scale_benchmark.py --scales 1,10,100 --max-exponent 1.15 --out $(BUILD)/test-scale
