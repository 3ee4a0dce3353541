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
