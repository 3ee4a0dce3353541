#include "memory_limit.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "decomp.hpp"

namespace yee {
namespace {

constexpr double kRuntimeAllowance = 32.0 * 1048576.0;  // MPI, OpenMP stacks, code, buffers

// A limit file's value in bytes; 0 for "max", absent or unreadable (no limit there).
double read_limit(const std::string& file) {
  std::ifstream in(file);
  std::string v;
  if (!(in >> v) || v == "max") return 0.0;
  errno = 0;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  if (errno || *end) return 0.0;
  if (x >= (1ULL << 62)) return 0.0;  // cgroup v1 writes "unlimited" as a huge number
  return double(x);
}

// Mount points of the cgroup v2 hierarchy and of the v1 memory controller.
void cgroup_mounts(std::string& v2, std::string& v1mem) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
    std::istringstream ls(line);
    std::string id, parent, dev, root, point, opts, word;
    ls >> id >> parent >> dev >> root >> point >> opts;
    while (ls >> word && word != "-") {}
    std::string fstype, source, super;
    ls >> fstype >> source >> super;
    if (fstype == "cgroup2" && v2.empty()) v2 = point;
    if (fstype == "cgroup" && v1mem.empty() && ("," + super + ",").find(",memory,") != std::string::npos)
      v1mem = point;
  }
}

// The smallest limit of `file` in `dir` and its ancestors up to the mount point `top`.
void walk_up(const std::string& top, std::string rel, const char* file, const char* label, MemoryLimit& best) {
  for (;;) {
    const std::string dir = top + (rel == "/" ? "" : rel);
    const double v = read_limit(dir + "/" + file);
    if (v > 0 && (best.bytes == 0 || v < best.bytes)) {
      best.bytes = v;
      best.source = std::string(label) + " (" + dir + "/" + file + ")";
    }
    if (rel.empty() || rel == "/") return;
    const std::size_t slash = rel.rfind('/');
    rel = slash == 0 ? "/" : rel.substr(0, slash);
  }
}

std::string size_text(double bytes) {
  char b[48];
  if (bytes >= 10.0 * 1073741824.0)
    std::snprintf(b, sizeof b, "%.0f GiB", bytes / 1073741824.0);
  else
    std::snprintf(b, sizeof b, "%.0f MiB", bytes / 1048576.0);
  return b;
}

}  // namespace

MemoryLimit memory_limit() {
  MemoryLimit lim;
  if (const char* v = std::getenv("YEE_MEMORY_LIMIT_BYTES")) {
    errno = 0;
    char* end = nullptr;
    const double x = std::strtod(v, &end);
    if (!*v || *end || errno || !(x >= 1.0))
      throw UsageError(std::string("YEE_MEMORY_LIMIT_BYTES: '") + v + "' is not a positive number of bytes");
    lim.bytes = x;
    lim.source = "YEE_MEMORY_LIMIT_BYTES";
    return lim;
  }
  const double phys = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  if (phys > 0) {
    lim.bytes = phys;
    lim.source = "this machine's RAM";
  }
  std::string v2, v1mem;
  cgroup_mounts(v2, v1mem);
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {  // ID:CONTROLLERS:PATH
    const std::size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string ctrl = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (ctrl.empty() && !v2.empty())
      walk_up(v2, path, "memory.max", "cgroup memory.max", lim);
    else if (("," + ctrl + ",").find(",memory,") != std::string::npos && !v1mem.empty())
      walk_up(v1mem, path, "memory.limit_in_bytes", "cgroup memory.limit_in_bytes", lim);
  }
  if (const char* s = std::getenv("SLURM_MEM_PER_NODE")) {  // megabytes
    char* end = nullptr;
    const double mb = std::strtod(s, &end);
    if (*s && end && *end == '\0' && mb > 0 && (lim.bytes == 0 || mb * 1048576.0 < lim.bytes)) {
      lim.bytes = mb * 1048576.0;
      lim.source = "SLURM_MEM_PER_NODE";
    }
  }
  return lim;
}

double rank_memory_need(const Options& o, int rank, int ranks) {
  const long coord[3] = {rank / (o.dims[1] * o.dims[2]), (rank / o.dims[2]) % o.dims[1], rank % o.dims[2]};
  const long deep = o.kernel == "wavefront" ? (o.time_block > 0 ? o.time_block : 16) : 1;
  const double word = o.precision == "f64" ? 8.0 : 4.0;
  double own = 1.0, with_ghosts = 1.0;
  for (int d = 0; d < 3; ++d) {
    const double n = double(block_end(o.n[d], o.dims[d], coord[d]) - block_begin(o.n[d], o.dims[d], coord[d]));
    own *= n;
    with_ghosts *= n + 2.0 * double(o.dims[d] > 1 ? deep : 1);
  }
  // A device backend keeps the fields in GPU memory (its own allocation reports a shortage);
  // on the host it stages one component of the owned cells at a time.
  const bool on_device = std::string(YEE_BACKEND_NAME) == "cuda";
  double bytes = (on_device ? own * word : 6.0 * with_ghosts * word) + kRuntimeAllowance;
  if (o.output != "none") {
    const double comps = double(o.output_fields.size());
    bytes += comps * own * word;  // the copies the writer takes of the owned cells
    if (o.output_strategy == "root" && rank == 0)  // the gathered global fields and a staging array
      bytes += (comps + 1.0) * double(o.n[0]) * double(o.n[1]) * double(o.n[2]) * word;
  }
  bytes += double(o.steps) * double(o.probes.size()) * 8.0;
  (void)ranks;
  return bytes;
}

void check_memory(const Options& o, double node_need, int node_ranks, const MemoryLimit& lim) {
  if (lim.bytes <= 0 || node_need <= lim.bytes) return;
  throw UsageError("grid " + std::to_string(o.n[0]) + "x" + std::to_string(o.n[1]) + "x" + std::to_string(o.n[2]) +
                   ": the " + std::to_string(node_ranks) + " rank(s) on this node need about " + size_text(node_need) +
                   " (fields, output buffers, runtime), more than the " + size_text(lim.bytes) + " limit of " +
                   lim.source);
}

}  // namespace yee
