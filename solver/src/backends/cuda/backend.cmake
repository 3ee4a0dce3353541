# CUDA backend (YEE_BACKEND=cuda): the contract of a backend.cmake is in ../README.md.
# CMAKE_CUDA_ARCHITECTURES is honoured; the default "90" builds sm_90 code (Hopper) plus
# compute_90 PTX, which the driver JIT-compiles on newer GPUs. nvcc is found on PATH or
# given with -DCMAKE_CUDA_COMPILER=/path/to/nvcc.
if(YEE_SANITIZE)
  message(FATAL_ERROR "YEE_SANITIZE is for the cpu backend (AddressSanitizer and the CUDA runtime do not mix)")
endif()
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 90)
endif()
enable_language(CUDA)
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
set(CMAKE_CUDA_EXTENSIONS OFF)

# Same file name as every backend (kernels.cpp), compiled as CUDA, and the wavefront kernel
# (time_block.cpp); the program is yee-cuda, installed beside the CPU build's yee (traits.json).
set(YEE_BACKEND_SOURCES kernels.cpp time_block.cpp)
set_source_files_properties(${YEE_BACKEND_DIR}/kernels.cpp ${YEE_BACKEND_DIR}/time_block.cpp PROPERTIES LANGUAGE CUDA)
set(YEE_BACKEND_TESTS ${YEE_BACKEND_DIR}/tests.cmake)

# --fmad=false: the CPU's expressions without contraction, so fields are bitwise equal to
# the CPU backend's (the update is memory-bound, the lost FMAs cost nothing measurable).
# Host code in the .cpp: OpenMP (initial condition) and no contraction either.
set(YEE_CUDA_FLAGS --fmad=false -Xcompiler=-fopenmp,-ffp-contract=off)
option(YEE_CUDA_SYNC_CHECK "Synchronise after every kernel launch to report faults at their launch" OFF)
if(YEE_CUDA_SYNC_CHECK)
  list(APPEND YEE_CUDA_FLAGS -DYEE_CUDA_SYNC_CHECK)
endif()
string(REPLACE ";" " " _yee_cuda_flags "${YEE_CUDA_FLAGS}")
set(YEE_BACKEND_SUMMARY " nvcc-${CMAKE_CUDA_COMPILER_VERSION} arch=${CMAKE_CUDA_ARCHITECTURES} ${_yee_cuda_flags}")

function(yee_backend_target target)
  target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:${YEE_CUDA_FLAGS}>")
  # Static CUDA runtime (CMake's default): the binary needs only the driver at run time.
  set_target_properties(${target} PROPERTIES CUDA_RUNTIME_LIBRARY Static)
endfunction()

# Measured device-memory bandwidth, the benchmark's yardstick (bench/run_cuda_bench.py).
add_executable(yee-cuda-copy bench/cuda_copy.cu)
set_target_properties(yee-cuda-copy PROPERTIES CUDA_RUNTIME_LIBRARY Static)
install(TARGETS yee-cuda-copy RUNTIME DESTINATION bin)

message(STATUS "yee: CUDA backend, nvcc ${CMAKE_CUDA_COMPILER_VERSION}, CMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES}")
