// Cache model of the wavefront kernel (solver/README.md, "Wavefront kernel"): picks the
// time block T and the tile rows B for one rank.
//
// A thread sweeping one tile keeps about T+2 planes of B+T+1 rows (6 components, nz + 2
// ghost cells each) in its cache: step t at plane i reads planes i-1..i+1, and rows
// j-1..j+1 of rows that move down by one per step. Each row of a tile is loaded from
// memory (or the shared L3) once per pass and serves T steps of B rows, so the traffic
// per cell update is the fused kernel's times (B + T + 1) / (B * T). The model takes the
// (T, B) with the least traffic whose working set fits in 3/4 of the cache, at least two
// tiles per thread (so the threads' pipeline has work), T <= max_steps.
#include <algorithm>

#include "time_block.hpp"

namespace yee {

BlockChoice choose_time_block(long nz, long ny, int word_bytes, int threads, std::size_t cache_bytes,
                              long max_steps, long fixed_steps, long fixed_tile) {
  const double row_bytes = 6.0 * double(nz + 2) * word_bytes;
  const double budget = 0.75 * double(cache_bytes);
  const long t_lo = fixed_steps > 0 ? fixed_steps : std::min<long>(2, std::max<long>(1, max_steps));
  const long t_hi = fixed_steps > 0 ? fixed_steps : std::min<long>(16, std::max<long>(1, max_steps));
  const long b_lo = fixed_tile > 0 ? fixed_tile : 1;
  const long b_hi = fixed_tile > 0 ? fixed_tile : std::max<long>(1, ny / (2L * std::max(1, threads)));
  auto ratio = [](long t, long b) { return double(b + t + 1) / (double(b) * double(t)); };
  auto bytes = [&](long t, long b) { return double(t + 2) * double(b + t + 1) * row_bytes; };
  // Least traffic among the choices that fit; when none fits, the smallest working set.
  BlockChoice best{t_lo, b_lo, ratio(t_lo, b_lo)};
  bool best_fits = bytes(t_lo, b_lo) <= budget;
  for (long t = t_lo; t <= t_hi; ++t)
    for (long b = b_lo; b <= b_hi; ++b) {
      const bool fits = bytes(t, b) <= budget;
      const bool better = fits ? (!best_fits || ratio(t, b) < best.traffic_ratio)
                               : (!best_fits && bytes(t, b) < bytes(best.steps, best.tile_rows));
      if (better) {
        best = {t, b, ratio(t, b)};
        best_fits = fits;
      }
    }
  return best;
}

}  // namespace yee
