// Cache model of the wavefront kernel (solver/README.md, "Wavefront kernel"): picks the
// time block T and the tile rows B for one rank.
//
// Rows are nz + 2 cells of 6 components. Step t+1 of a front reuses the planes step t has
// just updated, so about 3 planes of B + 2 rows must stay in a core's L2: that bounds B.
// A tile's rows are loaded from memory once per pass and serve T steps of B rows, so the
// memory traffic per cell update is the fused kernel's times r = (B + T + 1) / (B * T). T
// grows until r <= 1/3 (the fused kernel is memory bound at about a third of the row
// kernels' in-cache speed, so less traffic buys nothing) and stays as small as that allows,
// since every extra step in flight adds a plane to the working set. Both are capped by the
// flags, by max_steps (the halo depth a subdomain allows) and by two tiles per thread.
#include <algorithm>

#include "time_block.hpp"

namespace yee {

BlockChoice choose_time_block(long nz, long ny, int word_bytes, int threads, std::size_t cache_bytes,
                              long max_steps, long fixed_steps, long fixed_tile) {
  const double row_bytes = 6.0 * double(nz + 2) * word_bytes;
  const long tile_cap = std::max<long>(1, ny / (2L * std::max(1, threads)));
  const long l2_rows = long(double(cache_bytes) / (3.0 * row_bytes)) - 2;
  const long b = fixed_tile > 0 ? fixed_tile : std::max<long>(1, std::min(tile_cap, l2_rows));
  const long t_cap = std::max<long>(1, std::min<long>(max_steps, 16));
  auto ratio = [b](long t) { return double(b + t + 1) / (double(b) * double(t)); };
  long t = fixed_steps > 0 ? fixed_steps : std::min<long>(2, t_cap);
  if (fixed_steps <= 0)
    while (t < t_cap && ratio(t) > 1.0 / 3.0) ++t;
  return {t, b, ratio(t)};
}

}  // namespace yee
