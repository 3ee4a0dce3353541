#include "io/mpiio_guard.hpp"

#include <mpi.h>

#include <cstdlib>

namespace yee {
namespace io {
namespace {

const char* applied = "";

// Open MPI versions whose fcoll/vulcan is affected (compile-time header version: the
// library a binary runs with is ABI-compatible and normally the same release).
bool affected_open_mpi() {
#if defined(OPEN_MPI) && defined(OMPI_MAJOR_VERSION)
  const int v = OMPI_MAJOR_VERSION * 10000 + OMPI_MINOR_VERSION * 100 + OMPI_RELEASE_VERSION;
  return v < 40107 || (v >= 50000 && v < 50006);
#else
  return false;
#endif
}

}  // namespace

void guard_mpiio_before_init(const Options& opt) {
  if (opt.output != "hdf5" || opt.output_strategy != "shared" || !affected_open_mpi()) return;
  if (std::getenv("OMPI_MCA_io") || std::getenv("OMPI_MCA_fcoll")) return;  // the user's choice wins
  if (setenv("OMPI_MCA_fcoll", "dynamic_gen2", 0) == 0) applied = "OMPI_MCA_fcoll=dynamic_gen2";
}

const char* mpiio_guard_applied() { return applied; }

}  // namespace io
}  // namespace yee
