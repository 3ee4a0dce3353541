# CUDA backend's make settings (included by solver/solver.mk). CI has nvcc but no GPU: the
# build and the host-side tests run, the GPU tests report "Skipped" with the reason.
# CUDA_ARCHS -> CMAKE_CUDA_ARCHITECTURES (default 80;90: sm_80 and sm_90 code, compute_80 and
# compute_90 PTX; the kernels use cp.async, so nothing older than sm_80).
CUDA_ARCHS ?= 80;90
SOLVER_BACKEND_TOOLCHAIN_cuda := command -v nvcc >/dev/null 2>&1 || [ -n "$$CUDACXX" ]
SOLVER_BACKEND_MISSING_cuda := no nvcc on PATH (and CUDACXX unset)
SOLVER_BACKEND_CMAKE_ARGS_cuda = -DCMAKE_CUDA_ARCHITECTURES="$(CUDA_ARCHS)"

#   make bench-solver-cuda       on a GPU node: Gcells/s, GB/s, % of measured copy bandwidth
.PHONY: bench-solver-cuda
bench-solver-cuda: build-solver-cuda
	python3 solver/bench/run_cuda_bench.py --yee $(BUILD)/solver-cuda/yee-cuda \
	  --copy $(BUILD)/solver-cuda/yee-cuda-copy --out $(BUILD)/solver-cuda-bench.json
