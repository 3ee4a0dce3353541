# Containers: build the Docker image from containers/Dockerfile and run it for real (containers/ci-build.sh:
# private dockerd, debootstrap'd debian:bookworm base, in-container self-test, native-vs-container ReFrame
# check, Charliecloud run). Budget in CI: under 10 minutes. The base tarball and Docker's layer store are
# cached in $(YEEBENCH_CACHE) (outside the repository) between runs.
YEEBENCH_CACHE ?= /var/cache/yeebench

TEST_TARGETS += test-containers
PYTEST_PATHS += spack/tests containers/tests

.PHONY: test-containers

test-containers: venv build
	YEEBENCH_CACHE=$(YEEBENCH_CACHE) YEEBENCH_PREFIX=$(PREFIX) PY=$(PY) JOBS=2 bash containers/ci-build.sh
