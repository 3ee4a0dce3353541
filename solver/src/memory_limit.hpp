#pragma once
// The memory check before allocation: what the ranks sharing a node need, against the
// memory this job may really use there (not just the machine's RAM: a Slurm job or a
// container runs inside a cgroup whose limit ends it with SIGKILL and no message).
#include <string>

#include "options.hpp"

namespace yee {

struct MemoryLimit {
  double bytes = 0.0;  // 0: unknown
  std::string source;  // e.g. "cgroup memory.max (/sys/fs/cgroup/job/memory.max)"
};

// The smallest of: physical RAM, the memory limits of this process's cgroup and its
// ancestors (v2 memory.max, v1 memory.limit_in_bytes), Slurm's SLURM_MEM_PER_NODE.
// YEE_MEMORY_LIMIT_BYTES replaces all of them (for testing, or for a site whose limit yee
// cannot see); throws UsageError when it is not a positive integer.
MemoryLimit memory_limit();

// Bytes rank `rank` of `ranks` needs on its host: its field arrays with their ghost
// layers (CPU backend; the CUDA backend holds them on the GPU), its output copies (rank 0 of the root strategy: the gathered global fields), its
// probe samples, and an allowance for the MPI/OpenMP runtime. Needs opt.dims.
double rank_memory_need(const Options& opt, int rank, int ranks);

// Throws UsageError (one line naming the need and the limit) when `node_need` bytes for
// `node_ranks` ranks on this node exceed the limit.
void check_memory(const Options& opt, double node_need, int node_ranks, const MemoryLimit& limit);

}  // namespace yee
