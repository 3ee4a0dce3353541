# The Spack-built Apptainer image (included by the top-level Makefile after spack/spack.mk):
# containers/yeebench-spack.def, generated from spack.yaml, built offline from the Debian 12 minbase
# (containers/spack-sif.sh) with what `make test-spack` installed handed in as a build cache + spack.lock,
# then the smoke set inside it, native vs container on this machine and on two virtual-cluster nodes.
#   make test-containers-spack            build + %test + smoke set + hybrid comparison (local); needs
#                                         make test-spack first (it says so otherwise)
#   make spack-sif-image                  only the build + %test (make test builds it beside other stages;
#                                         test-containers-spack then uses it while its inputs are the same)
#   make test-containers-spack-vcluster   the same SIF across two virtual-cluster nodes (srun and mpirun)
#   make spack-sif-cold                   the image without the build cache or the lock (not part of make test)
SPACK_SIF := $(abspath $(BUILD)/containers/spack-sif/yeebench-spack.sif)

TEST_TARGETS += test-containers-spack test-containers-spack-vcluster

.PHONY: test-containers-spack test-containers-spack-vcluster spack-sif-cold spack-sif-image
TEST_BACKGROUND += spack-sif-image test-containers-spack test-containers-spack-vcluster
TEST_AFTER += spack-sif-image:test-spack test-containers-spack:spack-sif-image \
              test-containers-spack-vcluster:spack-sif-image
TEST_HOLDS += vcluster:test-containers-spack-vcluster

test-containers-spack: venv build
	YEEBENCH_CACHE=$(YEEBENCH_CACHE) YEEBENCH_PREFIX=$(PREFIX) PY=$(PY) VENV=$(VENV) bash containers/spack-sif.sh

spack-sif-image: venv
	YEEBENCH_CACHE=$(YEEBENCH_CACHE) PY=$(PY) VENV=$(VENV) bash containers/spack-sif.sh --build-only

test-containers-spack-vcluster: venv build
	OUT=$(abspath $(BUILD)/containers/vcluster-apptainer-spack) YEEBENCH_PREFIX=$(PREFIX) PY=$(PY) \
	    bash containers/vcluster-apptainer.sh $(SPACK_SIF)

spack-sif-cold: venv build
	YEEBENCH_CACHE=$(YEEBENCH_CACHE) YEEBENCH_PREFIX=$(PREFIX) PY=$(PY) VENV=$(VENV) \
	    OUT=$(abspath $(BUILD)/containers/spack-sif-cold) bash containers/spack-sif.sh --cold
