# Containers: build the Docker image from containers/Dockerfile and run it for real (containers/ci-build.sh:
# private dockerd, debootstrap'd debian:bookworm base, in-container self-test, native-vs-container ReFrame
# check, the Apptainer SIF built from that image with its smoke set and hybrid-MPI comparison, Charliecloud
# run). The base tarball and Docker's layer store are cached in $(YEEBENCH_CACHE) (outside the repository).
#   make test-containers            Docker image + Apptainer SIF (apptainer: PATH, else the lab's in build/)
#   make containers-images          only the builds of test-containers (image, build stage, SIF)
#   make test-containers-vcluster   the SIF across two virtual-cluster nodes (srun --mpi=pmix and mpirun)
#   make test-containers-default-caps  `make run` from this checkout (mounted read-only, run on a copy) in a
#                                   default-capability container (no --cap-add) of the image's build stage,
#                                   single-copy settings unset: every MPI case decides single-copy itself
YEEBENCH_CACHE ?= /var/cache/yeebench

# Apptainer's runtime needs (the lab's relocatable build, or a site's package).
DEB_TEST += squashfs-tools squashfuse fuse2fs fuse-overlayfs fuse3 uidmap libseccomp2 libsubid4 libcap-ng0

# make test builds the images first (containers-images); the later stages find the Docker image in the layer
# cache and use the SIF built from it. They run beside other stages: their sanity must hold on a busy
# machine, and their native/container ratios are recorded with plausibility warnings, never judged.
TEST_TARGETS += test-containers test-containers-default-caps test-containers-vcluster
TEST_BACKGROUND += containers-images test-containers-default-caps test-containers test-containers-vcluster
TEST_AFTER += test-containers-default-caps:containers-images test-containers:containers-images \
              test-containers-vcluster:test-containers
TEST_HOLDS += docker:containers-images,test-containers-default-caps,test-containers vcluster:test-containers-vcluster
PYTEST_PATHS += spack/tests containers/tests

.PHONY: test-containers test-containers-default-caps test-containers-vcluster containers-images

# The Docker image, its build stage and the Apptainer SIF derived from it, running nothing.
containers-images: venv
	CI_BUILD_STEPS=images YEEBENCH_CACHE=$(YEEBENCH_CACHE) PY=$(PY) JOBS=2 bash containers/ci-build.sh

test-containers: venv build
	YEEBENCH_CACHE=$(YEEBENCH_CACHE) YEEBENCH_PREFIX=$(PREFIX) PY=$(PY) JOBS=2 bash containers/ci-build.sh

# (the container builds its own binaries and venv: only the host's venv, for the wheelhouse and verdict)
test-containers-default-caps: venv
	CI_BUILD_STEPS=default-caps YEEBENCH_CACHE=$(YEEBENCH_CACHE) PY=$(PY) JOBS=2 bash containers/ci-build.sh

test-containers-vcluster: venv build
	YEEBENCH_PREFIX=$(PREFIX) PY=$(PY) bash containers/vcluster-apptainer.sh
