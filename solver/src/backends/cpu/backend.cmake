# CPU backend (the default, YEE_BACKEND=cpu): OpenMP + SIMD, the reference build `yee`.
# The contract of a backend.cmake is in ../README.md.
# traits.json: program yee, kernels fused, split and wavefront (time_block.cpp).
set(YEE_BACKEND_SOURCES kernels.cpp time_block.cpp)
