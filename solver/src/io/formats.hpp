#pragma once
// The three file formats. Each writes one block of the grid (data[c] holds
// block.cells() values of component frame.comps[c], C order, k fastest) to one file
// (binary: data file + JSON header) atomically, adds what it wrote to `tally`, and
// returns "" or a one-line reason. Layouts are documented in solver/README.md (I/O).
#include <mpi.h>

#include <string>
#include <vector>

#include "io/layout.hpp"

namespace yee {
namespace io {

struct Tally {
  double bytes = 0.0;
  long files = 0;
};

// ASCII: '#' header lines, then one row per cell: "i j k <components>" (global indices,
// shortest round-trip decimal values), or with fr.coordinates paper 001's rows "x y z
// <components>" (the cell's coordinates in metres, every value in fixed-width exponent
// notation with the digits that read back to the same float/double).
template <typename T>
std::string write_ascii(const std::string& path, const Frame& fr, const Block& b, const std::vector<const T*>& data,
                        Tally& tally);

// Raw little-endian arrays, one after the other in frame order, in BASE.bin, described
// by BASE.json (shape, dtype, order, offsets, step, time).
template <typename T>
std::string write_binary(const std::string& base, const Frame& fr, const Block& b, const std::vector<const T*>& data,
                         Tally& tally);

// HDF5 with the serial driver: one dataset per component, shaped like the block, with
// attributes (step, time, dt, dx, global shape, offset).
template <typename T>
std::string write_hdf5(const std::string& path, const Frame& fr, const Block& b, const std::vector<const T*>& data,
                       Tally& tally);

// One HDF5 file with global datasets written collectively over comm with MPI-IO; each
// rank contributes its block `mine`. Collective; returns the same verdict on every rank.
template <typename T>
std::string write_hdf5_shared(MPI_Comm comm, const std::string& path, const Frame& fr, const Block& mine,
                              const std::vector<const T*>& data, Tally& tally);

// Silences HDF5's own error printing (the writers report errors themselves).
void quiet_hdf5();

}  // namespace io
}  // namespace yee
