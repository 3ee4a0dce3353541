#pragma once
// Error checks for the CUDA backend. Every runtime call goes through CUDA_CHECK and
// every kernel launch is followed by CUDA_CHECK_LAUNCH. A failure in the middle of a run
// cannot be agreed with the other ranks (they may sit in an MPI call), so it prints one
// line naming the call and ends the process with exit code 1; the MPI launcher then
// ends the job instead of leaving it hanging. Setup errors that can be agreed (no
// device, out of memory) are thrown by the callers instead.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace yee {
namespace cuda {

[[noreturn]] inline void fatal(cudaError_t e, const char* what, const char* file, int line) {
  std::fprintf(stderr, "yee: error: CUDA: %s failed: %s (%s) at %s:%d\n", what, cudaGetErrorString(e),
               cudaGetErrorName(e), file, line);
  std::fflush(stderr);
  std::exit(1);
}

inline void check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) fatal(e, what, file, line);
}

}  // namespace cuda
}  // namespace yee

#define CUDA_CHECK(call) ::yee::cuda::check((call), #call, __FILE__, __LINE__)
// After a launch: configuration errors now, and in debug builds (YEE_CUDA_SYNC_CHECK)
// also faults inside the kernel, at the cost of a device synchronisation.
#ifdef YEE_CUDA_SYNC_CHECK
#define CUDA_CHECK_LAUNCH(name)                                                  \
  do {                                                                           \
    ::yee::cuda::check(cudaGetLastError(), "launch of " name, __FILE__, __LINE__); \
    ::yee::cuda::check(cudaDeviceSynchronize(), "kernel " name, __FILE__, __LINE__); \
  } while (0)
#else
#define CUDA_CHECK_LAUNCH(name) ::yee::cuda::check(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)
#endif
