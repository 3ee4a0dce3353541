# Fuzz stage of `make test` (included by the top-level Makefile): crafted reports, damaged results trees
# and special files (FIFOs, devices, /proc files, links, sparse 3 GB files) through every results and
# acceptance command, from a fixed seed and the corpus in reframe/yeebench/tests/fuzz/corpus/. Fails on a
# traceback, an undocumented exit code, a hang, a write outside the named outputs or a special file
# replaced. About 1.5 minutes on one core; it starts no command after FUZZ_BUDGET_S.
#   make test-fuzz                       the stage
#   make test-fuzz FUZZ_SEED=7           another corpus of crafted reports
FUZZ_SEED     ?= 20260101
FUZZ_BUDGET_S ?= 170

TEST_TARGETS += test-fuzz
TEST_QUIET   += test-fuzz

.PHONY: test-fuzz

test-fuzz: venv
	$(PY) reframe/yeebench/tests/fuzz/fuzz_commands.py --seed $(FUZZ_SEED) --budget-s $(FUZZ_BUDGET_S)
