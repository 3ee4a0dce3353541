// Error checking shared by the acceptance CUDA probes: a failing CUDA call
// prints one line naming the call and exits 1 (a device fault is a failed check).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                  \
    do {                                                                                  \
        cudaError_t err_ = (call);                                                        \
        if (err_ != cudaSuccess) {                                                        \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,     \
                         cudaGetErrorString(err_));                                       \
            std::exit(1);                                                                 \
        }                                                                                 \
    } while (0)
