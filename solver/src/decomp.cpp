#include "decomp.hpp"

namespace yee {

std::array<long, 3> choose_dims(const std::array<long, 3>& n, long ranks) {
  std::array<long, 3> best{0, 0, 0};
  double best_cost = 0.0;
  for (long px = ranks; px >= 1; --px) {
    if (ranks % px || px > n[0]) continue;
    for (long py = ranks / px; py >= 1; --py) {
      if ((ranks / px) % py || py > n[1]) continue;
      const long pz = ranks / px / py;
      if (pz > n[2]) continue;
      // Halo traffic ~ total interior face area; ties go to the first found, i.e. the
      // most ranks along x (slowest index), which keeps the contiguous z rows long.
      const double cost = double(px - 1) * n[1] * n[2] + double(py - 1) * n[0] * n[2] + double(pz - 1) * n[0] * n[1];
      if (best[0] == 0 || cost < best_cost) {
        best = {px, py, pz};
        best_cost = cost;
      }
    }
  }
  return best;
}

}  // namespace yee
