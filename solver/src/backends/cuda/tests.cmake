# Tests of a CUDA build (YEE_BACKEND=cuda): YEE_BACKEND_TESTS of backend.cmake, included by tests/CMakeLists.txt.
#  cuda-host: need no GPU (CI runs them): identity, embedded device code, usage errors,
#             the no-device error path, the device code's thread bodies against the CPU
#             backend (on the host), the benchmark script's arithmetic, and the
#             halo's staged / direct paths (CPU build with YEE_HALO_STAGING=1).
#  cuda-gpu:  the CPU backend's verification suite against the CUDA build, and CPU-vs-GPU
#             field equality; each exits 77 (ctest: Skipped) with the reason when
#             nvidia-smi lists no GPU. YEE_CPU_BIN: the CPU build's yee (the reference).
set(YEE_CPU_BIN "${PROJECT_BINARY_DIR}/../solver/yee" CACHE FILEPATH "CPU-backend yee for the CPU vs GPU test")
list(APPEND _env "YEE_CUDA_ARCHS=${CMAKE_CUDA_ARCHITECTURES}" "YEE_CPU_BIN=${YEE_CPU_BIN}")

yee_test(cuda_host test_cuda_host.py TIMEOUT 300 LABEL cuda-host)
# The device code's per-thread bodies run on the host against the CPU backend (bitwise).
add_executable(yee-cuda-stencil-check cuda_stencil_check.cpp ${PROJECT_SOURCE_DIR}/src/backends/cpu/kernels.cpp)
target_include_directories(yee-cuda-stencil-check PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(yee-cuda-stencil-check PRIVATE OpenMP::OpenMP_CXX)
target_compile_options(yee-cuda-stencil-check PRIVATE ${YEE_FLAGS})
add_test(NAME cuda_stencil_check COMMAND yee-cuda-stencil-check)
set_tests_properties(cuda_stencil_check PROPERTIES TIMEOUT 300 LABELS cuda-host ENVIRONMENT "OMP_NUM_THREADS=2")
yee_test(cuda_bench_script test_cuda_bench.py TIMEOUT 120 LABEL cuda-host)
yee_test(cuda_halo_staging test_cuda_staging.py TIMEOUT 300 LABEL cuda-host)
foreach(_t cavity_modes:test_cavity.py energy_conservation:test_energy.py
           decomposition_invariance:test_decomposition.py divergence_and_courant:test_divergence.py
           bad_input:test_bad_input.py)
  string(REPLACE ":" ";" _t "${_t}")
  list(GET _t 0 _name)
  list(GET _t 1 _script)
  yee_test(cuda_${_name} test_cuda_suite.py ARGS ${_script} TIMEOUT 600 LABEL cuda-gpu)
endforeach()
yee_test(cuda_vs_cpu test_cuda_gpu.py TIMEOUT 900 LABEL cuda-gpu)
yee_test(cuda_refusals test_cuda_refusals.py TIMEOUT 600 LABEL cuda-gpu)  # tiles and grids the GPU cannot run
set_tests_properties(cuda_cavity_modes cuda_energy_conservation cuda_decomposition_invariance
                     cuda_divergence_and_courant cuda_bad_input cuda_vs_cpu cuda_refusals PROPERTIES SKIP_RETURN_CODE 77)
