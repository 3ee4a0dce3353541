#pragma once
// The memory check before allocation: what the ranks sharing a node need, against the
// memory this job may really use there (not just the machine's RAM: a Slurm job or a
// container runs inside a cgroup whose limit ends it with SIGKILL and no message).
#include <string>

#include "options.hpp"

namespace yee {

struct MemoryLimit {
  double bytes = 0.0;  // what this job may still use: the limit less what others use; 0: unknown
  double limit = 0.0;  // the limit itself
  double used = 0.0;   // in use under it by other processes (not reclaimable file cache)
  std::string source;  // e.g. "cgroup memory.max (/sys/fs/cgroup/job/memory.max)"
};

// The smallest room left under: physical RAM, the memory limits of this process's cgroup
// and each of its ancestors (v2 memory.max, v1 memory.limit_in_bytes) less what is already
// used there (v2 memory.current, v1 memory.usage_in_bytes, without the inactive file cache
// the kernel reclaims first, and without `own_bytes`, what this job's ranks on the node hold
// already, which their need counts), Slurm's SLURM_MEM_PER_NODE.
// YEE_MEMORY_LIMIT_BYTES replaces all of them (for testing, or for a site whose limit yee
// cannot see); throws UsageError when it is not a positive integer. YEE_CGROUP_DIR names the
// cgroup directory to read instead of this process's own (a stand-in tree for testing): it
// and its ancestors that hold memory files are read.
MemoryLimit memory_limit(double own_bytes);

// Anonymous resident memory of this process now (bytes; 0 when unknown): what it holds
// of its own in its cgroup.
double resident_bytes();

// Bytes rank `rank` of `ranks` needs on its host: its field arrays with their ghost
// layers (CPU backend; the CUDA backend holds them on the GPU), its output copies (rank 0 of the root strategy: the gathered global fields), its
// probe samples, and an allowance for the MPI/OpenMP runtime. Needs opt.dims.
double rank_memory_need(const Options& opt, int rank, int ranks);

// Throws UsageError (one line naming the need, what is available and the limit) when
// `node_need` bytes for `node_ranks` ranks on this node exceed what the limit leaves.
void check_memory(const Options& opt, double node_need, int node_ranks, const MemoryLimit& limit);

}  // namespace yee
