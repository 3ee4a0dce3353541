#pragma once
// Open MPI's default MPI-IO aggregation (OMPIO, fcoll/vulcan) silently loses data in
// collective HDF5 writes in the 4.1 series up to at least 4.1.4 (open-mpi/ompi#12718:
// blocks of a shared file left zero; reproduced here by test_io_equality.py with 3
// ranks). Before MPI_Init, for --output-strategy shared, choose the fcoll/dynamic_gen2
// aggregator instead unless the user chose an io/fcoll component themselves.
#include "options.hpp"

namespace yee {
namespace io {

// Call before MPI_Init. Sets OMPI_MCA_fcoll when it applies.
void guard_mpiio_before_init(const Options& opt);

// What was done, for the report: "" or e.g. "OMPI_MCA_fcoll=dynamic_gen2".
const char* mpiio_guard_applied();

}  // namespace io
}  // namespace yee
