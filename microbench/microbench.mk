# Microbenchmarks (affinity, numa-bw, halo): included by the top-level Makefile.
MICROBENCH_BUILD := $(BUILD)/microbench

BUILD_TARGETS += build-microbench
TEST_TARGETS  += test-microbench
TEST_QUIET    += test-microbench

.PHONY: build-microbench test-microbench

build-microbench:
	cmake -S microbench -B $(MICROBENCH_BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	cmake --build $(MICROBENCH_BUILD) -j $(JOBS)
	cmake --install $(MICROBENCH_BUILD)

# The probe tests run mpirun: allow root (CI runs as root) and more ranks than cores.
test-microbench: build-microbench
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
	  ctest --test-dir $(MICROBENCH_BUILD) --output-on-failure --timeout 120
