# Spack stage (included by the top-level Makefile): spack.yaml concretized, installed with the recipes'
# tests, `spack test run`, and ReFrame's smoke set on what Spack built (spack/stage.sh, spack/README.md).
#   make test-spack   CI stage; from clean 626 s on a loaded 2-core machine (spack/README.md), about
#                     2 minutes when an earlier run's installs in build/spack are reused
# Spack: `spack` on PATH, else $SPACK_ROOT, else the lab's copy ($YEEBENCH_LAB, default ../shared/lab);
# none of them: the stage says where it looked and skips.
SPACK_STATE := $(abspath $(BUILD)/spack)

TEST_TARGETS += test-spack
# Builds and installs with Spack's own tests: nothing it judges depends on timing (beside other stages in make test)
TEST_BACKGROUND += test-spack

.PHONY: test-spack clean-spack

# `make clean` also drops the environment's state at the repository root (it points into $(BUILD)/spack).
clean: clean-spack
clean-spack:
	rm -rf .spack-env spack.lock build-linux-*

test-spack: venv
	@test -x $(PREFIX)/bin/yee || { echo "$@: $(PREFIX)/bin has no yee (the CMake build the ratio compares with): run 'make build' first"; exit 2; }
	@VENV=$(VENV) PREFIX=$(PREFIX) SPACK_STATE=$(SPACK_STATE) bash spack/stage.sh
