// CPU backend of the kernel contract: OpenMP threads, SIMD inner loops over the
// contiguous k index. Threads own contiguous blocks of j rows (thread_rows), the same
// blocks in first-touch initialisation and in every update, so pages live where
// they are used.
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include "backends/checksum_hash.hpp"
#include "backends/cpu/row_updates.hpp"
#include "kernel_contract.hpp"

namespace yee {
namespace kernels {
namespace {

// Rows [ja, jb) (local j, owned range 1..ny) of thread t out of nt.
inline void thread_rows(long ny, int t, int nt, long& ja, long& jb) {
  const long base = ny / nt, extra = ny % nt;
  ja = 1 + t * base + std::min<long>(t, extra);
  jb = ja + base + (t < extra ? 1 : 0);
}

template <typename T, bool kEnergy>
void h_box(Fields<T>& f, const Box& b, T c, double& e2, double& hh) {
  for (long i = b.lo[0]; i < b.hi[0]; ++i)
    for (long j = b.lo[1]; j < b.hi[1]; ++j) h_row<T, kEnergy>(f, i, j, b.lo[2], b.hi[2], c, e2, hh);
}

template <typename T>
void e_box(Fields<T>& f, const Box& b, T c) {
  for (long i = b.lo[0]; i < b.hi[0]; ++i)
    for (long j = b.lo[1]; j < b.hi[1]; ++j) e_row(f, i, j, b.lo[2], b.hi[2], c);
}

// The part of `box` in this thread's rows.
inline Box my_rows(const Box& box, long ny) {
  long ja, jb;
  thread_rows(ny, omp_get_thread_num(), omp_get_num_threads(), ja, jb);
  Box b = box;
  b.lo[1] = std::max(b.lo[1], ja);
  b.hi[1] = std::min(b.hi[1], jb);
  return b;
}

// This thread's block split into deferred slabs (E needs H from a neighbour rank or the
// thread below) and the core, where one sweep can update H then E row by row.
struct ThreadPlan {
  Box slab[3];
  bool has_slab[3];
  Box core;
};

template <typename T>
ThreadPlan plan_for_thread(const Fields<T>& f) {
  long ja, jb;
  thread_rows(f.n[1], omp_get_thread_num(), omp_get_num_threads(), ja, jb);
  ThreadPlan p;
  Box b{{1, ja, 1}, {f.n[0] + 1, jb, f.n[2] + 1}};
  const bool d[3] = {f.defer_low[0], f.defer_low[1] || ja > 1, f.defer_low[2]};
  for (int a = 0; a < 3; ++a) {
    p.has_slab[a] = d[a] && !b.empty();
    p.slab[a] = b;
    p.slab[a].hi[a] = b.lo[a] + 1;
    if (d[a]) b.lo[a] += 1;  // the rest is disjoint from this slab
  }
  p.core = b;
  return p;
}

template <typename T>
long tile_rows(const Fields<T>& f) {
  if (f.tile > 0) return f.tile;
  // Keep ~2 planes of a tile (6 arrays) in half of a 1 MiB L2, so each E/H value read
  // for plane i+1 is still cached when plane i+1 is updated.
  const long bytes_per_row = 6 * (f.n[2] + 2) * long(sizeof(T)) * 2;
  return std::max<long>(1, (512L * 1024) / bytes_per_row);
}

}  // namespace

const char* backend_name() { return "cpu"; }

std::string select_device(int, int, bool) { return "host"; }
// Test aid: YEE_HALO_STAGING=1 makes the halo treat these host buffers as device memory,
// so machines without a GPU exercise its staged and direct-to-MPI paths too.
bool messages_on_device() {
  static const char* v = std::getenv("YEE_HALO_STAGING");
  static const bool staging = v && std::strcmp(v, "1") == 0;
  return staging;
}
void* alloc_message(std::size_t bytes) {
  void* p = std::calloc(bytes ? bytes : 1, 1);
  if (!p) throw std::bad_alloc();
  return p;
}
void free_message(void* p) { std::free(p); }
void message_to_host(void* host, const void* msg, std::size_t bytes) { std::memcpy(host, msg, bytes); }
void message_from_host(void* msg, const void* host, std::size_t bytes) { std::memcpy(msg, host, bytes); }
int traffic_words_per_cell() { return 12; }

template <typename T>
void allocate(Fields<T>& f) {
  long g[3];
  for (int a = 0; a < 3; ++a) g[a] = f.ghost[a] = std::max<long>(1, f.ghost[a]);
  // Rows padded to whole 64-byte lines and shifted so that every row's first owned cell
  // (k = 1) starts a line: the SIMD loops then store whole lines.
  const long line = 64 / long(sizeof(T));
  f.sy = (f.n[2] + 2 * g[2] + line - 1) / line * line;
  f.sx = f.sy * (f.n[1] + 2 * g[1]);
  const long corner = (g[0] - 1) * f.sx + (g[1] - 1) * f.sy + (g[2] - 1);  // offset of (0,0,0) from the first ghost
  const long shift = ((line - (corner + 1) % line) % line);
  f.origin = corner + shift;
  f.count = std::size_t(f.sx) * std::size_t(f.n[0] + 2 * g[0]) + std::size_t(shift);
  // 2 MiB aligned and advised as huge pages (where the kernel's THP mode is madvise): a
  // tile of the wavefront kernel spans hundreds of rows on as many 4 KiB pages, more than
  // the TLB holds. Untouched here: pages are placed by first touch below.
  constexpr std::size_t kHuge = std::size_t(2) << 20;
  const std::size_t bytes = (f.count * sizeof(T) + kHuge - 1) / kHuge * kHuge;
  for (int c = 0; c < 6; ++c) {
    void* p = std::aligned_alloc(kHuge, bytes);
    if (!p) {
      release(f);
      throw std::bad_alloc();
    }
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);  // advice only: failure changes nothing but speed
#endif
    f.comp[c] = static_cast<T*>(p);
  }
#pragma omp parallel
  {
    long ja, jb;
    thread_rows(f.n[1], omp_get_thread_num(), omp_get_num_threads(), ja, jb);
    if (jb > ja && ja == 1) ja = 1 - g[1];                   // the thread of the first rows also owns the low ghost rows
    if (jb > ja && jb == f.n[1] + 1) jb = f.n[1] + 1 + g[1];  // and the one of the last rows the high ones
    for (int c = 0; c < 6; ++c)
      for (long i = 1 - g[0]; i < f.n[0] + 1 + g[0]; ++i)
        if (jb > ja) std::memset(f.comp[c] + f.at(i, ja, 1 - g[2]), 0, sizeof(T) * std::size_t(f.sy * (jb - ja)));
    if (shift > 0 && ja <= 1 - g[1] && jb > ja)  // the lines before the first row
      for (int c = 0; c < 6; ++c) std::memset(f.comp[c], 0, sizeof(T) * std::size_t(shift));
  }
}

template <typename T>
void release(Fields<T>& f) {
  for (auto& p : f.comp) {
    std::free(p);
    p = nullptr;
  }
}

template <typename T>
void init_e(Fields<T>& f, InitFn fn, const void* ctx) {
  const Box owned{{1, 1, 1}, {f.n[0] + 1, f.n[1] + 1, f.n[2] + 1}};
#pragma omp parallel
  {
    const Box b = my_rows(owned, f.n[1]);
    for (int c = 0; c < 3; ++c)
      for (long i = b.lo[0]; i < b.hi[0]; ++i)
        for (long j = b.lo[1]; j < b.hi[1]; ++j)
          for (long k = b.lo[2]; k < b.hi[2]; ++k)
            f.comp[c][f.at(i, j, k)] = T(fn(ctx, c, f.goff[0] + i - 1, f.goff[1] + j - 1, f.goff[2] + k - 1));
  }
}

template <typename T>
void update_h(Fields<T>& f, const Box& box, T c, EnergySums* sums) {
  double e2 = 0.0, hh = 0.0;
#pragma omp parallel reduction(+ : e2, hh)
  {
    const Box b = my_rows(box, f.n[1]);
    if (!b.empty()) {
      if (sums)
        h_box<T, true>(f, b, c, e2, hh);
      else
        h_box<T, false>(f, b, c, e2, hh);
    }
  }
  if (sums) {
    sums->e2 += e2;
    sums->hh += hh;
  }
}

template <typename T>
void update_e(Fields<T>& f, const Box& box, T c) {
#pragma omp parallel
  {
    const Box b = my_rows(box, f.n[1]);
    if (!b.empty()) e_box(f, b, c);
  }
}

template <typename T>
void fused_part1(Fields<T>& f, T c) {
  const long tj = tile_rows(f);
#pragma omp parallel
  {
    const ThreadPlan p = plan_for_thread(f);
    double unused = 0.0;
    for (int a = 0; a < 3; ++a)
      if (p.has_slab[a] && !p.slab[a].empty()) h_box<T, false>(f, p.slab[a], c, unused, unused);
    const Box& b = p.core;
    if (!b.empty()) {
      // Row order (j tile, i, j) keeps every dependency: E(i,j) needs H at (i-1,j),
      // (i,j-1) and (i,j), all already updated; H(i,j) reads E at (i+1,j), (i,j+1) and
      // (i,j), none updated yet.
      for (long jt = b.lo[1]; jt < b.hi[1]; jt += tj) {
        const long je = std::min(b.hi[1], jt + tj);
        for (long i = b.lo[0]; i < b.hi[0]; ++i)
          for (long j = jt; j < je; ++j) {
            h_row<T, false>(f, i, j, b.lo[2], b.hi[2], c, unused, unused);
            e_row(f, i, j, b.lo[2], b.hi[2], c);
          }
      }
    }
  }
}

template <typename T>
void fused_part2(Fields<T>& f, T c) {
#pragma omp parallel
  {
    const ThreadPlan p = plan_for_thread(f);
    for (int a = 0; a < 3; ++a)
      if (p.has_slab[a] && !p.slab[a].empty()) e_box(f, p.slab[a], c);
  }
}

template <typename T>
void add_to(Fields<T>& f, int comp, long i, long j, long k, double value) {
  T& x = f.comp[comp][f.at(i, j, k)];
  x = T(x + T(value));
}

template <typename T>
double read(const Fields<T>& f, int comp, long i, long j, long k) {
  return double(f.comp[comp][f.at(i, j, k)]);
}

namespace {
// Visits the owned face of `axis` at `layer`: calls fn(buffer offset, array offset).
template <typename T, typename Fn>
std::size_t for_face(const Fields<T>& f, int axis, long layer, Fn fn) {
  const int a = axis == 0 ? 1 : 0, b = axis == 2 ? 1 : 2;  // the other two axes, slow then fast
  const long na = f.n[a], nb = f.n[b];
  const long stride[3] = {f.sx, f.sy, 1};
#pragma omp parallel for if (na * nb > 32768)
  for (long u = 1; u <= na; ++u)
    for (long v = 1; v <= nb; ++v)
      fn(std::size_t((u - 1) * nb + (v - 1)), f.origin + layer * stride[axis] + u * stride[a] + v * stride[b]);
  return std::size_t(na * nb);
}
}  // namespace

template <typename T>
std::size_t pack(const Fields<T>& f, int axis, long layer, int comp0, int comp1, T* buf) {
  const long face = f.n[axis == 0 ? 1 : 0] * f.n[axis == 2 ? 1 : 2];
  const T* c0 = f.comp[comp0];
  const T* c1 = f.comp[comp1];
  T* b1 = buf + face;
  for_face(f, axis, layer, [&](std::size_t q, long o) {
    buf[q] = c0[o];
    b1[q] = c1[o];
  });
  return std::size_t(2 * face);
}

template <typename T>
void unpack(Fields<T>& f, int axis, long layer, int comp0, int comp1, const T* buf) {
  const long face = f.n[axis == 0 ? 1 : 0] * f.n[axis == 2 ? 1 : 2];
  T* c0 = f.comp[comp0];
  T* c1 = f.comp[comp1];
  const T* b1 = buf + face;
  for_face(f, axis, layer, [&](std::size_t q, long o) {
    c0[o] = buf[q];
    c1[o] = b1[q];
  });
}

template <typename T>
void copy_owned(const Fields<T>& f, int comp, T* out) {
  const long n1 = f.n[1], n2 = f.n[2];
  const T* src = f.comp[comp];
#pragma omp parallel for collapse(2) if (f.n[0] * n1 * n2 > 65536)
  for (long i = 1; i <= f.n[0]; ++i)
    for (long j = 1; j <= n1; ++j)
      std::memcpy(out + ((i - 1) * n1 + (j - 1)) * n2, src + f.at(i, j, 1), sizeof(T) * std::size_t(n2));
}


template <typename T>
std::uint64_t checksum(const Fields<T>& f) {
  std::uint64_t sum = 0;
  const Box owned{{1, 1, 1}, {f.n[0] + 1, f.n[1] + 1, f.n[2] + 1}};
  const std::uint64_t g1 = std::uint64_t(f.gn[1] + 1), g2 = std::uint64_t(f.gn[2] + 1);
#pragma omp parallel reduction(+ : sum)
  {
    const Box b = my_rows(owned, f.n[1]);
    for (int c = 0; c < 6; ++c)
      for (long i = b.lo[0]; i < b.hi[0]; ++i)
        for (long j = b.lo[1]; j < b.hi[1]; ++j)
          for (long k = b.lo[2]; k < b.hi[2]; ++k) {
            const std::uint64_t g =
                ((std::uint64_t(f.goff[0] + i - 1) * g1 + std::uint64_t(f.goff[1] + j - 1)) * g2 +
                 std::uint64_t(f.goff[2] + k - 1)) * 6 + std::uint64_t(c);
            sum += entry_hash(f.comp[c][f.at(i, j, k)], g);
          }
  }
  return sum;
}

template <typename T>
void div_e(const Fields<T>& f, double* div_max, double* e_max) {
  double dm = 0.0, em = 0.0;
  const Box owned{{1, 1, 1}, {f.n[0] + 1, f.n[1] + 1, f.n[2] + 1}};
  const T* ex = f.comp[kEx];
  const T* ey = f.comp[kEy];
  const T* ez = f.comp[kEz];
#pragma omp parallel reduction(max : dm, em)
  {
    const Box b = my_rows(owned, f.n[1]);
    for (long i = b.lo[0]; i < b.hi[0]; ++i)
      for (long j = b.lo[1]; j < b.hi[1]; ++j)
        for (long k = b.lo[2]; k < b.hi[2]; ++k) {
          const long o = f.at(i, j, k);
          em = std::max({em, std::fabs(double(ex[o])), std::fabs(double(ey[o])), std::fabs(double(ez[o]))});
          const long g[3] = {f.goff[0] + i - 1, f.goff[1] + j - 1, f.goff[2] + k - 1};
          if (g[0] < 1 || g[1] < 1 || g[2] < 1) continue;  // wall nodes carry surface charge
          const double d = (double(ex[o]) - ex[o - f.sx]) + (double(ey[o]) - ey[o - f.sy]) + (double(ez[o]) - ez[o - 1]);
          dm = std::max(dm, std::fabs(d));
        }
  }
  *div_max = dm;
  *e_max = em;
}

YEE_INSTANTIATE_CONTRACT(float)
YEE_INSTANTIATE_CONTRACT(double)

}  // namespace kernels
}  // namespace yee
