#pragma once
// Field output during the time loop: one format (ascii | binary | hdf5) and one
// strategy (root: gather to rank 0, one file; root-per-rank: gather to rank 0, which
// writes a file per rank's block, paper 001's one I/O server; per-rank: every rank writes
// its own file; shared: one HDF5 file written collectively). Whatever the strategy, a step's files hold the same
// global field. Field memory is read only through kernels::copy_owned.
#include <mpi.h>

#include <string>
#include <vector>

#include "io/io_stats.hpp"
#include "io/layout.hpp"
#include "io/xdmf.hpp"
#include "kernel_contract.hpp"
#include "options.hpp"

namespace yee {
namespace io {

template <typename T>
class FieldWriter {
 public:
  // Collective over cart (learns every rank's block).
  FieldWriter(const Options& opt, MPI_Comm cart, const Fields<T>& f);

  // True when the fields are written after step `step` (1-based count of steps done).
  bool due(long step) const { return active_ && step % every_ == 0; }

  // Writes the fields after `step`. Collective; false on every rank when any rank
  // failed (error() then names the rank and the reason, the same on every rank).
  bool write_step(const Fields<T>& f, long step);

  // End of the output. The XDMF sidecar (HDF5 only) needs nothing more: it is rewritten
  // after every completed step. Collective; false on failure.
  bool finish();

  const std::string& error() const { return error_; }

  // Sums over ranks, valid on rank 0. Collective.
  IoTotals totals() const;

 private:
  std::string step_base(long step, int rank) const;
  // Both root strategies: counts and displacements of every rank's block in rank order, rank 0's
  // buffers sized (the staging array too when `staged`), the failure agreed on by all ranks. Collective.
  std::string prepare_gather(const char* strategy, bool staged, std::vector<int>& counts, std::vector<int>& displs);
  std::string gather_and_write(long step);  // root strategy, from local_
  // root-per-rank strategy, from local_: rank 0 writes each rank's block to its own file
  // (`written`: the files it completed, removed again if the step fails).
  std::string gather_and_write_blocks(long step, std::vector<std::string>& written);
  std::string write_piece(const std::string& base, const Block& b, const std::vector<const T*>& data);
  bool update_sidecar(const XdmfStep& step);  // collective

  const Options& opt_;
  MPI_Comm comm_;
  bool active_ = false;
  long every_ = 1;
  int rank_ = 0, size_ = 1;
  Block mine_;
  std::vector<Block> blocks_;      // every rank's block
  Frame frame_;
  std::vector<std::vector<T>> local_;  // owned entries per written component
  std::vector<T> staging_, global_;    // rank 0, root strategies
  std::vector<XdmfStep> xdmf_;         // rank 0: the steps fields.xdmf lists
  double sidecar_bytes_ = 0.0;         // rank 0: its size on disk
  double bytes_ = 0.0;
  long files_ = 0, steps_ = 0;
  std::string error_;
};

}  // namespace io
}  // namespace yee
