// Cache model of the wavefront kernel (solver/README.md, "Wavefront kernel"): picks the
// time block T and the tile rows B for one rank.
//
// Rows are nz + 2 cells of 6 components. Between two fronts a thread's tile keeps T + 2
// planes of B + T + 1 rows in flight (the skewed tile is B rows wide at every step and
// spans T + 1 more over the pass); that working set must stay in the thread's share of the
// last-level cache, of which the model budgets half (the rest: other data, associativity,
// neighbours on a shared cache). Each of those rows is loaded from memory once per pass and
// serves T steps of B rows, so the memory traffic per cell update is the fused kernel's
// times r = (B + T + 1) / (B * T). With neighbour ranks, a pass recomputes about T layers of
// a subdomain n cells deep (max_steps) redundantly: a cost factor 1 + T / n. The model takes
// the (T, B) with the least r * (1 + T / n), T <= 16 (measured: longer passes gain nothing
// on the 2-core EPYC of the README's tables), B at least two tiles per thread.
#include <algorithm>

#include "time_block.hpp"

namespace yee {

BlockChoice choose_time_block(long nz, long ny, int word_bytes, int threads, std::size_t cache_bytes,
                              long max_steps, long fixed_steps, long fixed_tile) {
  const double row_bytes = 6.0 * double(nz + 2) * word_bytes;
  const double budget_rows = 0.5 * double(cache_bytes) / row_bytes;
  const long tile_cap = std::max<long>(1, ny / (2L * std::max(1, threads)));
  const long t_cap = std::max<long>(1, std::min<long>(max_steps, 16));
  const bool split = max_steps < PassPlan::kMaxSteps;
  auto ratio = [](long t, long b) { return double(b + t + 1) / (double(b) * double(t)); };
  auto rows_for = [&](long t) {  // the widest tile whose pass working set fits the budget
    if (fixed_tile > 0) return fixed_tile;
    return std::max<long>(1, std::min<long>(tile_cap, long(budget_rows / double(t + 2)) - t - 1));
  };
  if (fixed_steps > 0) return {fixed_steps, rows_for(fixed_steps), ratio(fixed_steps, rows_for(fixed_steps))};
  BlockChoice best{1, rows_for(1), ratio(1, rows_for(1))};
  double best_cost = best.traffic_ratio;
  for (long t = 2; t <= t_cap; ++t) {
    const long b = rows_for(t);
    const double cost = ratio(t, b) * (split ? 1.0 + double(t) / double(max_steps) : 1.0);
    if (cost < best_cost) best = {t, b, ratio(t, b)}, best_cost = cost;
  }
  return best;
}

long even_tile_rows(long span, long max_rows, int threads) {
  const long nth = std::max(1, threads), rows = std::max<long>(1, max_rows);
  const long tiles = ((span + rows - 1) / rows + nth - 1) / nth * nth;
  return std::max<long>(1, (span + tiles - 1) / tiles);
}

}  // namespace yee
