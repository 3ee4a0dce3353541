#pragma once
// The two row updates every CPU kernel (split, fused, wavefront) is made of. Each cell is
// always computed by exactly these expressions (and -ffp-contract=off), which is what
// makes every kernel, tile size and decomposition bitwise identical.
#include "kernel_contract.hpp"

#define YEE_RESTRICT __restrict__

namespace yee {
namespace kernels {

// H^{n+1/2} = H^{n-1/2} - c curl E^n along one k row.
template <typename T, bool kEnergy>
inline void h_row(Fields<T>& f, long i, long j, long k0, long k1, T c, double& e2, double& hh) {
  const long o = f.at(i, j, 0), sx = f.sx, sy = f.sy;
  const T* YEE_RESTRICT ex = f.comp[kEx] + o;
  const T* YEE_RESTRICT ey = f.comp[kEy] + o;
  const T* YEE_RESTRICT ez = f.comp[kEz] + o;
  T* YEE_RESTRICT hx = f.comp[kHx] + o;
  T* YEE_RESTRICT hy = f.comp[kHy] + o;
  T* YEE_RESTRICT hz = f.comp[kHz] + o;
  if (kEnergy) {
    double se = 0.0, sh = 0.0;
#pragma omp simd reduction(+ : se, sh)
    for (long k = k0; k < k1; ++k) {
      const T nx = hx[k] - c * ((ez[k + sy] - ez[k]) - (ey[k + 1] - ey[k]));
      const T ny = hy[k] - c * ((ex[k + 1] - ex[k]) - (ez[k + sx] - ez[k]));
      const T nz = hz[k] - c * ((ey[k + sx] - ey[k]) - (ex[k + sy] - ex[k]));
      se += double(ex[k]) * ex[k] + double(ey[k]) * ey[k] + double(ez[k]) * ez[k];
      sh += double(hx[k]) * nx + double(hy[k]) * ny + double(hz[k]) * nz;
      hx[k] = nx;
      hy[k] = ny;
      hz[k] = nz;
    }
    e2 += se;
    hh += sh;
  } else {
#pragma omp simd
    for (long k = k0; k < k1; ++k) {
      hx[k] = hx[k] - c * ((ez[k + sy] - ez[k]) - (ey[k + 1] - ey[k]));
      hy[k] = hy[k] - c * ((ex[k + 1] - ex[k]) - (ez[k + sx] - ez[k]));
      hz[k] = hz[k] - c * ((ey[k + sx] - ey[k]) - (ex[k + sy] - ex[k]));
    }
  }
}

// E^{n+1} = E^n + c curl H^{n+1/2} along one k row, then PEC: tangential E on the
// walls at global index 0 is forced back to 0.
template <typename T>
inline void e_row(Fields<T>& f, long i, long j, long k0, long k1, T c) {
  const long o = f.at(i, j, 0), sx = f.sx, sy = f.sy;
  T* YEE_RESTRICT ex = f.comp[kEx] + o;
  T* YEE_RESTRICT ey = f.comp[kEy] + o;
  T* YEE_RESTRICT ez = f.comp[kEz] + o;
  const T* YEE_RESTRICT hx = f.comp[kHx] + o;
  const T* YEE_RESTRICT hy = f.comp[kHy] + o;
  const T* YEE_RESTRICT hz = f.comp[kHz] + o;
#pragma omp simd
  for (long k = k0; k < k1; ++k) {
    ex[k] = ex[k] + c * ((hz[k] - hz[k - sy]) - (hy[k] - hy[k - 1]));
    ey[k] = ey[k] + c * ((hx[k] - hx[k - 1]) - (hz[k] - hz[k - sx]));
    ez[k] = ez[k] + c * ((hy[k] - hy[k - sx]) - (hx[k] - hx[k - sy]));
  }
  const bool wall_i = f.goff[0] + i - 1 == 0, wall_j = f.goff[1] + j - 1 == 0;
  if (wall_i || wall_j) {
    for (long k = k0; k < k1; ++k) {
      ez[k] = T(0);
      if (wall_i) ey[k] = T(0);
      if (wall_j) ex[k] = T(0);
    }
  }
  if (f.goff[2] + k0 - 1 == 0) {
    ex[k0] = T(0);
    ey[k0] = T(0);
  }
}

}  // namespace kernels
}  // namespace yee
