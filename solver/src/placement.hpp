#pragma once
// Where this rank runs: host, CPU affinity list, NUMA nodes of those CPUs, peak RSS.
#include <mpi.h>

#include <string>

namespace yee {

// This rank's placement as a JSON object (rank, host, cpus, numa_nodes, peak_rss_bytes,
// field_bytes); rank 0 receives the list of all ranks' objects "[{...}, ...]" and the max RSS.
std::string gather_placement(MPI_Comm comm, double field_bytes, double* max_rss, double* max_field);

double peak_rss_bytes();

// `in` with quotes, backslashes and control characters escaped for a JSON string.
std::string json_escape(const std::string& in);

}  // namespace yee
