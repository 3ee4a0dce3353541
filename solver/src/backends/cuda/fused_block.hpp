#pragma once
// The CUDA fused kernel (one sweep per time step, 12 field words per cell) as a block
// program that a host test can run: tile geometry, launch plan and the per-thread phases,
// free of CUDA calls. kernels.cpp runs the phases with __syncthreads between them and
// cp.async for the copies; tests/cuda_stencil_check.cpp runs the same phases thread by
// thread on the host (copies applied early or late, threads forward or backward) and
// compares bitwise with the CPU backend. Design: solver/NOTES-cuda.md, "Fused kernel".
//
// A block owns a tile of 32 k x J j cells and streams along i through a chunk of planes.
// Reads come from one copy of the fields (src) and writes go to the other (dst), so no
// block can overwrite what another still reads: H^{n+1/2} is computed on the tile plus a
// one-cell ring on its low j and k sides (recomputed, not stored), from which E^{n+1} on
// the tile follows inside the block. Shared memory holds, per block: three planes of E^n
// (i-1 is free for the copy of i+2 while i and i+1 are read), two of H^{n-1/2} (the
// next one arriving) and two of H^{n+1/2} (E at plane i needs H at i-1).
#include <algorithm>
#include <cstddef>

#include "backends/checksum_hash.hpp"  // YEE_HD
#include "backends/cuda/stencil.hpp"
#include "kernel_contract.hpp"

namespace yee {
namespace cuda {

constexpr int kFusedWarps = 8;                       // rows of threads per block (32 threads each)
constexpr int kFusedThreads = kBlockK * kFusedWarps;  // 256
constexpr int kFusedEPlanes = 3;                     // E^n planes in shared memory
constexpr int kFusedHPlanes = 2;                     // H^{n-1/2} planes, and H^{n+1/2} planes

// Registers per thread: __launch_bounds__(256, blocks) per precision. f64 needs more
// registers for the same code, and its tiles take twice the shared memory, so fewer of
// its blocks fit an SM anyway (NOTES-cuda.md, "Registers").
template <typename T>
constexpr int fused_min_blocks() {
  return sizeof(T) == 4 ? 4 : 3;
}
// Default tile rows (J) per precision; --tile overrides (any count; a multiple of kFusedWarps
// keeps every row of threads busy).
template <typename T>
constexpr long fused_default_rows() {
  return sizeof(T) == 4 ? 16 : 8;
}

// Shared-memory row: interior k0..k0+31 starts 16 bytes in (16-byte copies land aligned),
// k0-1 just before it, k0+32 just after.
template <typename T>
struct SharedRow {
  static constexpr int kPad = 16 / int(sizeof(T));              // elements before the interior
  static constexpr int kStride = kBlockK + 2 * kPad;             // elements per row (a multiple of 16 B)
  static constexpr int kChunk = 16 / int(sizeof(T));             // elements per 16-byte copy
  static constexpr int kChunks = kBlockK / kChunk;               // 16-byte copies per interior row
};

template <typename T>
constexpr std::size_t fused_smem_elems(long rows) {
  return std::size_t(SharedRow<T>::kStride) *
         std::size_t(kFusedEPlanes * 3 * (rows + 2) + 2 * kFusedHPlanes * 3 * (rows + 1));
}
template <typename T>
constexpr std::size_t fused_smem_bytes(long rows) {
  return fused_smem_elems<T>(rows) * sizeof(T);
}

// Views of the block's shared memory. Rows are indexed from j0-1 (row 0), columns from
// k0 - kPad (so k0 is column kPad).
template <typename T>
struct FusedShared {
  T* e;   // [kFusedEPlanes][3][rows+2][kStride]: E^n
  T* ho;  // [kFusedHPlanes][3][rows+1][kStride]: H^{n-1/2}
  T* h;   // [kFusedHPlanes][3][rows+1][kStride]: H^{n+1/2}
  long rows;
  YEE_HD T* e_at(long plane, int comp, long row) const {
    return e + ((plane % kFusedEPlanes) * 3 + comp) * (rows + 2) * SharedRow<T>::kStride + row * SharedRow<T>::kStride;
  }
  YEE_HD T* ho_at(long plane, int comp, long row) const {
    return ho + ((plane % kFusedHPlanes) * 3 + comp) * (rows + 1) * SharedRow<T>::kStride + row * SharedRow<T>::kStride;
  }
  YEE_HD T* h_at(long plane, int comp, long row) const {
    return h + ((plane % kFusedHPlanes) * 3 + comp) * (rows + 1) * SharedRow<T>::kStride + row * SharedRow<T>::kStride;
  }
};

template <typename T>
YEE_HD inline FusedShared<T> fused_shared(T* base, long rows) {
  FusedShared<T> s;
  s.rows = rows;
  s.e = base;
  s.ho = s.e + std::size_t(kFusedEPlanes * 3) * std::size_t(rows + 2) * SharedRow<T>::kStride;
  s.h = s.ho + std::size_t(kFusedHPlanes * 3) * std::size_t(rows + 1) * SharedRow<T>::kStride;
  return s;
}

// What every block of one launch shares (by value as the kernel's argument).
template <typename T>
struct FusedArgs {
  DevFields<T> src, dst;  // read E^n, H^{n-1/2}; write E^{n+1}, H^{n+1/2}
  Box owned;              // H everywhere here
  Box core;               // E updated here; elsewhere in `owned` E^n is copied (deferred faces)
  long rows;              // J: tile rows along j
  long tiles_j;           // tiles along j (the grid's y extent may be smaller: blocks stride)
  long span;              // i planes per chunk
  T c;
};

// One block's tile: k0.. (32 wide), j0.. (rows tall), planes i0..i1-1.
struct FusedTile {
  long k0, j0, i0, i1;
};

template <typename T>
YEE_HD inline FusedTile fused_tile(const FusedArgs<T>& a, long bx, long tj, long bz) {
  FusedTile t;
  t.k0 = a.owned.lo[2] + bx * kBlockK;
  t.j0 = a.owned.lo[1] + tj * a.rows;
  t.i0 = a.owned.lo[0] + bz * a.span;
  t.i1 = t.i0 + a.span < a.owned.hi[0] ? t.i0 + a.span : a.owned.hi[0];
  return t;
}

// Launch plan: x = k tiles, y = j tiles (strided beyond 65535), z = i chunks. The chunk
// count trades the per-chunk start (`start` planes of extra work: 1 for the fused kernel,
// one plane of E and H^{n-1/2} read and of H computed) against the last wave of blocks
// running part-empty: it minimises waves x (planes per chunk + start), given how many
// blocks are resident at once.
struct FusedPlan {
  long gx = 0, gy = 0, gz = 0, tiles_j = 0, span = 0;
  long blocks() const { return gx * gy * gz; }
};

inline FusedPlan plan_fused(const Box& owned, long rows, long sm_count, long blocks_per_sm, long start = 1) {
  FusedPlan p;
  const long nk = owned.hi[2] - owned.lo[2], nj = owned.hi[1] - owned.lo[1], ni = owned.hi[0] - owned.lo[0];
  if (nk <= 0 || nj <= 0 || ni <= 0) return p;
  p.gx = (nk + kBlockK - 1) / kBlockK;
  p.tiles_j = (nj + rows - 1) / rows;
  p.gy = std::min<long>(p.tiles_j, 65535);
  const long resident = std::max<long>(1, sm_count) * std::max<long>(1, blocks_per_sm);
  const long tiles = p.gx * p.gy;
  double best = -1.0;
  for (long gz = 1; gz <= std::min<long>(ni, 65535); ++gz) {
    const long span = (ni + gz - 1) / gz;
    if (gz > 1 && (ni + span - 1) / span != gz) continue;  // same span as a smaller count
    const long waves = (tiles * gz + resident - 1) / resident;
    const double cost = double(waves) * double(span + start);
    if (best < 0.0 || cost < best) best = cost, p.gz = gz, p.span = span;
    if (tiles * gz >= 64 * resident) break;  // far past any quantisation effect
  }
  return p;
}

// ---------------------------------------------------------------------------- copies
// Mover: copy<Bytes>(shared dst, global src), commit(), wait_all(). On the GPU cp.async
// (kernels.cpp); in the host test a recorder that applies the copies early or late.

// Copies plane `plane` of the three E components (rows j0-1 .. j0+rows, columns k0-1 ..
// k0+32, clipped to the ghost layer at n+1) into its shared buffer: this thread's share
// of the row pieces (16-byte interior chunks and single edge entries).
template <typename T, typename Mover>
YEE_HD inline void fused_copy_e(const FusedArgs<T>& a, const FusedShared<T>& s, const FusedTile& t, long plane,
                                int tid, Mover& mv) {
  using R = SharedRow<T>;
  constexpr int kPieces = R::kChunks + 2;  // chunks, then k0-1, then k0+32
  const long jmax = a.owned.hi[1], kmax = a.owned.hi[2];  // last readable row / column (ghost n+1)
  const long rows = (t.j0 + s.rows < jmax ? t.j0 + s.rows : jmax) - (t.j0 - 1) + 1;
  const long items = 3 * rows * kPieces;
  for (long q = tid; q < items; q += kFusedThreads) {
    const int c = int(q / (rows * kPieces));
    const long rem = q - long(c) * rows * kPieces;
    const long row = rem / kPieces;
    const int piece = int(rem - row * kPieces);
    const long j = t.j0 - 1 + row;
    const T* base = c == 0 ? a.src.ex : c == 1 ? a.src.ey : a.src.ez;  // no run-time-indexed array: no stack
    const T* g = base + plane * a.src.sx + j * a.src.sy;
    T* d = s.e_at(plane, c, row);
    if (piece < R::kChunks) {
      const long k = t.k0 + long(piece) * R::kChunk;
      if (k + R::kChunk - 1 <= kmax) {
        mv.template copy<16>(d + R::kPad + piece * R::kChunk, g + k);
      } else {
        for (long e = 0; e < R::kChunk && k + e <= kmax; ++e)
          mv.template copy<int(sizeof(T))>(d + R::kPad + piece * R::kChunk + e, g + k + e);
      }
    } else {
      const long k = piece == R::kChunks ? t.k0 - 1 : t.k0 + kBlockK;
      if (k <= kmax) mv.template copy<int(sizeof(T))>(d + R::kPad + (k - t.k0), g + k);
    }
  }
}

// Copies plane `plane` of H^{n-1/2} (rows j0-1 .. j0+rows-1, columns k0-1 .. k0+31, clipped).
template <typename T, typename Mover>
YEE_HD inline void fused_copy_h(const FusedArgs<T>& a, const FusedShared<T>& s, const FusedTile& t, long plane,
                                int tid, Mover& mv) {
  using R = SharedRow<T>;
  constexpr int kPieces = R::kChunks + 1;  // chunks, then k0-1
  const long jmax = a.owned.hi[1] - 1, kmax = a.owned.hi[2];
  const long rows = (t.j0 + s.rows - 1 < jmax ? t.j0 + s.rows - 1 : jmax) - (t.j0 - 1) + 1;
  const long items = 3 * rows * kPieces;
  for (long q = tid; q < items; q += kFusedThreads) {
    const int c = int(q / (rows * kPieces));
    const long rem = q - long(c) * rows * kPieces;
    const long row = rem / kPieces;
    const int piece = int(rem - row * kPieces);
    const long j = t.j0 - 1 + row;
    const T* base = c == 0 ? a.src.hx : c == 1 ? a.src.hy : a.src.hz;
    const T* g = base + plane * a.src.sx + j * a.src.sy;
    T* d = s.ho_at(plane, c, row);
    if (piece < R::kChunks) {
      const long k = t.k0 + long(piece) * R::kChunk;
      if (k + R::kChunk - 1 <= kmax) {
        mv.template copy<16>(d + R::kPad + piece * R::kChunk, g + k);
      } else {
        for (long e = 0; e < R::kChunk && k + e <= kmax; ++e)
          mv.template copy<int(sizeof(T))>(d + R::kPad + piece * R::kChunk + e, g + k + e);
      }
    } else {
      mv.template copy<int(sizeof(T))>(d + R::kPad - 1, g + t.k0 - 1);
    }
  }
}

// Before the first plane: E at i0-1 and i0, H^{n-1/2} at i0-1 (one copy group).
template <typename T, typename Mover>
YEE_HD inline void fused_copy_first(const FusedArgs<T>& a, const FusedShared<T>& s, const FusedTile& t, int tid,
                                    Mover& mv) {
  fused_copy_e(a, s, t, t.i0 - 1, tid, mv);
  fused_copy_e(a, s, t, t.i0, tid, mv);
  fused_copy_h(a, s, t, t.i0 - 1, tid, mv);
}

// At plane p (after the barrier that made E at p, p+1 and H^{n-1/2} at p visible): start
// the copies of E at p+2 and H^{n-1/2} at p+1, where the chunk still needs them.
template <typename T, typename Mover>
YEE_HD inline void fused_copy_next(const FusedArgs<T>& a, const FusedShared<T>& s, const FusedTile& t, long p,
                                   int tid, Mover& mv) {
  if (p + 2 <= t.i1) fused_copy_e(a, s, t, p + 2, tid, mv);
  if (p + 1 < t.i1) fused_copy_h(a, s, t, p + 1, tid, mv);
}

// ---------------------------------------------------------------------------- updates

// H^{n+1/2} of one cell (shared row `row`, column `col`) from the shared planes, the CPU's
// expressions in the CPU's order (row_updates.hpp: h_row).
template <typename T>
YEE_HD inline void fused_h_cell(const FusedShared<T>& s, long p, long row, int col, T c, T out[3]) {
  const T* ex = s.e_at(p, 0, row);
  const T* ey = s.e_at(p, 1, row);
  const T* ez = s.e_at(p, 2, row);
  const T ex_j = s.e_at(p, 0, row + 1)[col], ez_j = s.e_at(p, 2, row + 1)[col];
  const T ey_i = s.e_at(p + 1, 1, row)[col], ez_i = s.e_at(p + 1, 2, row)[col];
  out[0] = s.ho_at(p, 0, row)[col] - c * ((ez_j - ez[col]) - (ey[col + 1] - ey[col]));
  out[1] = s.ho_at(p, 1, row)[col] - c * ((ex[col + 1] - ex[col]) - (ez_i - ez[col]));
  out[2] = s.ho_at(p, 2, row)[col] - c * ((ey_i - ey[col]) - (ex_j - ex[col]));
}

// Plane p, H phase, thread tid: H^{n+1/2} on this thread's cells of the tile (stored to
// shared memory, and to dst where p is a plane of the chunk) and of the ring (shared only).
template <typename T>
YEE_HD inline void fused_h_phase(const FusedArgs<T>& a, const FusedShared<T>& s, const FusedTile& t, long p,
                                 int tid) {
  using R = SharedRow<T>;
  const int tx = tid % kBlockK, ty = tid / kBlockK;
  const long k = t.k0 + tx;
  const bool store = p >= t.i0;
  T v[3];
  if (k < a.owned.hi[2])
    for (long r = ty; r < s.rows && t.j0 + r < a.owned.hi[1]; r += kFusedWarps) {
      fused_h_cell(s, p, r + 1, R::kPad + tx, a.c, v);
      for (int q = 0; q < 3; ++q) s.h_at(p, q, r + 1)[R::kPad + tx] = v[q];
      if (store) {
        const long o = p * a.dst.sx + (t.j0 + r) * a.dst.sy + k;
        a.dst.hx[o] = v[0];
        a.dst.hy[o] = v[1];
        a.dst.hz[o] = v[2];
      }
    }
  // Ring: row j0-1 (columns k0-1 .. k0+31), then column k0-1 (rows j0 .. j0+rows-1).
  for (long q = tid; q < kBlockK + 1 + s.rows; q += kFusedThreads) {
    long row, kk;
    if (q <= kBlockK) {
      row = 0, kk = t.k0 - 1 + q;
      if (kk >= a.owned.hi[2]) continue;
    } else {
      row = q - kBlockK, kk = t.k0 - 1;
      if (t.j0 - 1 + row >= a.owned.hi[1]) continue;
    }
    const int col = int(R::kPad + (kk - t.k0));
    fused_h_cell(s, p, row, col, a.c, v);
    for (int w = 0; w < 3; ++w) s.h_at(p, w, row)[col] = v[w];
  }
}

// Plane p (>= i0), E phase, thread tid: E^{n+1} on this thread's cells of the tile from
// the shared H planes p and p-1, then PEC (row_updates.hpp: e_row); on the deferred faces
// (owned but outside core) E^n is copied instead.
template <typename T>
YEE_HD inline void fused_e_phase(const FusedArgs<T>& a, const FusedShared<T>& s, const FusedTile& t, long p,
                                 int tid) {
  using R = SharedRow<T>;
  const int tx = tid % kBlockK, ty = tid / kBlockK;
  const long k = t.k0 + tx;
  if (k >= a.owned.hi[2]) return;
  const int col = R::kPad + tx;
  const bool in_i = p >= a.core.lo[0], in_k = k >= a.core.lo[2];
  const bool wall_i = a.dst.goff[0] + p - 1 == 0, wall_k = a.dst.goff[2] + k - 1 == 0;
  for (long r = ty; r < s.rows && t.j0 + r < a.owned.hi[1]; r += kFusedWarps) {
    const long j = t.j0 + r, row = r + 1;
    T ex = s.e_at(p, 0, row)[col], ey = s.e_at(p, 1, row)[col], ez = s.e_at(p, 2, row)[col];
    if (in_i && in_k && j >= a.core.lo[1]) {
      const T* hx = s.h_at(p, 0, row);
      const T* hy = s.h_at(p, 1, row);
      const T* hz = s.h_at(p, 2, row);
      const T hy_p = s.h_at(p - 1, 1, row)[col], hz_p = s.h_at(p - 1, 2, row)[col];
      const T hx_j = s.h_at(p, 0, row - 1)[col], hz_j = s.h_at(p, 2, row - 1)[col];
      ex = ex + a.c * ((hz[col] - hz_j) - (hy[col] - hy[col - 1]));
      ey = ey + a.c * ((hx[col] - hx[col - 1]) - (hz[col] - hz_p));
      ez = ez + a.c * ((hy[col] - hy_p) - (hx[col] - hx_j));
      const bool wall_j = a.dst.goff[1] + j - 1 == 0;
      if (wall_i || wall_j) ez = T(0);
      if (wall_i || wall_k) ey = T(0);
      if (wall_j || wall_k) ex = T(0);
    }
    const long o = p * a.dst.sx + j * a.dst.sy + k;
    a.dst.ex[o] = ex;
    a.dst.ey[o] = ey;
    a.dst.ez[o] = ez;
  }
}

}  // namespace cuda
}  // namespace yee
