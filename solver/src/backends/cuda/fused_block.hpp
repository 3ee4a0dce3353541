#pragma once
// The CUDA fused kernel (one sweep per time step, 12 field words per cell) as a block
// program that a host test can run: tile geometry, launch plan and the per-thread work of
// one plane, free of CUDA calls. kernels.cpp runs it with one barrier per plane and cp.async
// for the copies; tests/cuda_fused_emulator.hpp runs the same schedule thread by thread on
// the host (copies landing at once or as late as the waits allow, threads forward or
// backward) and compares bitwise with the CPU backend. Design: solver/NOTES-cuda.md,
// "Kernels" and "Fused kernel, pipelined".
//
// A block owns a tile of 32 k x J j cells (J <= 32), one thread per cell (J warps), and
// streams along i through a chunk of planes. Reads come from one copy of the fields (src),
// writes go to the other (dst), so no block can overwrite what another still reads:
// H^{n+1/2} is computed on the tile plus a one-cell ring on its low j and k sides
// (recomputed, not stored), from which E^{n+1} on the tile follows inside the block.
//
// Pipeline, D planes deep (D = 1..3): iteration `it` (plane p = i0-1+it) starts with the
// wait for its copies and one barrier, issues the copies of E^n at p+D+1 and H^{n-1/2} at
// p+D (cp.async, one commit group per iteration), then computes E^{n+1} at p-1 and
// H^{n+1/2} at p. Shared memory: D+2 planes of E^n (p and p+1 read, D in flight), D+1 of
// H^{n-1/2} (p read, D in flight), 2 of H^{n+1/2} (p written, p-1 read). What a thread
// needs only at its own cell, E^n and H^{n+1/2} at p-1 and H^{n+1/2} at p-2, it keeps in
// registers (FusedCell), so a slot is free for the next copy as soon as the barrier passes.
#include <algorithm>
#include <cstddef>

#include "backends/checksum_hash.hpp"  // YEE_HD
#include "backends/cuda/stencil.hpp"
#include "kernel_contract.hpp"

namespace yee {
namespace cuda {

constexpr int kFusedMaxRows = 32;                       // one warp per tile row, 1024 threads
constexpr int kFusedMaxThreads = kBlockK * kFusedMaxRows;
constexpr int kFusedMaxDepth = 3;
constexpr int kFusedDefaultDepth = 2;  // planes of copies in flight (YEE_CUDA_FUSED_DEPTH); NOTES-cuda.md

// Default tile rows (J) per precision; --tile overrides (1 .. kFusedMaxRows); halved where
// a block does not fit the device's shared memory. Measured on an H200 at 512^3, depth 2
// (NOTES-cuda.md, "Fused kernel, pipelined"): f32 32 rows 60.8 Gcells/s (one block of 1024
// threads per SM, 141 KB of shared memory), 16 rows 51.8 (two blocks of 512), 8 rows 47.1;
// f64 8 rows 29.0 (three blocks of 256, 72 KB each), 12 rows 29.1, 4 rows 28.1.
template <typename T>
constexpr long fused_default_rows() {
  return sizeof(T) == 4 ? 32 : 8;
}

// Shared-memory row: the interior k0..k0+31 starts 16 bytes in (16-byte copies land
// aligned); the 16 bytes before it hold k0-kPad..k0-1, those after it k0+32..: the ring
// columns are copied as whole 16-byte pieces like the interior.
template <typename T>
struct SharedRow {
  static constexpr int kPad = 16 / int(sizeof(T));              // elements before the interior
  static constexpr int kStride = kBlockK + 2 * kPad;             // elements per row (a multiple of 16 B)
  static constexpr int kChunk = 16 / int(sizeof(T));             // elements per 16-byte copy
  static constexpr int kChunks = kBlockK / kChunk;               // 16-byte copies per interior row
};

YEE_HD constexpr int fused_e_slots(int depth) { return depth + 2; }
YEE_HD constexpr int fused_ho_slots(int depth) { return depth + 1; }
constexpr int kFusedHSlots = 2;

template <typename T>
constexpr std::size_t fused_smem_elems(long rows, int depth) {
  return std::size_t(SharedRow<T>::kStride) * 3 *
         std::size_t(fused_e_slots(depth) * (rows + 2) + (fused_ho_slots(depth) + kFusedHSlots) * (rows + 1));
}
template <typename T>
constexpr std::size_t fused_smem_bytes(long rows, int depth) {
  return fused_smem_elems<T>(rows, depth) * sizeof(T);
}

// Views of the block's shared memory: slot s, component c, row 0 (that of j0-1); column
// kPad is k0. E^n planes hold rows j0-1 .. j0+J, the H planes rows j0-1 .. j0+J-1.
template <typename T>
struct FusedShared {
  T* e;   // [D+2][3][rows+2][kStride]: E^n
  T* ho;  // [D+1][3][rows+1][kStride]: H^{n-1/2}
  T* h;   // [2][3][rows+1][kStride]: H^{n+1/2}
  int rows;
  YEE_HD T* e_at(int slot, int c) const { return e + (slot * 3 + c) * (rows + 2) * SharedRow<T>::kStride; }
  YEE_HD T* ho_at(int slot, int c) const { return ho + (slot * 3 + c) * (rows + 1) * SharedRow<T>::kStride; }
  YEE_HD T* h_at(int slot, int c) const { return h + (slot * 3 + c) * (rows + 1) * SharedRow<T>::kStride; }
};

template <typename T>
YEE_HD inline FusedShared<T> fused_shared(T* base, int rows, int depth) {
  constexpr int S = SharedRow<T>::kStride;
  FusedShared<T> s;
  s.rows = rows;
  s.e = base;
  s.ho = s.e + fused_e_slots(depth) * 3 * (rows + 2) * S;
  s.h = s.ho + fused_ho_slots(depth) * 3 * (rows + 1) * S;
  return s;
}

// What every block of one launch shares (by value as the kernel's argument).
template <typename T>
struct FusedArgs {
  DevFields<T> src, dst;  // read E^n, H^{n-1/2}; write E^{n+1}, H^{n+1/2}
  Box owned;              // H everywhere here
  Box core;               // E updated here; elsewhere in `owned` E^n is copied (deferred faces)
  long rows;              // J: tile rows along j (threads per block: 32 J)
  long tiles_j;           // tiles along j (the grid's y extent may be smaller: blocks stride)
  long span;              // i planes per chunk
  T c;
};

// One block's tile: k0.. (32 wide), j0.. (rows tall), planes i0..i1-1.
struct FusedTile {
  long k0, j0, i0, i1;
};

// The tile of block (bx, tj, bz): any launch whose arguments name `owned`, `rows` and `span` (the fused
// kernel's FusedArgs, the wavefront sweep's SweepArgs).
template <typename Args>
YEE_HD inline FusedTile fused_tile(const Args& a, long bx, long tj, long bz) {
  FusedTile t;
  t.k0 = a.owned.lo[2] + bx * kBlockK;
  t.j0 = a.owned.lo[1] + tj * a.rows;
  t.i0 = a.owned.lo[0] + bz * a.span;
  t.i1 = t.i0 + a.span < a.owned.hi[0] ? t.i0 + a.span : a.owned.hi[0];
  return t;
}

// Launch plan: x = k tiles, y = j tiles (strided beyond 65535), z = i chunks. The chunk
// count trades the per-chunk start (`start` planes of extra work: 2 for the fused kernel,
// H on the plane before the chunk and the pipeline's last E-only iteration) against the
// last wave of blocks running part-empty: it minimises waves x (planes per chunk + start),
// given how many blocks are resident at once.
struct FusedPlan {
  long gx = 0, gy = 0, gz = 0, tiles_j = 0, span = 0;
  long blocks() const { return gx * gy * gz; }
};

inline FusedPlan plan_fused(const Box& owned, long rows, long sm_count, long blocks_per_sm, long start = 2) {
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
// Mover: copy<Bytes>(shared dst, global src) (cp.async on the GPU, kernels.cpp; in the
// host test a recorder that applies the copies early or late). The kernel commits one
// group per iteration and waits until at most D-1 groups are pending.
//
// Copy group g of a tile: E^n at plane i0+g (rows j0-1 .. j0+J, columns k0-1 .. k0+32,
// clipped to the ghost layer at n+1) and H^{n-1/2} at i0-1+g (rows j0-1 .. j0+J-1, columns
// k0-1 .. k0+31, clipped to the owned box), each where the chunk still needs it (E up to
// i1, H up to i1-1); "group -1" is E^n at i0-1, sent with group 0. A plane lands in the
// slot of its distance from i0-1 modulo the slot count. A row is P pieces of 16 bytes:
// piece 0 at k0-kChunk (the ring column k0-1 and the entries before it), then the
// interior, then (E only) the piece from k0+32; a piece from kmax on is not needed, one
// reaching past kmax is copied entry by entry. The pieces of a group (E's, then H's) are
// numbered and piece q goes to thread q mod nthreads, so a warp's copies are contiguous
// in both memories; the same pieces every plane, so each thread works out its first K once
// per tile (FusedPieces) and only moves them along i. (Piece 0 reads, on the first k tile,
// the end of the previous row's padding or the slack before the array: allocated memory,
// landing where nothing reads it.)

template <typename T>
struct FusedGeom {  // a tile's copy groups
  int ne, nh;       // rows of E^n and of H^{n-1/2} copied
  int pieces_e;     // pieces of E^n (3 components x ne rows x kChunks+2)
  int pieces;       // all pieces of a group
};

template <typename T>
YEE_HD inline FusedGeom<T> fused_geom(const FusedArgs<T>& a, const FusedTile& t) {
  using R = SharedRow<T>;
  FusedGeom<T> g;
  g.ne = int((t.j0 + a.rows + 1 < a.owned.hi[1] + 1 ? t.j0 + a.rows + 1 : a.owned.hi[1] + 1) - (t.j0 - 1));
  g.nh = int((t.j0 + a.rows < a.owned.hi[1] ? t.j0 + a.rows : a.owned.hi[1]) - (t.j0 - 1));
  g.pieces_e = 3 * g.ne * (R::kChunks + 2);
  g.pieces = g.pieces_e + 3 * g.nh * (R::kChunks + 1);
  return g;
}

// Piece q of group 0: its source, and its place in slot 0 of its kind packed into one int
// (`code`: element offset in bits 0-21, H^{n-1/2} in bit 22, entries - 1 in bits 23-26;
// -1: nothing to copy).
template <typename T>
struct FusedPiece {
  const T* src;
  int code;
};

template <typename T>
YEE_HD inline FusedPiece<T> fused_piece(const FusedArgs<T>& a, const FusedTile& t, const FusedGeom<T>& g, int q) {
  using R = SharedRow<T>;
  const bool e = q < g.pieces_e;
  const int P = e ? R::kChunks + 2 : R::kChunks + 1, n = e ? g.ne : g.nh;
  if (!e) q -= g.pieces_e;
  const int r = e ? q / (R::kChunks + 2) : q / (R::kChunks + 1);  // constant divisors
  const int piece = q - r * P;
  const int c = r >= 2 * n ? 2 : r >= n ? 1 : 0;
  const int row = r - c * n;
  const long k = t.k0 - R::kChunk + long(piece) * R::kChunk;
  const long kmax = e ? a.owned.hi[2] + 1 : a.owned.hi[2];
  FusedPiece<T> pc;
  pc.src = nullptr;
  pc.code = -1;
  if (k >= kmax) return pc;
  // (Selected, not indexed: a run-time index would put the pointers on the stack.)
  const T* comp = e ? (c == 0 ? a.src.ex : c == 1 ? a.src.ey : a.src.ez) : (c == 0 ? a.src.hx : c == 1 ? a.src.hy : a.src.hz);
  pc.src = comp + (e ? t.i0 : t.i0 - 1) * a.src.sx + (t.j0 - 1 + row) * a.src.sy + k;
  const int count = kmax - k < R::kChunk ? int(kmax - k) : R::kChunk;
  const int offset = (c * (e ? a.rows + 2 : a.rows + 1) + row) * R::kStride + piece * R::kChunk;
  pc.code = offset | (e ? 0 : 1 << 22) | (count - 1) << 23;
  return pc;
}

// The pieces a thread works out once per tile: enough for the default tiles (f32 16 rows:
// 999 pieces for 512 threads; f64 8 rows: 999 for 256).
template <typename T>
YEE_HD constexpr int fused_cached_pieces() {
  return sizeof(T) == 4 ? 2 : 4;
}

// A thread's first K pieces of every group (K * nthreads covers the default tiles; the rest,
// on small tiles, are worked out again each time).
template <typename T, int K>
struct FusedPieces {
  FusedPiece<T> p[K];
};

template <typename T, int K>
YEE_HD inline FusedPieces<T, K> fused_pieces(const FusedArgs<T>& a, const FusedTile& t, const FusedGeom<T>& g,
                                             int tid, int nthreads) {
  FusedPieces<T, K> ps;
  for (int m = 0; m < K; ++m) {
    const int q = tid + m * nthreads;
    if (q < g.pieces) {
      ps.p[m] = fused_piece(a, t, g, q);
    } else {
      ps.p[m].src = nullptr;
      ps.p[m].code = -1;
    }
  }
  return ps;
}

// One piece of a group: E^n pieces into e (the E slot of the group's plane), H^{n-1/2}
// pieces into ho unless h_ok is false (group -1), sources moved `shift` entries along i.
template <typename T, typename Mover>
YEE_HD inline void fused_issue(const FusedPiece<T>& pc, bool h_ok, T* e, T* ho, long shift, Mover& mv) {
  const int code = pc.code;
  if (code < 0) return;
  const bool h = code & (1 << 22);
  if (h && !h_ok) return;
  T* dst = (h ? ho : e) + (code & 0x3fffff);
  const T* src = pc.src + shift;
  if (code >> 23 == SharedRow<T>::kChunk - 1) {
    mv.template copy<16>(dst, src);
  } else {  // the grid's last k tile only
    const int count = (code >> 23) + 1;
#ifdef __CUDA_ARCH__
#pragma unroll 1  // (rarely run: keep it small)
#endif
    for (int x = 0; x < count; ++x) mv.template copy<int(sizeof(T))>(dst + x, src + x);
  }
}

// Copy group g (-1: E^n at i0-1 only) of this thread. Group g is needed while g < h_end
// (FusedThread): its E plane i0+g is at most i1 and its H plane i0-1+g below i1.
template <typename T, int D, int K, typename Mover>
YEE_HD inline void fused_copy_group(const FusedArgs<T>& a, const FusedShared<T>& s, const FusedTile& t,
                                    const FusedGeom<T>& geom, const FusedPieces<T, K>& ps, int g, int h_end, int tid,
                                    int nthreads, Mover& mv) {
  constexpr int NE = fused_e_slots(D), NHo = fused_ho_slots(D);
  if (g >= h_end) return;
  const bool h_ok = g >= 0;
  T* const e = s.e_at((g + 1) % NE, 0);
  T* const ho = s.ho_at((g + NHo) % NHo, 0);
  const long shift = long(g) * a.src.sx;
  for (int m = 0; m < K; ++m) fused_issue(ps.p[m], h_ok, e, ho, shift, mv);
  for (int q = tid + K * nthreads; q < geom.pieces; q += nthreads)
    fused_issue(fused_piece(a, t, geom, q), h_ok, e, ho, shift, mv);
}

// ---------------------------------------------------------------------------- updates

// A thread's part of a tile, fixed for the tile.
struct FusedThread {
  enum : int { kCell = 1, kCoreJK = 2, kWallJ = 4, kWallK = 8 };
  int x;            // shared index of its tile cell (row ty+1, column kPad+tx)
  // kCell: the cell (j0+ty, k0+tx) is owned (else the thread only copies); kCoreJK: its j and
  // k are in core (E updated there; elsewhere E^n is copied); kWallJ, kWallK: PEC walls.
  // (Bits of one register: the compiler would otherwise recompute the conditions.)
  int flags;
  int ring[2];      // shared indices of its ring cells of H (none: -1)
  // Iterations (it: plane i0-1+it) of the tile: H is computed while it < h_end, E (at
  // plane i0-2+it) from it = 2 on; E is updated (core) from it = core_it, PEC's i wall is at
  // it = wall_it.
  int iterations, h_end, core_it, wall_it;
};

// Thread tid of nthreads (32 J): tile cell (j0 + tid/32, k0 + tid%32). The ring's cells,
// row j0-1 at k0..k0+31 and then column k0-1 at j0-1 .. j0+J-1, are numbered from 0 and
// cell q goes to thread q (row cells to warp 0: conflict-free; column cells to the next
// warps), and to thread q-nthreads for the rest (only one-row tiles have more ring cells
// than threads).
template <typename T>
YEE_HD inline FusedThread fused_thread(const FusedArgs<T>& a, const FusedTile& t, int tid, int nthreads) {
  using R = SharedRow<T>;
  const int tx = tid % kBlockK, ty = tid / kBlockK;
  const long j = t.j0 + ty, k = t.k0 + tx;
  FusedThread th;
  th.x = (ty + 1) * R::kStride + R::kPad + tx;
  th.flags = (j < a.owned.hi[1] && k < a.owned.hi[2] ? FusedThread::kCell : 0) |
             (j >= a.core.lo[1] && k >= a.core.lo[2] ? FusedThread::kCoreJK : 0) |
             (a.dst.goff[1] + j - 1 == 0 ? FusedThread::kWallJ : 0) |
             (a.dst.goff[2] + k - 1 == 0 ? FusedThread::kWallK : 0);
  const int rows_in = int(t.j0 + a.rows < a.owned.hi[1] ? a.rows : a.owned.hi[1] - t.j0);
  const int ring_cells = kBlockK + rows_in + 1;
  for (int w = 0; w < 2; ++w) {
    const int q = tid + w * nthreads;
    th.ring[w] = -1;
    if (q < kBlockK) {
      if (t.k0 + q < a.owned.hi[2]) th.ring[w] = R::kPad + q;
    } else if (q < ring_cells) {
      th.ring[w] = (q - kBlockK) * R::kStride + R::kPad - 1;
    }
  }
  th.iterations = int(t.i1 - t.i0) + 2;
  th.h_end = int(t.i1 - t.i0) + 1;
  const long core_it = a.core.lo[0] - t.i0 + 2, wall_it = 3 - a.dst.goff[0] - t.i0;
  th.core_it = core_it < 0 ? 0 : int(core_it);  // (it < 2 never updates E)
  th.wall_it = wall_it < 0 || wall_it > th.iterations ? -1 : int(wall_it);
  return th;
}

// Values a thread carries from plane to plane for its own cell (registers on the GPU).
template <typename T>
struct FusedCell {
  long o;        // offset of its cell at plane i0-1+it in the fields
  T ex, ey, ez;  // E^n at p-1
  T hx, hy, hz;  // H^{n+1/2} at p-1
  T hpy, hpz;    // H^{n+1/2} at p-2
};

template <typename T>
YEE_HD inline FusedCell<T> fused_cell(const FusedArgs<T>& a, const FusedTile& t, int tid) {
  FusedCell<T> v{};
  v.o = (t.i0 - 1) * a.dst.sx + (t.j0 + tid / kBlockK) * a.dst.sy + t.k0 + tid % kBlockK;
  return v;
}

// H^{n+1/2} at shared index x of plane p: E^n at p (e) and p+1 (e1), H^{n-1/2} (ho); the
// CPU's expressions in the CPU's order (row_updates.hpp: h_row). Also returns E^n at x
// (ev), which the thread keeps for its E update.
template <typename T>
YEE_HD inline void fused_h_at(const T* const e[3], const T* const e1[3], const T* const ho[3], int x, T c,
                              T out[3], T ev[3]) {
  constexpr int S = SharedRow<T>::kStride;
  const T ex = e[0][x], ey = e[1][x], ez = e[2][x];
  ev[0] = ex;
  ev[1] = ey;
  ev[2] = ez;
  out[0] = ho[0][x] - c * ((e[2][x + S] - ez) - (e[1][x + 1] - ey));
  out[1] = ho[1][x] - c * ((e[0][x + 1] - ex) - (e1[2][x] - ez));
  out[2] = ho[2][x] - c * ((e1[1][x] - ey) - (e[0][x + S] - ex));
}

// Iteration `it` of a tile (plane p = i0-1+it), after the barrier: E^{n+1} at p-1 on this
// thread's cell (from its registers and the neighbours' H^{n+1/2} at p-1 in shared memory;
// PEC; E^n copied on the deferred faces), then H^{n+1/2} at p on its cell (to shared
// memory, to dst where p is in the chunk, and to its registers) and on its ring cells
// (shared memory only). The CPU's expressions in the CPU's order (row_updates.hpp: e_row).
template <typename T, int D>
YEE_HD inline void fused_iteration(const FusedArgs<T>& a, const FusedShared<T>& s, const FusedThread& th, int it,
                                   FusedCell<T>& v) {
  constexpr int S = SharedRow<T>::kStride, NE = fused_e_slots(D), NHo = fused_ho_slots(D);
  const T c = a.c;
  const bool cell = th.flags & FusedThread::kCell;
  if (it >= 2 && cell) {
    const int hs = (it - 1) & 1;
    const T* hx = s.h_at(hs, 0);
    const T* hy = s.h_at(hs, 1);
    const T* hz = s.h_at(hs, 2);
    const int x = th.x;
    T o0 = v.ex, o1 = v.ey, o2 = v.ez;
    if ((th.flags & FusedThread::kCoreJK) && it >= th.core_it) {
      o0 = v.ex + c * ((v.hz - hz[x - S]) - (v.hy - hy[x - 1]));
      o1 = v.ey + c * ((v.hx - hx[x - 1]) - (v.hz - v.hpz));
      o2 = v.ez + c * ((v.hy - v.hpy) - (v.hx - hx[x - S]));
      const bool wall_i = it == th.wall_it, wall_j = th.flags & FusedThread::kWallJ,
                 wall_k = th.flags & FusedThread::kWallK;
      if (wall_i || wall_j) o2 = T(0);
      if (wall_i || wall_k) o1 = T(0);
      if (wall_j || wall_k) o0 = T(0);
    }
    const long o = v.o - a.dst.sx;
    a.dst.ex[o] = o0;
    a.dst.ey[o] = o1;
    a.dst.ez[o] = o2;
  }
  if (it < th.h_end) {
    const int es = it % NE, es1 = (it + 1) % NE, hos = it % NHo, hs = it & 1;
    const T* const e[3] = {s.e_at(es, 0), s.e_at(es, 1), s.e_at(es, 2)};
    const T* const e1[3] = {s.e_at(es1, 0), s.e_at(es1, 1), s.e_at(es1, 2)};
    const T* const ho[3] = {s.ho_at(hos, 0), s.ho_at(hos, 1), s.ho_at(hos, 2)};
    T* const h[3] = {s.h_at(hs, 0), s.h_at(hs, 1), s.h_at(hs, 2)};
    T out[3], ev[3];
    if (cell) {
      const int x = th.x;
      fused_h_at(e, e1, ho, x, c, out, ev);
      h[0][x] = out[0];
      h[1][x] = out[1];
      h[2][x] = out[2];
      if (it >= 1) {
        a.dst.hx[v.o] = out[0];
        a.dst.hy[v.o] = out[1];
        a.dst.hz[v.o] = out[2];
      }
      v.ex = ev[0];
      v.ey = ev[1];
      v.ez = ev[2];
      v.hpy = v.hy;
      v.hpz = v.hz;
      v.hx = out[0];
      v.hy = out[1];
      v.hz = out[2];
    }
    for (int w = 0; w < 2; ++w) {
      const int x = th.ring[w];
      if (x < 0) continue;
      fused_h_at(e, e1, ho, x, c, out, ev);
      h[0][x] = out[0];
      h[1][x] = out[1];
      h[2][x] = out[2];
    }
  }
  v.o += a.dst.sx;
}

}  // namespace cuda
}  // namespace yee
