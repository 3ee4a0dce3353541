#pragma once
// Agreement on failures: every rank learns whether any rank failed and the first
// failing rank's message, so all ranks stop together and nobody waits in a collective.
#include <mpi.h>

#include <string>

namespace yee {
namespace io {

// Returns "" when every rank passed err == "", else "rank R: <err of the lowest failing rank>"
// (just "<err>" with one rank). Collective over comm.
std::string first_error(MPI_Comm comm, const std::string& err);

// Broadcasts a string from root.
std::string broadcast(MPI_Comm comm, const std::string& s, int root);

}  // namespace io
}  // namespace yee
