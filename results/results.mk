# results/results.mk: the results tooling's tests and the CI performance-regression gate
# (included by the top-level Makefile).
PYTEST_PATHS += reframe/yeebench/results/tests
TEST_TARGETS += test-gate

.PHONY: test-gate gate-benchmark

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
