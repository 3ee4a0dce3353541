#include "placement.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

namespace yee {
namespace {

std::vector<int> affinity_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// Union of every OpenMP thread's CPU set: with bound threads (OMP_PROC_BIND) the main thread alone
// holds one core, while the rank occupies all of its threads' cores.
std::vector<int> thread_cpus() {
  std::set<int> all;
#pragma omp parallel
  {
    const std::vector<int> mine = affinity_cpus();
#pragma omp critical(yee_thread_cpus)
    all.insert(mine.begin(), mine.end());
  }
  return std::vector<int>(all.begin(), all.end());
}

// Parses a Linux cpulist ("0-3,8,10-11").
std::set<int> parse_cpulist(const std::string& s) {
  std::set<int> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    int a = 0, b = 0;
    if (std::sscanf(part.c_str(), "%d-%d", &a, &b) == 2) {
      for (int c = a; c <= b; ++c) out.insert(c);
    } else if (std::sscanf(part.c_str(), "%d", &a) == 1) {
      out.insert(a);
    }
  }
  return out;
}

std::vector<int> numa_nodes_of(const std::vector<int>& cpus) {
  std::vector<int> nodes;
  for (int node = 0; node < 1024; ++node) {
    std::ifstream in("/sys/devices/system/node/node" + std::to_string(node) + "/cpulist");
    if (!in) {
      if (node > 64) break;
      continue;
    }
    std::string line;
    std::getline(in, line);
    const std::set<int> node_cpus = parse_cpulist(line);
    if (std::any_of(cpus.begin(), cpus.end(), [&](int c) { return node_cpus.count(c) > 0; })) nodes.push_back(node);
  }
  return nodes;
}

std::string json_ints(const std::vector<int>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}


}  // namespace

std::string json_escape(const std::string& in) {
  std::string s;
  for (unsigned char c : in) {
    if (c == '"' || c == '\\') {
      s += '\\';
      s += char(c);
    } else if (c < 32) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      s += buf;
    } else {
      s += char(c);
    }
  }
  return s;
}

double peak_rss_bytes() {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0.0;
  return double(ru.ru_maxrss) * 1024.0;  // Linux reports KiB
}

std::string gather_placement(MPI_Comm comm, double field_bytes, double* max_rss, double* max_field) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  const std::vector<int> cpus = affinity_cpus();
  const double rss = peak_rss_bytes();
  std::ostringstream o;
  o << "{\"rank\": " << rank << ", \"host\": \"" << json_escape(host) << "\", \"cpus\": " << json_ints(cpus)
    << ", \"thread_cpus\": " << json_ints(thread_cpus())
    << ", \"numa_nodes\": " << json_ints(numa_nodes_of(cpus)) << ", \"peak_rss_bytes\": " << (long long)rss
    << ", \"field_bytes\": " << (long long)field_bytes << "}";
  const std::string mine = o.str();
  int len = int(mine.size());
  std::vector<int> lens(rank == 0 ? size : 0), displs(rank == 0 ? size : 0);
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm);
  std::string all;
  if (rank == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      displs[r] = total;
      total += lens[r];
    }
    all.assign(std::size_t(total), ' ');
  }
  MPI_Gatherv(mine.data(), len, MPI_CHAR, rank == 0 ? &all[0] : nullptr, lens.data(), displs.data(), MPI_CHAR, 0,
              comm);
  double mx[2] = {rss, field_bytes};
  MPI_Reduce(rank == 0 ? MPI_IN_PLACE : mx, mx, 2, MPI_DOUBLE, MPI_MAX, 0, comm);
  if (rank != 0) return "";
  *max_rss = mx[0];
  *max_field = mx[1];
  std::string list = "[";
  for (int r = 0; r < size; ++r) list += (r ? ", " : "") + all.substr(std::size_t(displs[r]), std::size_t(lens[r]));
  return list + "]";
}

}  // namespace yee
