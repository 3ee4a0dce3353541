// CPU wavefront kernel: T time steps per pass over the fields (solver/README.md,
// "Wavefront kernel").
//
// Within a pass, step t touches plane i at front p = i + t: for each front p the steps
// t = 0..T-1 update plane p - t in turn (H then E row by row). Step t at plane i needs
// E of step t-1 at plane i+1 (front p, done just before) and H of step t at plane i-1
// (front p-1), and nothing it overwrites is needed any more, so the fields are updated in
// place with T planes in flight. Along j the rows are cut into tiles in the skewed
// coordinate u = j + t (a parallelogram in (j, t)): every dependency of tile m lies in
// tiles <= m, so tile m may run front p as soon as tile m-1 has finished front p. Threads
// take tiles round robin and follow each other down the fronts (a pipeline, one flag per
// tile), each keeping its tile's T+2 planes in its own cache.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>

#include "backends/cpu/row_updates.hpp"
#include "time_block.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define YEE_CPU_RELAX() _mm_pause()
#else
#define YEE_CPU_RELAX() ((void)0)
#endif

namespace yee {
namespace kernels {
namespace {

struct alignas(64) Progress {
  std::atomic<long> front;  // fronts finished by this tile (as the next front to run)
};

// Rows of step t in tile m: j with u0 + m*B <= j + t < u0 + (m+1)*B, inside box[t].
inline void tile_rows_of(const PassPlan& p, long u0, long m, int t, long& ja, long& jb) {
  ja = std::max(p.box[t].lo[1], u0 + m * p.tile_rows - t);
  jb = std::min(p.box[t].hi[1], u0 + (m + 1) * p.tile_rows - t);
}

// Source and probes of row (i, j) after step t updated it (E included).
template <typename T>
inline void hooks(Fields<T>& f, const PassPlan& p, int t, long i, long j) {
  if (p.has_source && p.source[0] == i && p.source[1] == j && p.source[2] >= p.ebox[t].lo[2] &&
      p.source[2] < p.ebox[t].hi[2]) {
    T& x = f.comp[kEz][f.at(i, j, p.source[2])];
    x = T(x + T(p.source_value[t]));  // the time loop's add_to, bit for bit
  }
  for (const auto& q : p.probes)
    if (q.i == i && q.j == j) p.samples[std::size_t(t) * p.sample_stride + std::size_t(q.id)] =
        double(f.comp[p.probe_comp][f.at(i, j, q.k)]);
}

}  // namespace

template <typename T>
void time_block_pass(Fields<T>& f, const PassPlan& p, T c) {
  const int nt = p.steps;
  // Fronts and skewed rows spanned by the pass.
  long pmin = 0, pmax = 0, u0 = 0, u1 = 0;
  bool any = false;
  for (int t = 0; t < nt; ++t) {
    const Box& b = p.box[t];
    if (b.empty()) continue;
    if (!any) {
      pmin = b.lo[0] + t, pmax = b.hi[0] + t, u0 = b.lo[1] + t, u1 = b.hi[1] + t;
      any = true;
    }
    pmin = std::min(pmin, b.lo[0] + t);
    pmax = std::max(pmax, b.hi[0] + t);
    u0 = std::min(u0, b.lo[1] + t);
    u1 = std::max(u1, b.hi[1] + t);
  }
  if (!any) return;
  const long tiles = (u1 - u0 + p.tile_rows - 1) / p.tile_rows;
  // Planes holding a source or probe: only their rows look at the hook lists.
  const long plane0 = 1 - f.ghost[0], planes = f.n[0] + 2 * f.ghost[0];
  std::vector<char> hooked(std::size_t(planes), 0);
  if (p.has_source) hooked[std::size_t(p.source[0] - plane0)] = 1;
  for (const auto& q : p.probes) hooked[std::size_t(q.i - plane0)] = 1;
  std::unique_ptr<Progress[]> progress(new Progress[std::size_t(tiles)]);
  for (long m = 0; m < tiles; ++m) progress[m].front.store(pmin, std::memory_order_relaxed);

#pragma omp parallel
  {
    const int tid = omp_get_thread_num(), nth = omp_get_num_threads();
    double unused = 0.0;
    for (long m = tid; m < tiles; m += nth) {
      for (long front = pmin; front < pmax; ++front) {
        if (m > 0) {
          // Tile m-1 (another thread) must have finished this front.
          long spins = 0;
          while (progress[m - 1].front.load(std::memory_order_acquire) <= front)
            if (++spins < 4096) YEE_CPU_RELAX(); else { sched_yield(); spins = 0; }
        }
        for (int t = 0; t < nt; ++t) {
          const Box& b = p.box[t];
          const Box& eb = p.ebox[t];
          const long i = front - t;
          if (i < b.lo[0] || i >= b.hi[0]) continue;
          long ja, jb;
          tile_rows_of(p, u0, m, t, ja, jb);
          // The lowest recomputed layers toward a neighbour get H only: their E would need
          // H from below the halo (and no later step reads it).
          const bool e_plane = i >= eb.lo[0];
          const bool hook = e_plane && hooked[std::size_t(i - plane0)] != 0;
          for (long j = ja; j < jb; ++j) {
            h_row<T, false>(f, i, j, b.lo[2], b.hi[2], c, unused, unused);
            if (!e_plane || j < eb.lo[1]) continue;
            e_row(f, i, j, eb.lo[2], eb.hi[2], c);
            if (hook) hooks(f, p, t, i, j);
          }
        }
        progress[m].front.store(front + 1, std::memory_order_release);
      }
    }
  }
}

template <typename T>
std::size_t pack_box(const Fields<T>& f, const Box& b, T* buf) {
  const long nk = b.hi[2] - b.lo[2];
  std::size_t q = 0;
  for (int c = 0; c < 6; ++c)
    for (long i = b.lo[0]; i < b.hi[0]; ++i)
      for (long j = b.lo[1]; j < b.hi[1]; ++j, q += std::size_t(nk))
        std::memcpy(buf + q, f.comp[c] + f.at(i, j, b.lo[2]), sizeof(T) * std::size_t(nk));
  return q;
}

template <typename T>
void unpack_box(Fields<T>& f, const Box& b, const T* buf) {
  const long nk = b.hi[2] - b.lo[2];
  std::size_t q = 0;
  for (int c = 0; c < 6; ++c)
    for (long i = b.lo[0]; i < b.hi[0]; ++i)
      for (long j = b.lo[1]; j < b.hi[1]; ++j, q += std::size_t(nk))
        std::memcpy(f.comp[c] + f.at(i, j, b.lo[2]), buf + q, sizeof(T) * std::size_t(nk));
}

// One core's share of its largest cache: the size of each data or unified cache of cpu0
// (Linux sysfs) over the number of CPUs sharing it, the largest share (the last-level cache
// on the EPYC of the README's tables: 32 MiB for 2 cores). sysconf's L3 figure is the whole
// package's on some virtual machines, so only the L2 comes from it, as the fallback.
std::size_t cache_bytes_per_thread() {
  std::size_t best = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream type_file(dir + "type"), size_file(dir + "size"), shared_file(dir + "shared_cpu_list");
    std::string type, shared;
    unsigned long size = 0;
    char unit = 0;
    if (!(type_file >> type) || !(size_file >> size) || !(shared_file >> shared)) break;
    if (type == "Instruction") continue;
    if (size_file >> unit) size *= unit == 'K' ? 1024UL : unit == 'M' ? 1024UL * 1024 : 1UL;
    std::size_t cpus = 0;  // "0-1,4,6-7"
    std::istringstream ranges(shared);
    for (std::string range; std::getline(ranges, range, ',');) {
      const auto dash = range.find('-');
      cpus += dash == std::string::npos ? 1 : std::stoul(range.substr(dash + 1)) - std::stoul(range) + 1;
    }
    best = std::max(best, std::size_t(size) / std::max<std::size_t>(1, cpus));
  }
  if (best > 0) return best;
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 ? std::size_t(l2) : std::size_t(512) * 1024;
}

YEE_INSTANTIATE_TIME_BLOCK(float)
YEE_INSTANTIATE_TIME_BLOCK(double)

}  // namespace kernels
}  // namespace yee
