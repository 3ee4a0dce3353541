#pragma once
// The CUDA fused kernel (one sweep per time step, 12 field words per cell) as a block
// program that a host test can run: tile geometry, launch plan and the per-thread phases,
// free of CUDA calls. kernels.cpp runs the phases with __syncthreads between them and
// cp.async for the copies; tests/cuda_stencil_check.cpp runs the same phases thread by
// thread on the host (copies applied early or late, threads forward or backward) and
// compares bitwise with the CPU backend. Design: solver/NOTES-cuda.md, "Kernels".
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

// Registers per thread: __launch_bounds__(256, blocks), chosen per precision from ptxas's
// report (sm_90): f32 capped at 4 blocks per SM (64 registers) spilled, at 3 (85) it takes 64
// with no spill; f64 takes 80 at 3. The default tiles' shared memory allows 2 blocks per SM
// (112 KB f32 at 32 rows, 105 KB f64 at 16). NOTES-cuda.md, "Registers".
template <typename T>
constexpr int fused_min_blocks() {
  return 3;  // the same for both precisions, as measured above
}
// Default tile rows (J) per precision; --tile overrides (any count; a multiple of kFusedWarps
// keeps every row of threads busy). Measured on an H200 at 512^3 (NOTES-cuda.md, "Tile
// rows"): f32 32 rows 45.4 Gcells/s, 16 43.8, 24 43.2, 8 34.1; f64 16 rows 25.1, 8 24.3, 24 17.6.
template <typename T>
constexpr long fused_default_rows() {
  return sizeof(T) == 4 ? 32 : 16;
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

// Copies rows [jlo, jhi) and columns [klo, khi) of one plane of three components into
// shared memory: g[c] points at the plane of component c, d[c] at shared row 0 (that of
// j = row0), column kPad is k0. The interior k0..k0+31 goes in 16-byte chunks, the columns
// beyond it one entry at a time. Warps take rows (32 / L at a time), lanes the pieces of a
// row (L lanes, a power of two >= kMaxPieces): no division, as this runs for every plane.
template <typename T, int kStride, int kPad, int kMaxPieces, typename Mover>
YEE_HD inline void copy_plane(const T* const g[3], long sy, T* const d[3], long row0, long jlo, long jhi, long k0,
                              long klo, long khi, int tid, Mover& mv) {
  constexpr int kChunk = 16 / int(sizeof(T)), kChunks = kBlockK / kChunk;
  constexpr int L = kMaxPieces <= 8 ? 8 : kMaxPieces <= 16 ? 16 : 32;
  constexpr int R = 32 / L;
  static_assert(kMaxPieces <= 32, "a row's pieces must fit a warp");
  const int nrows = int(jhi - jlo), left = int(k0 - klo), right = int(khi - (k0 + kBlockK));
  if (nrows <= 0) return;
  const int piece = (tid % 32) % L;
  const int pieces = kChunks + left + (right > 0 ? right : 0);
  if (piece >= pieces) return;
  // What this lane copies in every row: a chunk (k, whole) or single entries from k.
  long k;
  int count;
  bool chunk;
  if (piece < kChunks) {
    k = k0 + piece * kChunk;
    chunk = k + kChunk <= khi;
    count = chunk ? 1 : int(khi - k < kChunk ? (khi - k > 0 ? khi - k : 0) : kChunk);
  } else {
    k = piece - kChunks < left ? klo + (piece - kChunks) : k0 + kBlockK + (piece - kChunks - left);
    chunk = false;
    count = 1;
  }
  const int col = int(kPad + (k - k0));
  const int step = kFusedWarps * R;
  for (int rr = (tid / 32) * R + (tid % 32) / L; rr < 3 * nrows; rr += step) {
    const int c = rr >= 2 * nrows ? 2 : rr >= nrows ? 1 : 0;
    const long j = jlo + (rr - c * nrows);
    // (Selected, not indexed: a run-time index would put g and d on the stack.)
    const T* src = (c == 0 ? g[0] : c == 1 ? g[1] : g[2]) + j * sy + k;
    T* dst = (c == 0 ? d[0] : c == 1 ? d[1] : d[2]) + (j - row0) * kStride + col;
    if (chunk) {
      mv.template copy<16>(dst, src);
    } else {
      for (int x = 0; x < count; ++x) mv.template copy<int(sizeof(T))>(dst + x, src + x);
    }
  }
}

// Copies plane `plane` of the three E components (rows j0-1 .. j0+rows, columns k0-1 ..
// k0+32, clipped to the ghost layer at n+1) into its shared buffer.
template <typename T, typename Mover>
YEE_HD inline void fused_copy_e(const FusedArgs<T>& a, const FusedShared<T>& s, const FusedTile& t, long plane,
                                int tid, Mover& mv) {
  using R = SharedRow<T>;
  const long jmax = a.owned.hi[1] + 1, kmax = a.owned.hi[2] + 1;  // one past the ghost layer at n+1
  const long off = plane * a.src.sx;
  const T* const g[3] = {a.src.ex + off, a.src.ey + off, a.src.ez + off};
  T* const d[3] = {s.e_at(plane, 0, 0), s.e_at(plane, 1, 0), s.e_at(plane, 2, 0)};
  copy_plane<T, R::kStride, R::kPad, R::kChunks + 2>(g, a.src.sy, d, t.j0 - 1, t.j0 - 1,
                                                      t.j0 + s.rows + 1 < jmax ? t.j0 + s.rows + 1 : jmax, t.k0,
                                                      t.k0 - 1, t.k0 + kBlockK + 1 < kmax ? t.k0 + kBlockK + 1 : kmax,
                                                      tid, mv);
}

// Copies plane `plane` of H^{n-1/2} (rows j0-1 .. j0+rows-1, columns k0-1 .. k0+31, clipped).
template <typename T, typename Mover>
YEE_HD inline void fused_copy_h(const FusedArgs<T>& a, const FusedShared<T>& s, const FusedTile& t, long plane,
                                int tid, Mover& mv) {
  using R = SharedRow<T>;
  const long jmax = a.owned.hi[1], kmax = a.owned.hi[2] + 1;
  const long off = plane * a.src.sx;
  const T* const g[3] = {a.src.hx + off, a.src.hy + off, a.src.hz + off};
  T* const d[3] = {s.ho_at(plane, 0, 0), s.ho_at(plane, 1, 0), s.ho_at(plane, 2, 0)};
  copy_plane<T, R::kStride, R::kPad, R::kChunks + 1>(g, a.src.sy, d, t.j0 - 1, t.j0 - 1,
                                                      t.j0 + s.rows < jmax ? t.j0 + s.rows : jmax, t.k0, t.k0 - 1,
                                                      t.k0 + kBlockK < kmax ? t.k0 + kBlockK : kmax, tid, mv);
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

// The shared planes one H phase reads and writes: E^n at p (e) and p+1 (e1), H^{n-1/2} at
// p (ho), H^{n+1/2} at p (h), each three components at row 0; a cell is an index
// row * kStride + col into them, so the hot loops do no 64-bit index arithmetic.
template <typename T>
struct HPlanes {
  const T* e[3];
  const T* e1[3];
  const T* ho[3];
  T* h[3];
};

// H^{n+1/2} of the cell at index x, the CPU's expressions in the CPU's order
// (row_updates.hpp: h_row); `stride` is one row.
template <typename T>
YEE_HD inline void h_cell(const HPlanes<T>& q, int x, int stride, T c, T out[3]) {
  const T* ex = q.e[0];
  const T* ey = q.e[1];
  const T* ez = q.e[2];
  out[0] = q.ho[0][x] - c * ((ez[x + stride] - ez[x]) - (ey[x + 1] - ey[x]));
  out[1] = q.ho[1][x] - c * ((ex[x + 1] - ex[x]) - (q.e1[2][x] - ez[x]));
  out[2] = q.ho[2][x] - c * ((q.e1[1][x] - ey[x]) - (ex[x + stride] - ex[x]));
}

template <typename T>
YEE_HD inline HPlanes<T> fused_h_planes(const FusedShared<T>& s, long p) {
  HPlanes<T> q;
  for (int w = 0; w < 3; ++w) {
    q.e[w] = s.e_at(p, w, 0);
    q.e1[w] = s.e_at(p + 1, w, 0);
    q.ho[w] = s.ho_at(p, w, 0);
    q.h[w] = s.h_at(p, w, 0);
  }
  return q;
}

// Plane p, H phase, thread tid: H^{n+1/2} on this thread's cells of the tile (stored to
// shared memory, and to dst where p is a plane of the chunk) and of the ring (shared only).
template <typename T>
YEE_HD inline void fused_h_phase(const FusedArgs<T>& a, const FusedShared<T>& s, const FusedTile& t, long p,
                                 int tid) {
  using R = SharedRow<T>;
  const HPlanes<T> q = fused_h_planes(s, p);
  const int tx = tid % kBlockK, ty = tid / kBlockK;
  const int rows = int(t.j0 + s.rows < a.owned.hi[1] ? s.rows : a.owned.hi[1] - t.j0);  // tile rows inside
  const long k = t.k0 + tx;
  T v[3];
  if (k < a.owned.hi[2]) {
    const bool store = p >= t.i0;
    const long base = p * a.dst.sx + t.j0 * a.dst.sy + k;
    for (int r = ty; r < rows; r += kFusedWarps) {
      const int x = (r + 1) * R::kStride + R::kPad + tx;
      h_cell(q, x, R::kStride, a.c, v);
      for (int w = 0; w < 3; ++w) q.h[w][x] = v[w];
      if (store) {
        const long o = base + r * a.dst.sy;
        a.dst.hx[o] = v[0];
        a.dst.hy[o] = v[1];
        a.dst.hz[o] = v[2];
      }
    }
  }
  // Ring: row j0-1 (columns k0-1 .. k0+31), then column k0-1 (rows j0 .. j0+rows-1).
  const int ring_cols = int(t.k0 + kBlockK <= a.owned.hi[2] ? kBlockK + 1 : a.owned.hi[2] - t.k0 + 1);
  for (int x = tid; x < ring_cols + rows; x += kFusedThreads) {
    const int at = x < ring_cols ? R::kPad - 1 + x : (x - ring_cols + 1) * R::kStride + R::kPad - 1;
    h_cell(q, at, R::kStride, a.c, v);
    for (int w = 0; w < 3; ++w) q.h[w][at] = v[w];
  }
}

// E^{n+1} of the cell at index x from H^{n+1/2} at p (h) and p-1 (hp) and E^n (e), the
// CPU's expressions in the CPU's order (row_updates.hpp: e_row); no PEC.
template <typename T>
YEE_HD inline void e_cell(const T* const e[3], const T* const h[3], const T* const hp[3], int x, int stride, T c,
                          T out[3]) {
  const T* hx = h[0];
  const T* hy = h[1];
  const T* hz = h[2];
  out[0] = e[0][x] + c * ((hz[x] - hz[x - stride]) - (hy[x] - hy[x - 1]));
  out[1] = e[1][x] + c * ((hx[x] - hx[x - 1]) - (hz[x] - hp[2][x]));
  out[2] = e[2][x] + c * ((hy[x] - hp[1][x]) - (hx[x] - hx[x - stride]));
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
  const T* const e[3] = {s.e_at(p, 0, 0), s.e_at(p, 1, 0), s.e_at(p, 2, 0)};
  const T* const h[3] = {s.h_at(p, 0, 0), s.h_at(p, 1, 0), s.h_at(p, 2, 0)};
  const T* const hp[3] = {s.h_at(p - 1, 0, 0), s.h_at(p - 1, 1, 0), s.h_at(p - 1, 2, 0)};
  const int rows = int(t.j0 + s.rows < a.owned.hi[1] ? s.rows : a.owned.hi[1] - t.j0);
  const bool in_ik = p >= a.core.lo[0] && k >= a.core.lo[2];
  const bool wall_i = a.dst.goff[0] + p - 1 == 0, wall_k = a.dst.goff[2] + k - 1 == 0;
  const long base = p * a.dst.sx + t.j0 * a.dst.sy + k;
  T v[3];
  for (int r = ty; r < rows; r += kFusedWarps) {
    const long j = t.j0 + r;
    const int x = (r + 1) * R::kStride + R::kPad + tx;
    if (in_ik && j >= a.core.lo[1]) {
      e_cell(e, h, hp, x, R::kStride, a.c, v);
      const bool wall_j = a.dst.goff[1] + j - 1 == 0;
      if (wall_i || wall_j) v[2] = T(0);
      if (wall_i || wall_k) v[1] = T(0);
      if (wall_j || wall_k) v[0] = T(0);
    } else {
      for (int w = 0; w < 3; ++w) v[w] = e[w][x];
    }
    const long o = base + r * a.dst.sy;
    a.dst.ex[o] = v[0];
    a.dst.ey[o] = v[1];
    a.dst.ez[o] = v[2];
  }
}

}  // namespace cuda
}  // namespace yee
