#pragma once
// The CUDA wavefront kernel's sweep: TB time steps per pass over the fields, as a block
// program the host test can run (like fused_block.hpp, whose tile and launch plan it shares;
// design: solver/NOTES-cuda.md, "Kernels"). Blocks of 256 threads, 8 rows of threads
// spread over the tile's rows; two barriers per step and plane, copies one plane ahead.
//
// A block owns a tile of 32 k x J j cells and streams along i through a chunk of planes,
// reading E^n, H^{n-1/2} from one copy of the fields and writing E^{n+TB}, H^{n+TB-1/2} of
// its tile into the other. Step s (1..TB) is computed on the tile grown by TB-s cells on
// every side (H one more on the low sides): the cone of cells the last step depends on,
// recomputed redundantly by neighbouring blocks, so no block waits for another. Along i,
// step s runs s-1 planes behind step 1 (front p: step s at plane p-s+1), and each step
// keeps the planes its successor still reads in shared memory: E^n three (one arriving),
// H^{n-1/2} two, and two of each intermediate E^s and H^s. Only one rank (no neighbours):
// cells on the ghost layers keep E^n (walls), and H there is read only by walls' E.
#include <algorithm>
#include <cstddef>

#include "backends/checksum_hash.hpp"  // YEE_HD
#include "backends/cuda/fused_block.hpp"
#include "kernel_contract.hpp"

namespace yee {
namespace cuda {

constexpr int kSweepWarps = 8;                       // rows of threads per block (32 threads each)
constexpr int kSweepThreads = kBlockK * kSweepWarps;  // 256

// Shared-memory row of the sweep: the interior k0..k0+31 starts on a 16-byte boundary after
// at least TB entries for the low-side cone.
template <typename T, int TB>
struct SweepRow {
  static constexpr int kChunk = 16 / int(sizeof(T));
  static constexpr int kPad = (TB + kChunk - 1) / kChunk * kChunk;
  static constexpr int kStride = kBlockK + 2 * kPad;
  static constexpr int kChunks = kBlockK / kChunk;
};

// Shared buffers, each [rows + 2 TB][kStride] of one component and plane.
template <int TB>
constexpr int sweep_buffers() {
  return 3 * 3 + 2 * 3 + 2 * 3 * TB + 2 * 3 * (TB - 1);  // E^n, H^{n-1/2}, H^1..H^TB, E^1..E^{TB-1}
}
template <typename T, int TB>
constexpr std::size_t sweep_smem_elems(long rows) {
  return std::size_t(sweep_buffers<TB>()) * std::size_t(rows + 2 * TB) * SweepRow<T, TB>::kStride;
}
template <typename T, int TB>
constexpr std::size_t sweep_smem_bytes(long rows) {
  return sweep_smem_elems<T, TB>(rows) * sizeof(T);
}

// Rows are indexed from j0-TB (row 0), columns from k0-kPad.
template <typename T, int TB>
struct SweepShared {
  T* base;
  long rows;  // J
  YEE_HD long plane_elems() const { return (rows + 2 * TB) * SweepRow<T, TB>::kStride; }
  // buffer b: E^n planes 0..8, H^{n-1/2} 9..14, H^s 15 + 6 (s-1) .., E^s 15 + 6 TB + 6 (s-1) ..
  YEE_HD T* buf(int b, long row) const { return base + b * plane_elems() + row * SweepRow<T, TB>::kStride; }
  YEE_HD T* e0(long plane, int c, long row) const { return buf(int(plane % 3) * 3 + c, row); }
  YEE_HD T* h0(long plane, int c, long row) const { return buf(9 + int(plane % 2) * 3 + c, row); }
  YEE_HD T* h(int s, long plane, int c, long row) const { return buf(15 + 6 * (s - 1) + int(plane % 2) * 3 + c, row); }
  // E^s for 1 <= s < TB (E^0: the E^n planes).
  YEE_HD T* e(int s, long plane, int c, long row) const {
    return s == 0 ? e0(plane, c, row) : buf(15 + 6 * TB + 6 * (s - 1) + int(plane % 2) * 3 + c, row);
  }
};

struct SweepProbe {
  long i, j, k;
  int id;
};

// What every block of one sweep shares.
template <typename T>
struct SweepArgs {
  DevFields<T> src, dst;
  Box owned;
  long rows, tiles_j, span;
  T c;
  // Soft source: Ez at `source` += source_value[s-1] right after step s updates E there.
  bool has_source;
  long source[3];
  double source_value[8];
  // Probes: samples[(t0 + s - 1) * stride + id] = component probe_comp at the probe after step s.
  const SweepProbe* probes;
  int nprobes, probe_comp;
  double* samples;
  long stride, t0;
};

template <typename T>
YEE_HD inline FusedTile sweep_tile(const SweepArgs<T>& a, long bx, long tj, long bz) {
  return fused_tile(a, bx, tj, bz);
}

YEE_HD inline long clampl(long x, long lo, long hi) { return x < lo ? lo : x > hi ? hi : x; }

// ---------------------------------------------------------------------------- copies

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
  const int step = kSweepWarps * R;
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

// One plane of three components (E^n: e = true; H^{n-1/2}: e = false) over rows
// [jlo, jhi) and columns [klo, khi) (clipped to the arrays' ghost layers by the caller),
// into the shared buffers (copy_plane).
template <typename T, int TB, typename Mover>
YEE_HD inline void sweep_copy(const SweepArgs<T>& a, const SweepShared<T, TB>& s, const FusedTile& t, long plane,
                              bool e, long jlo, long jhi, long klo, long khi, int tid, Mover& mv) {
  using R = SweepRow<T, TB>;
  const long off = plane * a.src.sx;
  const T* const g[3] = {(e ? a.src.ex : a.src.hx) + off, (e ? a.src.ey : a.src.hy) + off,
                         (e ? a.src.ez : a.src.hz) + off};
  T* const d[3] = {e ? s.e0(plane, 0, 0) : s.h0(plane, 0, 0), e ? s.e0(plane, 1, 0) : s.h0(plane, 1, 0),
                   e ? s.e0(plane, 2, 0) : s.h0(plane, 2, 0)};
  copy_plane<T, R::kStride, R::kPad, R::kChunks + 2 * TB>(g, a.src.sy, d, t.j0 - TB, jlo, jhi, t.k0, klo, khi, tid,
                                                           mv);
}

// E^n of plane x over the cone of step 1 (rows and columns j0-TB .. j0+J+TB-1, clipped to
// the ghost layers), H^{n-1/2} over H^1's region.
template <typename T, int TB, typename Mover>
YEE_HD inline void sweep_copy_e(const SweepArgs<T>& a, const SweepShared<T, TB>& s, const FusedTile& t, long x,
                                int tid, Mover& mv) {
  if (x < 0 || x > a.owned.hi[0]) return;
  sweep_copy(a, s, t, x, true, clampl(t.j0 - TB, 0, a.owned.hi[1] + 1),
             clampl(t.j0 + s.rows + TB, 0, a.owned.hi[1] + 1), clampl(t.k0 - TB, 0, a.owned.hi[2] + 1),
             clampl(t.k0 + kBlockK + TB, 0, a.owned.hi[2] + 1), tid, mv);
}
template <typename T, int TB, typename Mover>
YEE_HD inline void sweep_copy_h(const SweepArgs<T>& a, const SweepShared<T, TB>& s, const FusedTile& t, long x,
                                int tid, Mover& mv) {
  if (x < 0 || x >= a.owned.hi[0]) return;
  sweep_copy(a, s, t, x, false, clampl(t.j0 - TB, 0, a.owned.hi[1]), clampl(t.j0 + s.rows + TB - 1, 0, a.owned.hi[1]),
             clampl(t.k0 - TB, 0, a.owned.hi[2]), clampl(t.k0 + kBlockK + TB - 1, 0, a.owned.hi[2]), tid, mv);
}

// Fronts of the sweep over the tile's chunk: step 1 runs planes i0-TB .. i1+TB-2.
YEE_HD inline long sweep_first_front(const FusedTile& t, int tb) { return t.i0 - tb; }
YEE_HD inline long sweep_last_front(const FusedTile& t, int tb) { return t.i1 + tb - 2; }

template <typename T, int TB, typename Mover>
YEE_HD inline void sweep_copy_first(const SweepArgs<T>& a, const SweepShared<T, TB>& s, const FusedTile& t, int tid,
                                    Mover& mv) {
  const long p = sweep_first_front(t, TB);
  sweep_copy_e(a, s, t, p, tid, mv);
  sweep_copy_e(a, s, t, p + 1, tid, mv);
  sweep_copy_h(a, s, t, p, tid, mv);
}
// At front p: E^n of plane p+2 and H^{n-1/2} of plane p+1 start arriving.
template <typename T, int TB, typename Mover>
YEE_HD inline void sweep_copy_next(const SweepArgs<T>& a, const SweepShared<T, TB>& s, const FusedTile& t, long p,
                                   int tid, Mover& mv) {
  if (p + 2 <= t.i1 + TB - 1) sweep_copy_e(a, s, t, p + 2, tid, mv);
  if (p + 1 <= t.i1 + TB - 2) sweep_copy_h(a, s, t, p + 1, tid, mv);
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

// Step s at front p works on plane p-s+1: H^s where the plane is in [i0-(TB-s)-1, i1+(TB-s))
// and E^s where it is in [i0-(TB-s), i1+(TB-s)), both within the arrays.
template <int TB>
YEE_HD inline bool sweep_h_plane(const FusedTile& t, const Box& owned, int s, long q) {
  return q >= t.i0 - (TB - s) - 1 && q < t.i1 + (TB - s) && q >= 0 && q < owned.hi[0];
}
template <int TB>
YEE_HD inline bool sweep_e_plane(const FusedTile& t, const Box& owned, int s, long q) {
  return q >= t.i0 - (TB - s) && q < t.i1 + (TB - s) && q >= 0 && q <= owned.hi[0];
}

// The shared planes of step s at plane q, each three components at row 0.
template <typename T, int TB>
YEE_HD inline HPlanes<T> sweep_h_planes(const SweepShared<T, TB>& sh, int s, long q) {
  HPlanes<T> h;
  for (int w = 0; w < 3; ++w) {
    h.e[w] = sh.e(s - 1, q, w, 0);
    h.e1[w] = sh.e(s - 1, q + 1, w, 0);
    h.ho[w] = s == 1 ? sh.h0(q, w, 0) : sh.h(s - 1, q, w, 0);
    h.h[w] = sh.h(s, q, w, 0);
  }
  return h;
}

// E^s of the cell at index x, (q, j, k), from H^s (h at q, hp at q-1) and E^{s-1} (e):
// e_cell, PEC and the source (the time loop's add_to). Off the owned
// box E^{s-1} is kept.
template <typename T>
YEE_HD inline void sweep_e_cell(const SweepArgs<T>& a, const T* const e[3], const T* const h[3],
                                const T* const hp[3], int s, long q, long j, long k, int x, int stride, T out[3]) {
  const Box& o = a.owned;
  if (q >= o.lo[0] && q < o.hi[0] && j >= o.lo[1] && j < o.hi[1] && k >= o.lo[2] && k < o.hi[2]) {
    e_cell(e, h, hp, x, stride, a.c, out);
    const bool wall_i = a.dst.goff[0] + q - 1 == 0, wall_j = a.dst.goff[1] + j - 1 == 0,
               wall_k = a.dst.goff[2] + k - 1 == 0;
    if (wall_i || wall_j) out[2] = T(0);
    if (wall_i || wall_k) out[1] = T(0);
    if (wall_j || wall_k) out[0] = T(0);
    if (a.has_source && q == a.source[0] && j == a.source[1] && k == a.source[2])
      out[2] = T(out[2] + T(a.source_value[s - 1]));
  } else {
    for (int w = 0; w < 3; ++w) out[w] = e[w][x];
  }
}

// Front p, H phase of step s (plane q = p-s+1), thread tid. Intermediate steps: H^s on the
// cone (rows j0-(TB-s)-1 .. j0+J+(TB-s)-1, likewise k, within 0..n), shared only. The
// last step: the tile (stored to dst too) and its one-cell low ring.
template <typename T, int TB>
YEE_HD inline void sweep_h_phase(const SweepArgs<T>& a, const SweepShared<T, TB>& sh, const FusedTile& t, int s,
                                 long p, int tid) {
  using R = SweepRow<T, TB>;
  const long q = p - s + 1;
  if (!sweep_h_plane<TB>(t, a.owned, s, q)) return;
  const HPlanes<T> hp = sweep_h_planes(sh, s, q);
  T v[3];
  if (s < TB) {
    const long g = TB - s;  // cone growth of this step
    const long jlo = clampl(t.j0 - g - 1, 0, a.owned.hi[1]), jhi = clampl(t.j0 + sh.rows + g, 0, a.owned.hi[1]);
    const long klo = clampl(t.k0 - g - 1, 0, a.owned.hi[2]), khi = clampl(t.k0 + kBlockK + g, 0, a.owned.hi[2]);
    const unsigned nc = unsigned(khi - klo), n = unsigned(jhi - jlo) * nc;
    const int x0 = int(jlo - (t.j0 - TB)) * R::kStride + int(R::kPad + (klo - t.k0));
    for (unsigned y = unsigned(tid); y < n; y += kSweepThreads) {
      const unsigned rr = y / nc;
      const int x = x0 + int(rr) * R::kStride + int(y - rr * nc);
      h_cell(hp, x, R::kStride, a.c, v);
      for (int w = 0; w < 3; ++w) hp.h[w][x] = v[w];
    }
    return;
  }
  // Last step: tile cells (coalesced stores), then the ring row j0-1 and column k0-1.
  const int tx = tid % kBlockK, ty = tid / kBlockK;
  const int rows = int(t.j0 + sh.rows < a.owned.hi[1] ? sh.rows : a.owned.hi[1] - t.j0);
  const long k = t.k0 + tx;
  if (k < a.owned.hi[2]) {
    const bool store = q >= t.i0;
    const long base = q * a.dst.sx + t.j0 * a.dst.sy + k;
    for (int r = ty; r < rows; r += kSweepWarps) {
      const int x = (TB + r) * R::kStride + R::kPad + tx;
      h_cell(hp, x, R::kStride, a.c, v);
      for (int w = 0; w < 3; ++w) hp.h[w][x] = v[w];
      if (store) {
        const long o = base + r * a.dst.sy;
        a.dst.hx[o] = v[0];
        a.dst.hy[o] = v[1];
        a.dst.hz[o] = v[2];
      }
    }
  }
  const int ring_cols = int(t.k0 + kBlockK <= a.owned.hi[2] ? kBlockK + 1 : a.owned.hi[2] - t.k0 + 1);
  for (int x = tid; x < ring_cols + rows; x += kSweepThreads) {
    const int at = x < ring_cols ? (TB - 1) * R::kStride + R::kPad - 1 + x
                                 : (TB + x - ring_cols) * R::kStride + R::kPad - 1;
    h_cell(hp, at, R::kStride, a.c, v);
    for (int w = 0; w < 3; ++w) hp.h[w][at] = v[w];
  }
}

// Front p, E phase of step s (plane q = p-s+1). Intermediate steps: E^s on the cone (rows
// j0-(TB-s) .. j0+J+(TB-s)-1, likewise k, within 0..n+1), shared only. The last step: the
// tile's owned cells, stored to dst.
template <typename T, int TB>
YEE_HD inline void sweep_e_phase(const SweepArgs<T>& a, const SweepShared<T, TB>& sh, const FusedTile& t, int s,
                                 long p, int tid) {
  using R = SweepRow<T, TB>;
  const long q = p - s + 1;
  if (!sweep_e_plane<TB>(t, a.owned, s, q)) return;
  const T* const e[3] = {sh.e(s - 1, q, 0, 0), sh.e(s - 1, q, 1, 0), sh.e(s - 1, q, 2, 0)};
  const T* const h[3] = {sh.h(s, q, 0, 0), sh.h(s, q, 1, 0), sh.h(s, q, 2, 0)};
  const T* const hp[3] = {sh.h(s, q - 1, 0, 0), sh.h(s, q - 1, 1, 0), sh.h(s, q - 1, 2, 0)};
  T v[3];
  if (s < TB) {
    T* const out[3] = {sh.e(s, q, 0, 0), sh.e(s, q, 1, 0), sh.e(s, q, 2, 0)};
    const long g = TB - s;
    const long jlo = clampl(t.j0 - g, 0, a.owned.hi[1] + 1), jhi = clampl(t.j0 + sh.rows + g, 0, a.owned.hi[1] + 1);
    const long klo = clampl(t.k0 - g, 0, a.owned.hi[2] + 1), khi = clampl(t.k0 + kBlockK + g, 0, a.owned.hi[2] + 1);
    const unsigned nc = unsigned(khi - klo), n = unsigned(jhi - jlo) * nc;
    for (unsigned y = unsigned(tid); y < n; y += kSweepThreads) {
      const unsigned rr = y / nc, cc = y - rr * nc;
      const long j = jlo + rr, k = klo + cc;
      const int x = int(j - (t.j0 - TB)) * R::kStride + int(R::kPad + (k - t.k0));
      sweep_e_cell(a, e, h, hp, s, q, j, k, x, R::kStride, v);
      for (int w = 0; w < 3; ++w) out[w][x] = v[w];
    }
    return;
  }
  if (q < t.i0) return;
  const int tx = tid % kBlockK, ty = tid / kBlockK;
  const long k = t.k0 + tx;
  if (k >= a.owned.hi[2]) return;
  const int rows = int(t.j0 + sh.rows < a.owned.hi[1] ? sh.rows : a.owned.hi[1] - t.j0);
  const long base = q * a.dst.sx + t.j0 * a.dst.sy + k;
  for (int r = ty; r < rows; r += kSweepWarps) {
    const int x = (TB + r) * R::kStride + R::kPad + tx;
    sweep_e_cell(a, e, h, hp, s, q, t.j0 + r, k, x, R::kStride, v);
    const long o = base + r * a.dst.sy;
    a.dst.ex[o] = v[0];
    a.dst.ey[o] = v[1];
    a.dst.ez[o] = v[2];
  }
}

// After the E phase of step s at front p (and a barrier): the probes this block owns (its
// tile and chunk) on plane p-s+1 record the component after step s. E of the last step is
// read back from dst, everything else from shared memory.
template <typename T, int TB>
YEE_HD inline void sweep_probes(const SweepArgs<T>& a, const SweepShared<T, TB>& sh, const FusedTile& t, int s,
                                long p, int tid) {
  using R = SweepRow<T, TB>;
  const long q = p - s + 1;
  for (int x = tid; x < a.nprobes; x += kSweepThreads) {
    const SweepProbe& pr = a.probes[x];
    if (pr.i != q || pr.i < t.i0 || pr.i >= t.i1 || pr.j < t.j0 || pr.j >= t.j0 + sh.rows || pr.k < t.k0 ||
        pr.k >= t.k0 + kBlockK)
      continue;
    const long row = pr.j - (t.j0 - TB), col = R::kPad + (pr.k - t.k0);
    const int c = a.probe_comp;
    double v;
    if (c >= 3) {
      v = double(sh.h(s, q, c - 3, row)[col]);
    } else if (s < TB) {
      v = double(sh.e(s, q, c, row)[col]);
    } else {
      const T* comp = c == 0 ? a.dst.ex : c == 1 ? a.dst.ey : a.dst.ez;
      v = double(comp[q * a.dst.sx + pr.j * a.dst.sy + pr.k]);
    }
    a.samples[(a.t0 + s - 1) * a.stride + pr.id] = v;
  }
}

}  // namespace cuda
}  // namespace yee
