#pragma once
// The wavefront (temporally blocked) kernel: what the time loop asks of a backend that
// can advance several time steps per pass over the fields. Only the CPU backend has it
// (src/backends/cpu/time_block.cpp); other backends link time_block_none.cpp, and the
// options reject --kernel wavefront there. Design and cache model: solver/README.md.
#include <cstddef>
#include <vector>

#include "kernel_contract.hpp"

namespace yee {

// One pass: steps 0..steps-1 of a block of time steps. Step t updates H on box[t] and E on
// ebox[t] (local indices; on a face toward a neighbour rank the boxes reach t-dependent
// depths into the ghost layers, where the pass recomputes the neighbour's cells
// redundantly; ebox[t] lies inside box[t] and shares its upper bounds).
struct PassPlan {
  static constexpr int kMaxSteps = 64;
  int steps = 0;
  Box box[kMaxSteps];
  Box ebox[kMaxSteps];
  long tile_rows = 8;  // j rows per tile (in the skewed coordinate j + t)
  // Soft source: added to Ez at `source` (local indices) right after E is updated
  // there, at every step t whose ebox holds it.
  bool has_source = false;
  long source[3] = {0, 0, 0};
  double source_value[kMaxSteps] = {};
  // Probes (owned points only): sample[t * stride + id] = component at the point after step t.
  struct Probe {
    long i, j, k;
    int id;
  };
  std::vector<Probe> probes;
  int probe_comp = kEz;
  double* samples = nullptr;
  std::size_t sample_stride = 0;
};

namespace kernels {

// Runs one pass. Results are bitwise identical to `steps` calls of the fused kernel.
template <typename T> void time_block_pass(Fields<T>& f, const PassPlan& plan, T c);

// Every component in box b (local indices, ghosts allowed), packed in (comp, i, j, k)
// order into buf / unpacked from it; returns the number of elements.
template <typename T> std::size_t pack_box(const Fields<T>& f, const Box& b, T* buf);
template <typename T> void unpack_box(Fields<T>& f, const Box& b, const T* buf);

// Bytes of cache one thread can keep a pass's working set in (the L2 of a core).
std::size_t cache_bytes_per_thread();

}  // namespace kernels

// Cache model: time block T and tile rows for a rank's box of nz-cell rows (see
// solver/README.md). max_steps bounds T (the halo depth a subdomain allows).
struct BlockChoice {
  long steps;
  long tile_rows;
  double traffic_ratio;  // memory traffic per cell update / the fused kernel's
};
// Tile rows for a pass whose skewed rows span `span` (ny + T - 1 on one rank): the fewest
// tiles of at most max_rows that are a multiple of the thread count, evened out, so that
// round-robin tiles give every thread the same share (a last short tile would leave all
// but one thread idle while it runs).
long even_tile_rows(long span, long max_rows, int threads);
BlockChoice choose_time_block(long nz, long ny, int word_bytes, int threads, std::size_t cache_bytes,
                              long max_steps, long fixed_steps, long fixed_tile);

}  // namespace yee

// Each backend's time-block file ends with YEE_INSTANTIATE_TIME_BLOCK(float) and (double) inside
// namespace yee::kernels: the template part of the time-block contract is listed once, here.
#define YEE_INSTANTIATE_TIME_BLOCK(T)                                                                \
  template void time_block_pass<T>(Fields<T>&, const PassPlan&, T);                                 \
  template std::size_t pack_box<T>(const Fields<T>&, const Box&, T*);                               \
  template void unpack_box<T>(Fields<T>&, const Box&, const T*);
