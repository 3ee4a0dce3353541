#pragma once
// XDMF 3 sidecar (fields.xdmf) so ParaView/VisIt open the HDF5 output as a time series:
// a temporal collection of steps; a step is one grid (root/shared) or a spatial
// collection of the ranks' blocks (per-rank). Axis note: datasets are (i, j, k) with k
// fastest; XDMF reads the slowest axis as z, so viewers show the solver's x as z.
#include <string>
#include <vector>

#include "io/layout.hpp"

namespace yee {
namespace io {

struct XdmfPiece {
  std::string file;  // HDF5 file name relative to the sidecar
  Block block;
};

struct XdmfStep {
  long step = 0;
  double time = 0.0;
  std::vector<XdmfPiece> pieces;
};

// The sidecar's text for these steps and components (precision in bytes: 4 or 8); records:
// the files hold one dataset /fields of records (--hdf5-layout records), not one per component.
std::string xdmf_text(const std::vector<XdmfStep>& steps, const std::vector<int>& comps, int precision,
                      bool records = false);

}  // namespace io
}  // namespace yee
