// cp.async (sm_80 and newer): global -> shared copies that complete in the background, for the
// fused kernel's Mover (fused_block.hpp) and the wavefront sweep (temporal_block.hpp). Host stubs
// only complete the overload set: the host emulators copy synchronously.
#pragma once

namespace yee::cuda {

struct AsyncCopy {
  template <int Bytes>
  __host__ __device__ void copy(void* dst, const void* src) const {
#ifdef __CUDA_ARCH__
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    if constexpr (Bytes == 16)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
    else
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(src), "n"(Bytes) : "memory");
#else
    (void)dst, (void)src;
#endif
  }
  __host__ __device__ void commit() const {
#ifdef __CUDA_ARCH__
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
  }
  // Until at most N of this thread's committed groups are pending.
  template <int N>
  __host__ __device__ void wait() const {
#ifdef __CUDA_ARCH__
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
  }
  __host__ __device__ void wait_all() const { wait<0>(); }
};

}  // namespace yee::cuda
