# CPU backend (the default, YEE_BACKEND=cpu): OpenMP + SIMD, the reference build `yee`.
# The contract of a backend.cmake is in ../README.md.
set(YEE_BACKEND_SOURCES kernels.cpp time_block.cpp)  # time_block.cpp: the wavefront kernel
set(YEE_BACKEND_WAVEFRONT ON)
set(YEE_BACKEND_BINARY yee)
