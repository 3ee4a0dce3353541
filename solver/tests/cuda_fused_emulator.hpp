#pragma once
// Host run of the CUDA fused kernel's block program (src/backends/cuda/fused_block.hpp),
// and of the wavefront kernel's sweep (temporal_block.hpp):
// every block of the launch plan, its phases in the kernel's order, each phase over all
// 256 threads before the next (the kernel's barriers). The asynchronous copies are
// applied either at once (a copy into a buffer that is still read shows up as a wrong
// value) or only at the next wait (a read before the copy landed shows up as NaN: shared
// memory starts as NaN), and the threads run forward or backward within a phase (a race
// between threads of one phase changes the result). Every copy is checked: 16-byte
// copies aligned on both sides, sources inside a component array and never in its row
// padding, destinations inside the block's shared memory.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "backends/cuda/fused_block.hpp"
#include "backends/cuda/temporal_block.hpp"

namespace yee {
namespace emu {

struct CopyRecord {
  void* dst;
  const void* src;
  int bytes;
};

// The Mover of fused_block.hpp for the host.
struct HostMover {
  bool late = false;                                     // apply at wait_all() instead of at once
  std::function<const char*(const void*, int)> bad_src;  // why a source is not readable, or nullptr
  const char* smem_lo = nullptr;
  const char* smem_hi = nullptr;
  std::vector<CopyRecord> pending;
  long errors = 0;

  template <int Bytes>
  void copy(void* dst, const void* src) {
    const char* why = bad_src(src, Bytes);
    if (!why && (static_cast<const char*>(dst) < smem_lo || static_cast<const char*>(dst) + Bytes > smem_hi))
      why = "destination outside the block's shared memory";
    if (!why && Bytes == 16 &&
        ((reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src)) % 16) != 0)
      why = "16-byte copy not aligned";
    if (why) {
      if (errors++ < 3) std::printf("      copy of %d bytes: %s\n", Bytes, why);
      return;
    }
    if (late)
      pending.push_back({dst, src, Bytes});
    else
      std::memcpy(dst, src, Bytes);
  }
  void commit() {}
  void wait_all() {
    for (const auto& r : pending) std::memcpy(r.dst, r.src, std::size_t(r.bytes));
    pending.clear();
  }
};

// Runs one launch of the fused kernel with arguments `a` on the plan `p`. Returns the
// number of bad copies (0 when all were fine).
template <typename T>
long run_fused(const cuda::FusedArgs<T>& a, const cuda::FusedPlan& p, bool late, bool backward,
               const std::function<const char*(const void*, int)>& bad_src) {
  const std::size_t elems = cuda::fused_smem_elems<T>(a.rows);
  const std::size_t bytes = (elems * sizeof(T) + 255) / 256 * 256;
  T* smem = static_cast<T*>(std::aligned_alloc(256, bytes));
  const cuda::FusedShared<T> s = cuda::fused_shared<T>(smem, a.rows);
  HostMover mv;
  mv.late = late;
  mv.bad_src = bad_src;
  mv.smem_lo = reinterpret_cast<const char*>(smem);
  mv.smem_hi = mv.smem_lo + elems * sizeof(T);
  auto threads = [&](const std::function<void(int)>& fn) {
    for (int q = 0; q < cuda::kFusedThreads; ++q) fn(backward ? cuda::kFusedThreads - 1 - q : q);
  };
  for (long bz = 0; bz < p.gz; ++bz)
    for (long by = 0; by < p.gy; ++by)
      for (long bx = 0; bx < p.gx; ++bx)
        for (long tj = by; tj < a.tiles_j; tj += p.gy) {
          std::memset(smem, 0xff, bytes);  // NaN: shared memory holds nothing useful at the start
          const cuda::FusedTile t = cuda::fused_tile(a, bx, tj, bz);
          threads([&](int tid) { cuda::fused_copy_first(a, s, t, tid, mv); });
          mv.commit();
          for (long pl = t.i0 - 1; pl < t.i1; ++pl) {
            mv.wait_all();
            threads([&](int tid) { cuda::fused_copy_next(a, s, t, pl, tid, mv); });
            mv.commit();
            threads([&](int tid) { cuda::fused_h_phase(a, s, t, pl, tid); });
            if (pl >= t.i0) threads([&](int tid) { cuda::fused_e_phase(a, s, t, pl, tid); });
          }
          mv.wait_all();
        }
  std::free(smem);
  return mv.errors;
}

// Runs one sweep of the wavefront kernel (TB steps) with arguments `a` on the plan `p`,
// in the kernel's order of phases and barriers (time_block.cpp: sweep_kernel).
template <typename T, int TB>
long run_sweep(const cuda::SweepArgs<T>& a, const cuda::FusedPlan& p, bool late, bool backward,
               const std::function<const char*(const void*, int)>& bad_src) {
  const std::size_t elems = cuda::sweep_smem_elems<T, TB>(a.rows);
  const std::size_t bytes = (elems * sizeof(T) + 255) / 256 * 256;
  T* smem = static_cast<T*>(std::aligned_alloc(256, bytes));
  const cuda::SweepShared<T, TB> s{smem, a.rows};
  HostMover mv;
  mv.late = late;
  mv.bad_src = bad_src;
  mv.smem_lo = reinterpret_cast<const char*>(smem);
  mv.smem_hi = mv.smem_lo + elems * sizeof(T);
  auto threads = [&](const std::function<void(int)>& fn) {
    for (int q = 0; q < cuda::kFusedThreads; ++q) fn(backward ? cuda::kFusedThreads - 1 - q : q);
  };
  for (long bz = 0; bz < p.gz; ++bz)
    for (long by = 0; by < p.gy; ++by)
      for (long bx = 0; bx < p.gx; ++bx)
        for (long tj = by; tj < a.tiles_j; tj += p.gy) {
          std::memset(smem, 0xff, bytes);
          const cuda::FusedTile t = cuda::sweep_tile(a, bx, tj, bz);
          threads([&](int tid) { cuda::sweep_copy_first(a, s, t, tid, mv); });
          for (long pf = cuda::sweep_first_front(t, TB); pf <= cuda::sweep_last_front(t, TB); ++pf) {
            mv.wait_all();
            threads([&](int tid) { cuda::sweep_copy_next(a, s, t, pf, tid, mv); });
            for (int st = 1; st <= TB; ++st) {
              threads([&](int tid) { cuda::sweep_h_phase(a, s, t, st, pf, tid); });
              threads([&](int tid) { cuda::sweep_e_phase(a, s, t, st, pf, tid); });
              if (a.nprobes > 0) threads([&](int tid) { cuda::sweep_probes(a, s, t, st, pf, tid); });
            }
          }
          mv.wait_all();
        }
  std::free(smem);
  return mv.errors;
}

}  // namespace emu
}  // namespace yee
