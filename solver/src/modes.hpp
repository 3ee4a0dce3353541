#pragma once
// Cavity modes of the PEC box: parsing of --init-mode and the discrete Yee eigenfrequency.
#include <array>
#include <string>
#include <vector>

namespace yee {

// A single-component eigenmode: E_comp = prod_d sin(m_d*pi*x_d/L_d) over the two axes
// other than comp (the mode index along comp is 0, so the field is divergence free).
struct Mode {
  int comp;                // 0 = Ex, 1 = Ey, 2 = Ez
  std::array<int, 3> m;    // mode numbers (m, n, p)
  std::string name;
};

struct InitSpec {
  bool pulse = false;      // Gaussian Ez blob at the source position
  std::vector<Mode> modes;
};

InitSpec parse_init_mode(const std::string& spec);  // throws UsageError

// Angular frequency (normalised units, c = dx = 1) of mode m in an n-cell box with
// Courant number S: sin(w*dt/2) = S * sqrt(sum_d sin^2(m_d*pi/(2*n_d))).
double yee_mode_omega(const std::array<int, 3>& m, const std::array<long, 3>& n, double courant);

}  // namespace yee
