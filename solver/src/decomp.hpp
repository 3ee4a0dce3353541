#pragma once
// Process-grid choice and block distribution of cells over ranks.
#include <array>

namespace yee {

// Factorisation px*py*pz = ranks with p_d <= n_d that minimises the halo surface;
// {0,0,0} when none fits. Deterministic, so every rank picks the same grid.
std::array<long, 3> choose_dims(const std::array<long, 3>& n, long ranks);

// Cells [begin, end) of part `coord` out of `parts` along an axis of n cells
// (the first n % parts parts get one extra cell).
inline long block_begin(long n, long parts, long coord) {
  const long base = n / parts, extra = n % parts;
  return coord * base + (coord < extra ? coord : extra);
}
inline long block_end(long n, long parts, long coord) { return block_begin(n, parts, coord + 1); }

}  // namespace yee
