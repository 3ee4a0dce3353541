#pragma once
// Host run of the CUDA fused kernel's block program (src/backends/cuda/fused_block.hpp),
// and of the wavefront kernel's sweep (temporal_block.hpp): every block of the launch plan,
// in the kernel's order of barriers, each barrier interval over all threads of the block
// before the next. The asynchronous copies are applied either at once (a copy into a
// buffer that is still read shows up as a wrong value) or as late as the kernel's waits
// allow (a read before the copy landed shows up as NaN: shared memory starts as NaN), and
// the threads run forward or backward within an interval (a race between threads of one
// interval changes the result). Every copy is checked: 16-byte copies aligned on both
// sides, sources inside a component array (its row padding allowed: copies whose entries
// are never used may cover it, and NaN there would show in the fields if one were),
// destinations inside the block's shared memory.
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
  long group;  // the commit group it belongs to
};

// The Mover of fused_block.hpp for the host. Groups as cp.async's: copies since the last
// commit() form the next group; wait<N>() lets at most N committed groups stay pending.
struct HostMover {
  bool late = false;                                     // apply at the waits instead of at once
  std::function<const char*(const void*, int)> bad_src;  // why a source is not readable, or nullptr
  const char* smem_lo = nullptr;
  const char* smem_hi = nullptr;
  std::vector<CopyRecord> pending;
  long committed = 0;
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
      pending.push_back({dst, src, Bytes, committed});
    else
      std::memcpy(dst, src, Bytes);
  }
  void commit() { ++committed; }
  template <int N>
  void wait() {
    std::vector<CopyRecord> keep;
    for (const auto& r : pending) {
      if (r.group < committed - N)
        std::memcpy(r.dst, r.src, std::size_t(r.bytes));
      else
        keep.push_back(r);
    }
    pending.swap(keep);
  }
  void wait_all() {
    for (const auto& r : pending) std::memcpy(r.dst, r.src, std::size_t(r.bytes));
    pending.clear();
  }
};

// Runs one launch of the fused kernel (pipeline depth D) with arguments `a` on the plan
// `p`, in kernels.cpp's schedule: per tile the prologue's groups, then per iteration the
// wait, the barrier, every thread's copies (before any thread computes: a copy into a slot
// still read would show) and every thread's iteration. Returns the number of bad copies.
template <typename T, int D>
long run_fused(const cuda::FusedArgs<T>& a, const cuda::FusedPlan& p, bool late, bool backward,
               const std::function<const char*(const void*, int)>& bad_src) {
  constexpr int K = cuda::fused_cached_pieces<T>();
  const std::size_t elems = cuda::fused_smem_elems<T>(a.rows, D);
  const std::size_t bytes = (elems * sizeof(T) + 255) / 256 * 256;
  T* smem = static_cast<T*>(std::aligned_alloc(256, bytes));
  const cuda::FusedShared<T> s = cuda::fused_shared<T>(smem, int(a.rows), D);
  const int nthreads = int(cuda::kBlockK * a.rows);
  HostMover mv;
  mv.late = late;
  mv.bad_src = bad_src;
  mv.smem_lo = reinterpret_cast<const char*>(smem);
  mv.smem_hi = mv.smem_lo + elems * sizeof(T);
  auto threads = [&](const std::function<void(int)>& fn) {
    for (int q = 0; q < nthreads; ++q) fn(backward ? nthreads - 1 - q : q);
  };
  std::vector<cuda::FusedThread> th(static_cast<std::size_t>(nthreads));
  std::vector<cuda::FusedPieces<T, K>> pieces(static_cast<std::size_t>(nthreads));
  std::vector<cuda::FusedCell<T>> cell(static_cast<std::size_t>(nthreads));
  for (long bz = 0; bz < p.gz; ++bz)
    for (long by = 0; by < p.gy; ++by)
      for (long bx = 0; bx < p.gx; ++bx)
        for (long tj = by; tj < a.tiles_j; tj += p.gy) {
          std::memset(smem, 0xff, bytes);  // NaN: shared memory holds nothing useful at the start
          const cuda::FusedTile t = cuda::fused_tile(a, bx, tj, bz);
          const cuda::FusedGeom<T> geom = cuda::fused_geom(a, t);
          threads([&](int tid) {
            th[std::size_t(tid)] = cuda::fused_thread(a, t, tid, nthreads);
            pieces[std::size_t(tid)] = cuda::fused_pieces<T, K>(a, t, geom, tid, nthreads);
            cell[std::size_t(tid)] = cuda::fused_cell(a, t, tid);
          });
          const int h_end = th[0].h_end;
          threads([&](int tid) {
            cuda::fused_copy_group<T, D>(a, s, t, geom, pieces[std::size_t(tid)], -1, h_end, tid, nthreads, mv);
          });
          for (int g = 0; g < D; ++g) {
            threads([&](int tid) {
              cuda::fused_copy_group<T, D>(a, s, t, geom, pieces[std::size_t(tid)], g, h_end, tid, nthreads, mv);
            });
            mv.commit();
          }
          for (int it = 0; it < th[0].iterations; ++it) {
            mv.wait<D - 1>();
            threads([&](int tid) {
              cuda::fused_copy_group<T, D>(a, s, t, geom, pieces[std::size_t(tid)], it + D, h_end, tid, nthreads,
                                           mv);
            });
            mv.commit();
            threads([&](int tid) { cuda::fused_iteration<T, D>(a, s, th[std::size_t(tid)], it, cell[std::size_t(tid)]); });
          }
          mv.wait_all();
        }
  std::free(smem);
  return mv.errors;
}

template <typename T>
long run_fused(const cuda::FusedArgs<T>& a, const cuda::FusedPlan& p, int depth, bool late, bool backward,
               const std::function<const char*(const void*, int)>& bad_src) {
  switch (depth) {
    case 1:
      return run_fused<T, 1>(a, p, late, backward, bad_src);
    case 2:
      return run_fused<T, 2>(a, p, late, backward, bad_src);
    default:
      return run_fused<T, 3>(a, p, late, backward, bad_src);
  }
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
    for (int q = 0; q < cuda::kSweepThreads; ++q) fn(backward ? cuda::kSweepThreads - 1 - q : q);
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
