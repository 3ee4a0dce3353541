#pragma once
// Geometry and metadata of one piece of output: a block of the global grid (the whole
// grid for root/shared, one rank's owned cells for per-rank) at one time step.
#include <string>
#include <vector>

namespace yee {
namespace io {

struct Block {
  long off[3] = {0, 0, 0};  // global index of the block's first cell
  long n[3] = {0, 0, 0};    // cells per axis
  long cells() const { return n[0] * n[1] * n[2]; }
};

struct Frame {
  long step = 0;            // time step after which the fields are written
  double time_e = 0.0;      // E is at level step: t = step * dt
  double time_h = 0.0;      // H is at level step - 1/2
  double dt = 0.0;          // normalised (cell size 1, c = 1): dt = Courant number
  double dx_m = 0.0;        // cell size in metres (--dx)
  long gn[3] = {0, 0, 0};   // global grid
  int ranks = 1;
  int rank = -1;            // writer rank for per-rank files, -1 for whole-grid files
  std::vector<int> comps;   // Component ids, in file order
  int chunk[3] = {0, 0, 0}; // HDF5 chunk shape, 0 = contiguous
  int deflate = -1;         // HDF5 deflate level, -1 = none
  bool records = false;     // HDF5: one dataset "fields" of records (array of comps.size() values)
  bool fsync = false;
  bool coordinates = false; // ASCII: x y z in metres and fixed-width exponent notation (paper 001)
  std::string tag;          // unique suffix of temporary names
};

// Element type of the field buffers.
template <typename T> struct TypeName;
template <> struct TypeName<float> { static const char* numpy() { return "float32"; } };
template <> struct TypeName<double> { static const char* numpy() { return "float64"; } };

// Time of component comp in frame fr (E at integer levels, H at half levels).
inline double component_time(const Frame& fr, int comp) { return comp < 3 ? fr.time_e : fr.time_h; }

}  // namespace io
}  // namespace yee
