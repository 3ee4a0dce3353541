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

// A file's first number in bytes; 0 when absent or unreadable.
double read_number(const std::string& file) {
  std::ifstream in(file);
  std::string v;
  if (!(in >> v)) return 0.0;
  errno = 0;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  return errno || *end ? 0.0 : double(x);
}

// The value of `key` in a memory.stat file; 0 when absent.
double read_stat(const std::string& file, const char* key) {
  std::ifstream in(file);
  std::string k;
  unsigned long long v = 0;
  while (in >> k >> v)
    if (k == key) return double(v);
  return 0.0;
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

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

// One cgroup directory: false when it holds no memory controller files. A level with a
// limit narrows `best` to the room it leaves: the limit less what is in use there, less
// the file cache the kernel reclaims before it kills (inactive_file), plus `own` (this
// job's ranks are in use there already, and their need counts them).
bool consider_cgroup(const std::string& dir, double own, MemoryLimit& best) {
  const bool v2 = exists(dir + "/memory.max");
  if (!v2 && !exists(dir + "/memory.limit_in_bytes")) return false;
  const std::string file = dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes");
  const double limit = read_limit(file);
  if (limit <= 0) return true;  // "max": no limit here
  const double usage = read_number(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes"));
  const double cache = read_stat(dir + "/memory.stat", v2 ? "inactive_file" : "total_inactive_file");
  double used = usage - cache - own;
  if (used < 0) used = 0;
  const double room = limit > used ? limit - used : 0.0;
  if (best.bytes == 0 || room < best.bytes) {
    best.bytes = room;
    best.limit = limit;
    best.used = used;
    best.source = std::string(v2 ? "cgroup memory.max" : "cgroup memory.limit_in_bytes") + " (" + file + ")";
  }
  return true;
}

std::string parent_dir(const std::string& dir) {
  const std::size_t slash = dir.find_last_of('/', dir.size() > 1 ? dir.size() - 2 : 0);
  return slash == std::string::npos || slash == 0 ? "/" : dir.substr(0, slash);
}

// `dir` and its ancestors up to the mount point `top`.
void walk_up(const std::string& top, std::string rel, double own, MemoryLimit& best) {
  for (;;) {
    consider_cgroup(top + (rel == "/" ? "" : rel), own, best);
    if (rel.empty() || rel == "/") return;
    rel = parent_dir(rel);
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

MemoryLimit memory_limit(double own_bytes) {
  MemoryLimit lim;
  if (const char* v = std::getenv("YEE_MEMORY_LIMIT_BYTES")) {
    errno = 0;
    char* end = nullptr;
    const double x = std::strtod(v, &end);
    if (!*v || *end || errno || !(x >= 1.0))
      throw UsageError(std::string("YEE_MEMORY_LIMIT_BYTES: '") + v + "' is not a positive number of bytes");
    lim.bytes = lim.limit = x;
    lim.source = "YEE_MEMORY_LIMIT_BYTES";
    return lim;
  }
  const double phys = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  if (phys > 0) {
    lim.bytes = lim.limit = phys;
    lim.source = "this machine's RAM";
  }
  if (const char* dir = std::getenv("YEE_CGROUP_DIR")) {  // a stand-in tree: up while it has memory files
    for (std::string d = dir; consider_cgroup(d, own_bytes, lim) && d != "/";) d = parent_dir(d);
  } else {
    std::string v2, v1mem;
    cgroup_mounts(v2, v1mem);
    std::ifstream in("/proc/self/cgroup");
    std::string line;
    while (std::getline(in, line)) {  // ID:CONTROLLERS:PATH
      const std::size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
      if (b == std::string::npos) continue;
      const std::string ctrl = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
      if (ctrl.empty() && !v2.empty())
        walk_up(v2, path, own_bytes, lim);
      else if (("," + ctrl + ",").find(",memory,") != std::string::npos && !v1mem.empty())
        walk_up(v1mem, path, own_bytes, lim);
    }
  }
  if (const char* s = std::getenv("SLURM_MEM_PER_NODE")) {  // megabytes
    char* end = nullptr;
    const double mb = std::strtod(s, &end);
    if (*s && end && *end == '\0' && mb > 0 && (lim.bytes == 0 || mb * 1048576.0 < lim.bytes)) {
      lim.bytes = lim.limit = mb * 1048576.0;
      lim.used = 0.0;
      lim.source = "SLURM_MEM_PER_NODE";
    }
  }
  return lim;
}

double resident_bytes() {
  // Anonymous pages only (resident less file-backed): the libraries' pages are shared and
  // mostly charged to whichever cgroup read them first.
  std::ifstream in("/proc/self/statm");  // size resident shared ... (pages)
  double size = 0, resident = 0, shared = 0;
  if (!(in >> size >> resident >> shared) || resident < shared) return 0.0;
  return (resident - shared) * double(sysconf(_SC_PAGESIZE));
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
    if ((o.output_strategy == "root" || o.output_strategy == "root-per-rank") && rank == 0)  // gathered fields + staging
      bytes += (comps + 1.0) * double(o.n[0]) * double(o.n[1]) * double(o.n[2]) * word;
  }
  bytes += double(o.steps) * double(o.probes.size()) * 8.0;
  (void)ranks;
  return bytes;
}

void check_memory(const Options& o, double node_need, int node_ranks, const MemoryLimit& lim) {
  if (lim.bytes <= 0 || node_need <= lim.bytes) return;
  // "in use" below 1 MiB is noise: then the limit alone is the room
  const std::string room = lim.used >= 1048576.0
                               ? size_text(lim.bytes) + " available: the " + size_text(lim.limit) + " limit of " +
                                     lim.source + " less " + size_text(lim.used) + " in use by other processes"
                               : size_text(lim.limit) + " limit of " + lim.source;
  throw UsageError("grid " + std::to_string(o.n[0]) + "x" + std::to_string(o.n[1]) + "x" + std::to_string(o.n[2]) +
                   ": the " + std::to_string(node_ranks) + " rank(s) on this node need about " + size_text(node_need) +
                   " (fields, output buffers, runtime), more than the " + room);
}

}  // namespace yee
