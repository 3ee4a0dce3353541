#pragma once
// The CUDA backend's layout, launch plan and per-thread update bodies, free of CUDA API
// calls so that a host program (tests/cuda_stencil_check.cpp, built with the C++
// compiler) can run exactly this code over every (block, thread) of a launch and compare
// it bitwise with the CPU backend. kernels.cpp wraps each body in a __global__ kernel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "backends/checksum_hash.hpp"
#include "kernel_contract.hpp"


namespace yee {
namespace cuda {

// Launch-shape knobs, fixed at build time (-DYEE_CUDA_BLOCK_J=4 ...) so that the launch
// shape can be measured against the default on a GPU (NOTES-cuda.md, "Launch shape").
#ifndef YEE_CUDA_BLOCK_J
#define YEE_CUDA_BLOCK_J 8
#endif
#ifndef YEE_CUDA_WAVES
#define YEE_CUDA_WAVES 4
#endif
#ifndef YEE_CUDA_MIN_BLOCKS
#define YEE_CUDA_MIN_BLOCKS 5
#endif
constexpr int kBlockK = 32;                // threads along k (one warp: one 128 B line in f32)
constexpr int kBlockJ = YEE_CUDA_BLOCK_J;  // threads along j (a power of two: the energy tree halves it)
constexpr int kWaves = YEE_CUDA_WAVES;     // waves of resident threads a launch is cut into along i
constexpr int kMinBlocks = YEE_CUDA_MIN_BLOCKS;  // __launch_bounds__ blocks per SM: caps registers (1: no cap)
static_assert(kBlockJ > 0 && (kBlockJ & (kBlockJ - 1)) == 0, "YEE_CUDA_BLOCK_J must be a power of two");
static_assert(kWaves > 0 && kMinBlocks > 0, "YEE_CUDA_WAVES and YEE_CUDA_MIN_BLOCKS must be positive");

// Rows are padded to 128 bytes, and the arrays shifted so that owned k = 1 starts a line.
template <typename T>
constexpr long align_elems() {
  return 128 / long(sizeof(T));
}
template <typename T>
constexpr long padded_row(long n2) {
  return (n2 + 2 + align_elems<T>() - 1) / align_elems<T>() * align_elems<T>();
}

// Array layout with g[d] ghost layers per side (one, except along the axes the wavefront
// kernel's halos cross on several ranks): index (i, j, k) is comp[i*sx + j*sy + k] for i in
// 1-g0 .. n0+g0 (likewise j, k); rows hold n2 + 2 g2 entries padded to 128 bytes; comp is
// `slack` elements into an allocation of `elems`, so that k = 1 of every row starts a
// 128-byte line (the allocation being 256-byte aligned) and the lowest ghost entry is inside.
// The row padding of row (i, j) is k = n2+g2+1 .. sy-g2.
struct Layout {
  long sy, sx, slack, elems, count;
};
template <typename T>
Layout layout_of(const long n[3], const long g[3]) {
  constexpr long A = align_elems<T>();
  Layout l;
  l.sy = (n[2] + 2 * g[2] + A - 1) / A * A;
  l.sx = l.sy * (n[1] + 2 * g[1]);
  l.slack = ((g[0] - 1) * l.sx + (g[1] - 1) * l.sy + g[2] + A - 1) / A * A - 1;
  l.elems = l.slack + (n[0] + g[0] + 1) * l.sx;
  l.count = (n[0] + 2 * g[0]) * l.sx;
  return l;
}

// What a kernel needs of Fields, by value.
template <typename T>
struct DevFields {
  T* ex;
  T* ey;
  T* ez;
  T* hx;
  T* hy;
  T* hz;
  long sx, sy;
  long goff[3];
};

template <typename T>
DevFields<T> dev(const Fields<T>& f) {
  return {f.comp[kEx], f.comp[kEy], f.comp[kEz], f.comp[kHx], f.comp[kHy], f.comp[kHz],
          f.sx,        f.sy,        {f.goff[0], f.goff[1], f.goff[2]}};
}

// Launch over a box: x = warps along k, y = rows of j (strided beyond 65535 blocks),
// z = chunks of `span` i planes. Enough threads for ~kWaves waves of resident threads (2048
// per SM); each thread marches along i through its chunk.
struct LaunchPlan {
  long gx, gy, gz, span;
  long blocks() const { return gx * gy * gz; }
};

inline LaunchPlan plan_launch(const Box& b, int sm_count) {
  const long nk = b.hi[2] - b.lo[2], nj = b.hi[1] - b.lo[1], ni = b.hi[0] - b.lo[0];
  LaunchPlan p;
  p.gx = (nk + kBlockK - 1) / kBlockK;
  p.gy = std::min<long>((nj + kBlockJ - 1) / kBlockJ, 65535);
  const long resident = long(std::max(sm_count, 1)) * 2048;
  const long per_chunk = p.gx * p.gy * kBlockK * kBlockJ;
  long chunks = std::max<long>(1, (kWaves * resident + per_chunk - 1) / per_chunk);
  chunks = std::min<long>({chunks, std::max<long>(ni, 1), 65535});
  p.span = (ni + chunks - 1) / chunks;
  p.gz = p.span > 0 ? (ni + p.span - 1) / p.span : 0;
  return p;
}

// Block/thread coordinates of one thread (blockIdx, threadIdx, gridDim.y).
struct ThreadIds {
  long bx, by, bz, tx, ty, gy;
};

// H^{n+1/2} = H^{n-1/2} - c curl E^n for this thread's (j, k) columns and i chunk, the
// CPU's expressions in the CPU's order. Plane i+1 of Ey, Ez is reused as plane i of the
// next iteration. kEnergy: also sums |E^n|^2 and H^{n-1/2}.H^{n+1/2} into se, sh.
template <typename T, bool kEnergy>
YEE_HD inline void h_thread(const DevFields<T>& f, const Box& b, long span, T c, const ThreadIds& t, double& se,
                            double& sh) {
  const long k = b.lo[2] + t.bx * kBlockK + t.tx;
  if (k >= b.hi[2]) return;
  const long i0 = b.lo[0] + t.bz * span;
  const long i1 = i0 + span < b.hi[0] ? i0 + span : b.hi[0];
  for (long j = b.lo[1] + t.by * kBlockJ + t.ty; j < b.hi[1]; j += t.gy * kBlockJ) {
    long o = i0 * f.sx + j * f.sy + k;
    T ey_i = f.ey[o], ez_i = f.ez[o];
    for (long i = i0; i < i1; ++i, o += f.sx) {
      const T ex_i = f.ex[o];
      const T ey_n = f.ey[o + f.sx], ez_n = f.ez[o + f.sx];
      const T hx = f.hx[o], hy = f.hy[o], hz = f.hz[o];
      const T nx = hx - c * ((f.ez[o + f.sy] - ez_i) - (f.ey[o + 1] - ey_i));
      const T ny = hy - c * ((f.ex[o + 1] - ex_i) - (ez_n - ez_i));
      const T nz = hz - c * ((ey_n - ey_i) - (f.ex[o + f.sy] - ex_i));
      if (kEnergy) {
        se += double(ex_i) * ex_i + double(ey_i) * ey_i + double(ez_i) * ez_i;
        sh += double(hx) * nx + double(hy) * ny + double(hz) * nz;
      }
      f.hx[o] = nx;
      f.hy[o] = ny;
      f.hz[o] = nz;
      ey_i = ey_n;
      ez_i = ez_n;
    }
  }
}

// E^{n+1} = E^n + c curl H^{n+1/2}, then PEC (tangential E on the walls at global index
// 0 is 0). Plane i-1 of Hy, Hz is carried in registers.
template <typename T>
YEE_HD inline void e_thread(const DevFields<T>& f, const Box& b, long span, T c, const ThreadIds& t) {
  const long k = b.lo[2] + t.bx * kBlockK + t.tx;
  if (k >= b.hi[2]) return;
  const long i0 = b.lo[0] + t.bz * span;
  const long i1 = i0 + span < b.hi[0] ? i0 + span : b.hi[0];
  const bool wall_k = f.goff[2] + k - 1 == 0;
  for (long j = b.lo[1] + t.by * kBlockJ + t.ty; j < b.hi[1]; j += t.gy * kBlockJ) {
    const bool wall_j = f.goff[1] + j - 1 == 0;
    long o = i0 * f.sx + j * f.sy + k;
    T hy_p = f.hy[o - f.sx], hz_p = f.hz[o - f.sx];
    for (long i = i0; i < i1; ++i, o += f.sx) {
      const T hx = f.hx[o], hy = f.hy[o], hz = f.hz[o];
      T ex = f.ex[o] + c * ((hz - f.hz[o - f.sy]) - (hy - f.hy[o - 1]));
      T ey = f.ey[o] + c * ((hx - f.hx[o - 1]) - (hz - hz_p));
      T ez = f.ez[o] + c * ((hy - hy_p) - (hx - f.hx[o - f.sy]));
      const bool wall_i = f.goff[0] + i - 1 == 0;
      if (wall_i || wall_j) ez = T(0);
      if (wall_i || wall_k) ey = T(0);
      if (wall_j || wall_k) ex = T(0);
      f.ex[o] = ex;
      f.ey[o] = ey;
      f.ez[o] = ez;
      hy_p = hy;
      hz_p = hz;
    }
  }
}

// This thread's share of the checksum (g1 = gn[1] + 1, g2 = gn[2] + 1).
template <typename T>
YEE_HD inline std::uint64_t checksum_thread(const DevFields<T>& f, const Box& b, long span, std::uint64_t g1,
                                            std::uint64_t g2, const ThreadIds& t) {
  const long k = b.lo[2] + t.bx * kBlockK + t.tx;
  std::uint64_t sum = 0;
  if (k >= b.hi[2]) return sum;
  const long i0 = b.lo[0] + t.bz * span;
  const long i1 = i0 + span < b.hi[0] ? i0 + span : b.hi[0];
  const T* comp[6] = {f.ex, f.ey, f.ez, f.hx, f.hy, f.hz};
  for (long j = b.lo[1] + t.by * kBlockJ + t.ty; j < b.hi[1]; j += t.gy * kBlockJ)
    for (long i = i0; i < i1; ++i) {
      const long o = i * f.sx + j * f.sy + k;
      const std::uint64_t g0 = (std::uint64_t(f.goff[0] + i - 1) * g1 + std::uint64_t(f.goff[1] + j - 1)) * g2 +
                               std::uint64_t(f.goff[2] + k - 1);
      for (int c = 0; c < 6; ++c)
        sum += entry_hash(comp[c][o], g0 * 6 + std::uint64_t(c));
    }
  return sum;
}

// This thread's max |div E| (nodes off the index-0 walls) and max |E| (owned entries).
template <typename T>
YEE_HD inline void div_thread(const DevFields<T>& f, const Box& b, long span, const ThreadIds& t, double& dm,
                              double& em) {
  const long k = b.lo[2] + t.bx * kBlockK + t.tx;
  if (k >= b.hi[2]) return;
  const long i0 = b.lo[0] + t.bz * span;
  const long i1 = i0 + span < b.hi[0] ? i0 + span : b.hi[0];
  for (long j = b.lo[1] + t.by * kBlockJ + t.ty; j < b.hi[1]; j += t.gy * kBlockJ)
    for (long i = i0; i < i1; ++i) {
      const long o = i * f.sx + j * f.sy + k;
      em = fmax(em, fmax(fabs(double(f.ex[o])), fmax(fabs(double(f.ey[o])), fabs(double(f.ez[o])))));
      if (f.goff[0] + i - 1 < 1 || f.goff[1] + j - 1 < 1 || f.goff[2] + k - 1 < 1) continue;
      const double d =
          (double(f.ex[o]) - f.ex[o - f.sx]) + (double(f.ey[o]) - f.ey[o - f.sy]) + (double(f.ez[o]) - f.ez[o - 1]);
      dm = fmax(dm, fabs(d));
    }
}

// The contract's fused pair as boxes: part 1 updates H over the owned box and E over
// `core` (the owned box without the faces flagged defer_low); part 2 updates E over the
// `slab`s with has_slab set (disjoint, together with core exactly the owned box).
struct FusedSplit {
  Box owned, core, slab[3];
  bool has_slab[3];
};

template <typename T>
FusedSplit fused_split(const Fields<T>& f) {
  FusedSplit s;
  s.owned = Box{{1, 1, 1}, {f.n[0] + 1, f.n[1] + 1, f.n[2] + 1}};
  s.core = s.owned;
  for (int a = 0; a < 3; ++a) {
    s.has_slab[a] = f.defer_low[a];
    s.slab[a] = s.core;
    s.slab[a].hi[a] = s.core.lo[a] + 1;
    if (f.defer_low[a]) s.core.lo[a] += 1;
  }
  return s;
}

// Face of `axis` at `layer`: the other axes a (slow) and b (fast) over their owned range;
// message entry q = u * nb + v (component 0), face + q (component 1).
struct Face {
  long na, nb;
  long s_layer, s_a, s_b;
  YEE_HD long offset(long u, long v) const { return s_layer + (u + 1) * s_a + (v + 1) * s_b; }
};

template <typename T>
Face face_of(const Fields<T>& f, int axis, long layer) {
  const int a = axis == 0 ? 1 : 0, b = axis == 2 ? 1 : 2;
  const long stride[3] = {f.sx, f.sy, 1};
  return Face{f.n[a], f.n[b], layer * stride[axis], stride[a], stride[b]};
}

}  // namespace cuda
}  // namespace yee
