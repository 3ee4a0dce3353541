#pragma once
// The output directory: created when missing, refused when it holds files (unless
// --overwrite) or cannot be written. Decided on rank 0, the verdict shared by all.
#include <mpi.h>

#include "options.hpp"

namespace yee {
namespace io {

// Collective over comm. Throws UsageError on every rank when the directory is unusable.
void prepare_output_dir(const Options& opt, MPI_Comm comm);

}  // namespace io
}  // namespace yee
