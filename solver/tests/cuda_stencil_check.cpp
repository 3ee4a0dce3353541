// Host check of the CUDA backend's device code without a GPU: runs the exact per-thread
// bodies of src/backends/cuda/stencil.hpp over every (block, thread) of the launch plan
// kernels.cpp uses, on the CUDA layout (padded rows, shifted base, NaN in the padding),
// and compares with the CPU backend (linked in) bitwise: split H and E updates with the
// energy sums, the fused kernel's block program (cuda_fused_emulator.hpp: tiles of 1 to 32
// rows, pipelines 1 to 3 planes deep, copies landing early or late, threads in either
// order) with part 2 on the
// deferred faces, PEC walls at global index 0, checksum and div E, halo face pack/unpack
// offsets; and that launch plans cover every cell once, also when the j extent needs more
// than 65535 blocks. Exit 0 when everything matches, 1 with the first differences otherwise.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "backends/cuda/fused_block.hpp"
#include "backends/cuda/stencil.hpp"
#include "cuda_fused_emulator.hpp"
#include "kernel_contract.hpp"

namespace {

using namespace yee;
int g_failures = 0;

void expect(bool ok, const char* what, const char* label) {
  if (!ok) {
    ++g_failures;
    std::printf("FAIL  %s: %s\n", label, what);
  }
}

template <typename T>
std::uint64_t bits(T v) {
  std::uint64_t u = 0;
  std::memcpy(&u, &v, sizeof v);
  return u;
}

// Fields in the CUDA layout, in host memory: two copies, as the backend allocates them
// (the fused kernel reads `cur` and writes the other), 256-byte aligned like cudaMalloc.
template <typename T>
struct Emulated {
  Fields<T> f;  // comp: the current copy
  T* base[2][6] = {};
  int cur = 0;
  explicit Emulated(const Fields<T>& like) {
    f = like;
    f.origin = 0;  // the CUDA layout: (0,0,0) at the shifted base (the CPU's rows start elsewhere)
    constexpr long A = cuda::align_elems<T>();
    f.sy = cuda::padded_row<T>(f.n[2]);
    f.sx = f.sy * (f.n[1] + 2);
    f.count = std::size_t(f.sx) * std::size_t(f.n[0] + 2);
    const std::size_t bytes = ((f.count + std::size_t(A)) * sizeof(T) + 255) / 256 * 256;
    for (auto& set : base)
      for (auto& p : set) {
        p = static_cast<T*>(std::aligned_alloc(256, bytes));
        std::memset(p, 0xff, bytes);  // NaN
      }
    point();
  }
  ~Emulated() {
    for (auto& set : base)
      for (T* p : set) std::free(p);
  }
  Emulated(const Emulated&) = delete;
  Emulated& operator=(const Emulated&) = delete;
  T* comp(int set, int c) const { return base[set][c] + (cuda::align_elems<T>() - 1); }
  void point() {
    for (int c = 0; c < 6; ++c) f.comp[c] = comp(cur, c);
  }
  Fields<T> other() const {
    Fields<T> o = f;
    for (int c = 0; c < 6; ++c) o.comp[c] = comp(1 - cur, c);
    return o;
  }
  // Why reading `bytes` at p is wrong (not in a component of copy `set`, or in its row
  // padding unless `padding_ok`), or nullptr. The slack before the first entry counts as
  // padding (the backend's layout has at least align_elems - 1 entries there).
  const char* bad_read(int set, const void* p, int bytes, bool padding_ok) const {
    constexpr long A = cuda::align_elems<T>();
    for (int c = 0; c < 6; ++c) {
      const T* x = static_cast<const T*>(p);
      const T* a = comp(set, c);
      if (x < a - (A - 1) || x > a + f.count) continue;
      for (long e = 0; e < bytes / long(sizeof(T)); ++e) {
        const long off = long(x - a) + e;
        if (off < -(A - 1) || off >= long(f.count)) return "read outside the field array";
        if (!padding_ok && (off < 0 || off % f.sy >= f.n[2] + 2)) return "read in the row padding";
      }
      return nullptr;
    }
    return "read outside the source copy of the fields";
  }
  // Padding (k >= n2+2 in every row, and the slack before the base) must still be NaN.
  bool padding_intact() const {
    constexpr long A = cuda::align_elems<T>();
    for (auto& set : base)
      for (T* b : set) {
        for (long q = 0; q < A - 1; ++q)
          if (!std::isnan(b[q])) return false;
        const T* a = b + (A - 1);
        for (long r = 0; r < (f.n[0] + 2) * (f.n[1] + 2); ++r)
          for (long k = f.n[2] + 2; k < f.sy; ++k)
            if (!std::isnan(a[r * f.sy + k])) return false;
      }
    return true;
  }
};

// Every launch of the plan, thread by thread, as the GPU would run them (no thread reads
// what another writes within one kernel, so the order does not matter).
template <typename Fn>
void emulate(const Box& b, int sm_count, Fn fn) {
  if (b.empty()) return;
  const cuda::LaunchPlan p = cuda::plan_launch(b, sm_count);
  for (long bz = 0; bz < p.gz; ++bz)
    for (long by = 0; by < p.gy; ++by)
      for (long bx = 0; bx < p.gx; ++bx)
        for (long ty = 0; ty < cuda::kBlockJ; ++ty)
          for (long tx = 0; tx < cuda::kBlockK; ++tx) fn(cuda::ThreadIds{bx, by, bz, tx, ty, p.gy}, p.span);
}

template <typename T>
void emu_h(Emulated<T>& g, const Box& b, T c, int sm, EnergySums* sums) {
  const auto d = cuda::dev(g.f);
  double se = 0.0, sh = 0.0;
  emulate(b, sm, [&](const cuda::ThreadIds& t, long span) {
    if (sums)
      cuda::h_thread<T, true>(d, b, span, c, t, se, sh);
    else
      cuda::h_thread<T, false>(d, b, span, c, t, se, sh);
  });
  if (sums) {
    sums->e2 += se;
    sums->hh += sh;
  }
}

template <typename T>
void emu_e(Emulated<T>& g, const Box& b, T c, int sm) {
  const auto d = cuda::dev(g.f);
  emulate(b, sm, [&](const cuda::ThreadIds& t, long span) { cuda::e_thread<T>(d, b, span, c, t); });
}

// All entries of the logical (n+2)^3 index space equal bitwise.
template <typename T>
bool same_fields(const Fields<T>& a, const Emulated<T>& g, const char* label) {
  long diffs = 0;
  for (int c = 0; c < 6; ++c)
    for (long i = 0; i < a.n[0] + 2; ++i)
      for (long j = 0; j < a.n[1] + 2; ++j)
        for (long k = 0; k < a.n[2] + 2; ++k) {
          const T x = a.comp[c][a.at(i, j, k)], y = g.f.comp[c][g.f.at(i, j, k)];
          if (bits(x) != bits(y) && diffs++ < 3)
            std::printf("      %s: comp %d (%ld,%ld,%ld): cpu %.9g cuda %.9g\n", label, c, i, j, k, double(x),
                        double(y));
        }
  return diffs == 0;
}

// The fused kernel's part 1 as kernels.cpp launches it (sm SMs with a few blocks each, so
// the plan cuts i into chunks) with copies `depth` planes ahead, from the current copy into
// the other, whose owned cells start as NaN (a cell the sweep misses stays NaN); then the
// other copy is the current one.
template <typename T>
void fused_emulated(Emulated<T>& g, T c, long rows, int depth, int sm, bool late_backward, const char* label) {
  Fields<T> next = g.other();
  for (int q = 0; q < 6; ++q)
    for (long i = 1; i <= g.f.n[0]; ++i)
      for (long j = 1; j <= g.f.n[1]; ++j)
        for (long k = 1; k <= g.f.n[2]; ++k) std::memset(&next.comp[q][next.at(i, j, k)], 0xff, sizeof(T));
  const cuda::FusedSplit split = cuda::fused_split(g.f);
  const cuda::FusedPlan plan = cuda::plan_fused(split.owned, rows, sm, sm == 1 ? 1 : 3);
  const cuda::FusedArgs<T> a{cuda::dev(g.f), cuda::dev(next), split.owned, split.core, rows, plan.tiles_j, plan.span, c};
  const int cur = g.cur;
  const long bad = emu::run_fused<T>(a, plan, depth, late_backward, late_backward,
                                     [&](const void* p, int bytes) { return g.bad_read(cur, p, bytes, true); });
  expect(bad == 0, "the fused kernel's copies read or write where they must not", label);
  expect(plan.gy <= 65535 && plan.gz <= 65535 && plan.span >= 1, "fused grid out of CUDA's limits", label);
  g.cur = 1 - g.cur;
  g.point();
}

template <typename T>
void case_run(const char* name, const long n[3], const long goff[3], const bool defer[3], int sm, int steps,
              long rows, int depth) {
  char label[176];
  std::snprintf(label, sizeof label, "%s %s n=%ldx%ldx%ld goff=%ld,%ld,%ld defer=%d%d%d sm=%d tile=%ld depth=%d",
                name, sizeof(T) == 4 ? "f32" : "f64", n[0], n[1], n[2], goff[0], goff[1], goff[2], defer[0],
                defer[1], defer[2], sm, rows, depth);
  const int failures_before = g_failures;
  Fields<T> cpu;
  for (int a = 0; a < 3; ++a) {
    cpu.n[a] = n[a];
    cpu.goff[a] = goff[a];
    cpu.gn[a] = goff[a] + n[a] + 3;
    cpu.defer_low[a] = defer[a];
  }
  kernels::allocate(cpu);
  Emulated<T> gpu(cpu);
  // Random values everywhere, ghosts included (as a halo exchange would leave them).
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int c = 0; c < 6; ++c)
    for (long i = 0; i < n[0] + 2; ++i)
      for (long j = 0; j < n[1] + 2; ++j)
        for (long k = 0; k < n[2] + 2; ++k) {
          const T v = T(u(rng));
          cpu.comp[c][cpu.at(i, j, k)] = v;
          for (int set = 0; set < 2; ++set) gpu.comp(set, c)[gpu.f.at(i, j, k)] = v;
        }
  const T c = T(0.57);
  const Box owned{{1, 1, 1}, {n[0] + 1, n[1] + 1, n[2] + 1}};
  for (int s = 0; s < steps; ++s) {
    EnergySums ec, eg;
    kernels::update_h(cpu, owned, c, &ec);
    emu_h(gpu, owned, c, sm, &eg);
    expect(same_fields(cpu, gpu, label), "H update (split) differs", label);
    const double scale = std::fabs(ec.e2) + std::fabs(ec.hh) + 1e-300;
    expect(std::fabs(ec.e2 - eg.e2) + std::fabs(ec.hh - eg.hh) <= 1e-12 * scale, "energy sums differ", label);
    kernels::update_e(cpu, owned, c);
    emu_e(gpu, owned, c, sm);
    expect(same_fields(cpu, gpu, label), "E update (split) differs", label);
    // Fused pair: part 1, then (after the halo) part 2; the GPU's part 1 in two host runs
    // (copies early and threads forward; copies late and threads backward), each from
    // the same current copy into the other with its owned cells poisoned.
    kernels::fused_part1(cpu, c);
    kernels::fused_part2(cpu, c);
    for (int mode = 0; mode < 2; ++mode) {
      fused_emulated(gpu, c, rows, depth, sm, mode == 1, label);
      const cuda::FusedSplit fs = cuda::fused_split(gpu.f);
      for (int a = 0; a < 3; ++a)
        if (fs.has_slab[a]) emu_e(gpu, fs.slab[a], c, sm);
      expect(same_fields(cpu, gpu, label), mode ? "fused (copies late, threads backward) differs"
                                                : "fused (copies early, threads forward) differs", label);
      if (mode == 0) {  // back to the copy the sweep read, for the second run
        gpu.cur = 1 - gpu.cur;
        gpu.point();
      }
    }
  }
  // Checksum and div E: the threads' shares combined as the kernels combine them (sum
  // with wrap-around, max), against the CPU backend's.
  {
    const auto d = cuda::dev(gpu.f);
    const std::uint64_t g1 = std::uint64_t(cpu.gn[1] + 1), g2 = std::uint64_t(cpu.gn[2] + 1);
    std::uint64_t sum = 0;
    double dm = 0.0, em = 0.0, cdm = 0.0, cem = 0.0;
    emulate(owned, sm, [&](const cuda::ThreadIds& t, long span) {
      sum += cuda::checksum_thread(d, owned, span, g1, g2, t);
      cuda::div_thread(d, owned, span, t, dm, em);
    });
    expect(sum == kernels::checksum(cpu), "checksum differs", label);
    kernels::div_e(cpu, &cdm, &cem);
    expect(dm == cdm && em == cem && em > 0.0, "max |div E| or max |E| differs", label);
  }
  // Halo faces: pack the top and bottom layers, unpack into the opposite ghosts.
  for (int axis = 0; axis < 3; ++axis) {
    const cuda::Face top = cuda::face_of(gpu.f, axis, n[axis]);
    const std::size_t face = std::size_t(top.na * top.nb);
    std::vector<T> mc(2 * face), mg(2 * face);
    const std::size_t count = kernels::pack(cpu, axis, n[axis], kEx, kHz, mc.data());
    for (long uu = 0; uu < top.na; ++uu)
      for (long vv = 0; vv < top.nb; ++vv) {
        mg[std::size_t(uu * top.nb + vv)] = gpu.f.comp[kEx][top.offset(uu, vv)];
        mg[face + std::size_t(uu * top.nb + vv)] = gpu.f.comp[kHz][top.offset(uu, vv)];
      }
    expect(count == 2 * face && std::memcmp(mc.data(), mg.data(), sizeof(T) * 2 * face) == 0,
           "packed face differs", label);
    kernels::unpack(cpu, axis, 0, kEy, kHx, mc.data());
    const cuda::Face ghost = cuda::face_of(gpu.f, axis, 0);
    for (long uu = 0; uu < ghost.na; ++uu)
      for (long vv = 0; vv < ghost.nb; ++vv) {
        gpu.f.comp[kEy][ghost.offset(uu, vv)] = mg[std::size_t(uu * ghost.nb + vv)];
        gpu.f.comp[kHx][ghost.offset(uu, vv)] = mg[face + std::size_t(uu * ghost.nb + vv)];
      }
    expect(same_fields(cpu, gpu, label), "unpacked face differs", label);
  }
  expect(gpu.padding_intact(), "a kernel wrote into the row padding", label);
  kernels::release(cpu);
  std::printf("%s  %s\n", g_failures > failures_before ? "FAIL" : "ok  ", label);
}

// The wavefront kernel's sweep of TB steps on one rank (walls all round, the sweep's
// condition) with a source and probes of an E and an H component, in two host runs
// (copies early, threads forward; copies late, threads backward), against TB steps of the
// CPU backend with the time loop's source and probes; every owned cell of the written
// copy starts as NaN.
template <typename T, int TB>
void sweep_case(const long n[3], long rows, int sm, int probe_comp) {
  char label[160];
  std::snprintf(label, sizeof label, "sweep TB=%d %s n=%ldx%ldx%ld tile=%ld sm=%d probes of comp %d", TB,
                sizeof(T) == 4 ? "f32" : "f64", n[0], n[1], n[2], rows, sm, probe_comp);
  const int failures_before = g_failures;
  Fields<T> cpu;
  for (int a = 0; a < 3; ++a) cpu.n[a] = cpu.gn[a] = n[a];
  kernels::allocate(cpu);
  Emulated<T> gpu(cpu);
  std::mt19937_64 rng(777);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int c = 0; c < 6; ++c)
    for (long i = 0; i < n[0] + 2; ++i)
      for (long j = 0; j < n[1] + 2; ++j)
        for (long k = 0; k < n[2] + 2; ++k) {
          const bool ghost = i == 0 || j == 0 || k == 0 || i == n[0] + 1 || j == n[1] + 1 || k == n[2] + 1;
          const T v = ghost && c < 3 ? T(0) : T(u(rng));  // E on the walls' ghosts is 0, as in a run
          cpu.comp[c][cpu.at(i, j, k)] = v;
          for (int set = 0; set < 2; ++set) gpu.comp(set, c)[gpu.f.at(i, j, k)] = v;
        }
  const T c = T(0.55);
  const Box owned{{1, 1, 1}, {n[0] + 1, n[1] + 1, n[2] + 1}};
  const long src[3] = {n[0] / 2 + 1, n[1] / 3 + 1, n[2] - 1};
  const long probes[3][3] = {{1, 1, 1}, {n[0], n[1], n[2]}, {n[0] / 2 + 1, n[1] / 2 + 1, n[2] / 2 + 1}};
  double values[8];
  for (int t = 0; t < TB; ++t) values[t] = u(rng);
  std::vector<double> ref(3 * TB, 0.0), got(3 * TB, -7.0);
  for (int t = 0; t < TB; ++t) {
    kernels::update_h(cpu, owned, c, nullptr);
    kernels::update_e(cpu, owned, c);
    kernels::add_to(cpu, kEz, src[0], src[1], src[2], values[t]);
    for (int q = 0; q < 3; ++q) ref[std::size_t(t * 3 + q)] = kernels::read(cpu, probe_comp, probes[q][0], probes[q][1], probes[q][2]);
  }
  std::vector<cuda::SweepProbe> table;
  for (int q = 0; q < 3; ++q) table.push_back({probes[q][0], probes[q][1], probes[q][2], q});
  for (int mode = 0; mode < 2; ++mode) {
    Fields<T> next = gpu.other();
    for (int q = 0; q < 6; ++q)
      for (long i = 1; i <= n[0]; ++i)
        for (long j = 1; j <= n[1]; ++j)
          for (long k = 1; k <= n[2]; ++k) std::memset(&next.comp[q][next.at(i, j, k)], 0xff, sizeof(T));
    const cuda::FusedPlan plan = cuda::plan_fused(owned, rows, sm, 2, 2 * TB - 1);
    cuda::SweepArgs<T> a{};
    a.src = cuda::dev(gpu.f);
    a.dst = cuda::dev(next);
    a.owned = owned;
    a.rows = rows;
    a.tiles_j = plan.tiles_j;
    a.span = plan.span;
    a.c = c;
    a.has_source = true;
    for (int d = 0; d < 3; ++d) a.source[d] = src[d];
    for (int t = 0; t < TB; ++t) a.source_value[t] = values[t];
    a.probes = table.data();
    a.nprobes = 3;
    a.probe_comp = probe_comp;
    a.samples = got.data();
    a.stride = 3;
    a.t0 = 0;
    std::fill(got.begin(), got.end(), -7.0);
    const int cur = gpu.cur;
    const long bad = emu::run_sweep<T, TB>(a, plan, mode == 1, mode == 1,
                                           [&](const void* p, int bytes) { return gpu.bad_read(cur, p, bytes, false); });
    expect(bad == 0, "the sweep's copies read or write where they must not", label);
    gpu.cur = 1 - gpu.cur;
    gpu.point();
    expect(same_fields(cpu, gpu, label), mode ? "sweep (copies late, threads backward) differs"
                                              : "sweep (copies early, threads forward) differs", label);
    long wrong = 0;
    for (std::size_t x = 0; x < ref.size(); ++x) wrong += bits(ref[x]) != bits(got[x]);
    expect(wrong == 0, "probe samples differ", label);
    if (mode == 0) {
      gpu.cur = 1 - gpu.cur;
      gpu.point();
    }
  }
  expect(gpu.padding_intact(), "the sweep wrote into the row padding", label);
  kernels::release(cpu);
  std::printf("%s  %s\n", g_failures > failures_before ? "FAIL" : "ok  ", label);
}

// Deep-ghost layouts (the wavefront kernel's halos on several ranks): every index of the
// ghost-extended box has its own entry inside the allocation, k = 1 of every row starts a
// 128-byte line, and the row padding lies between rows, overlapping no entry.
template <typename T>
void layout_case(const long n[3], const long g[3]) {
  const cuda::Layout l = cuda::layout_of<T>(n, g);
  constexpr long A = cuda::align_elems<T>();
  std::vector<unsigned char> used(std::size_t(l.elems), 0);
  long bad = 0;
  for (long i = 1 - g[0]; i <= n[0] + g[0]; ++i)
    for (long j = 1 - g[1]; j <= n[1] + g[1]; ++j) {
      const long row = l.slack + i * l.sx + j * l.sy;
      bad += (row + 1) % A != 0;  // k = 1 aligned (the allocation is 256-byte aligned)
      for (long k = 1 - g[2]; k <= n[2] + g[2]; ++k) {
        const long at = row + k;
        if (at < 0 || at >= l.elems || used[std::size_t(at)]++) ++bad;
      }
      for (long k = n[2] + g[2] + 1; k <= l.sy - g[2]; ++k)  // padding: never an entry
        if (row + k >= 0 && row + k < l.elems && used[std::size_t(row + k)]) ++bad;
    }
  char label[128];
  std::snprintf(label, sizeof label, "layout %s n=%ldx%ldx%ld ghosts=%ld,%ld,%ld", sizeof(T) == 4 ? "f32" : "f64",
                n[0], n[1], n[2], g[0], g[1], g[2]);
  expect(bad == 0, "entries overlap, fall outside the allocation or rows are misaligned", label);
  std::printf("%s  %s\n", bad ? "FAIL" : "ok  ", label);
}

// Launch plans cover every cell exactly once.
void plan_coverage(const long n[3], int sm) {
  const Box b{{1, 1, 1}, {n[0] + 1, n[1] + 1, n[2] + 1}};
  std::vector<unsigned char> seen(std::size_t(n[0] * n[1] * n[2]), 0);
  emulate(b, sm, [&](const cuda::ThreadIds& t, long span) {
    const long k = b.lo[2] + t.bx * cuda::kBlockK + t.tx;
    if (k >= b.hi[2]) return;
    const long i0 = b.lo[0] + t.bz * span, i1 = std::min(b.hi[0], i0 + span);
    for (long j = b.lo[1] + t.by * cuda::kBlockJ + t.ty; j < b.hi[1]; j += t.gy * cuda::kBlockJ)
      for (long i = i0; i < i1; ++i) ++seen[std::size_t(((i - 1) * n[1] + (j - 1)) * n[2] + (k - 1))];
  });
  long bad = 0;
  for (unsigned char s : seen) bad += s != 1;
  char label[96];
  std::snprintf(label, sizeof label, "plan n=%ldx%ldx%ld sm=%d", n[0], n[1], n[2], sm);
  expect(bad == 0, "cells not visited exactly once", label);
  const cuda::LaunchPlan p = cuda::plan_launch(b, sm);
  expect(p.gy <= 65535 && p.gz <= 65535 && p.span >= 1, "grid dimension out of CUDA's limits", label);
  std::printf("%s  %s: grid %ldx%ldx%ld, %ld planes per thread\n", bad ? "FAIL" : "ok  ", label, p.gx, p.gy, p.gz,
              p.span);
}

// The fused kernel's plan: its tiles (32 k x rows j x a chunk of planes, the grid's y
// striding over the j tiles) cover every owned cell exactly once.
void fused_plan_coverage(const long n[3], long rows, int sm, int per_sm) {
  const Box b{{1, 1, 1}, {n[0] + 1, n[1] + 1, n[2] + 1}};
  const cuda::FusedPlan p = cuda::plan_fused(b, rows, sm, per_sm);
  cuda::FusedArgs<float> a{};
  a.owned = b;
  a.rows = rows;
  a.tiles_j = p.tiles_j;
  a.span = p.span;
  std::vector<unsigned char> seen(std::size_t(n[0] * n[1] * n[2]), 0);
  for (long bz = 0; bz < p.gz; ++bz)
    for (long by = 0; by < p.gy; ++by)
      for (long bx = 0; bx < p.gx; ++bx)
        for (long tj = by; tj < p.tiles_j; tj += p.gy) {
          const cuda::FusedTile t = cuda::fused_tile(a, bx, tj, bz);
          for (long i = t.i0; i < t.i1; ++i)
            for (long j = t.j0; j < std::min(t.j0 + rows, b.hi[1]); ++j)
              for (long k = t.k0; k < std::min(t.k0 + cuda::kBlockK, b.hi[2]); ++k)
                ++seen[std::size_t(((i - 1) * n[1] + (j - 1)) * n[2] + (k - 1))];
        }
  long bad = 0;
  for (unsigned char s : seen) bad += s != 1;
  char label[128];
  std::snprintf(label, sizeof label, "fused plan n=%ldx%ldx%ld tile=%ld sm=%d blocks/SM=%d", n[0], n[1], n[2], rows,
                sm, per_sm);
  expect(bad == 0, "cells not covered exactly once", label);
  expect(p.gy <= 65535 && p.gz <= 65535 && p.span >= 1 && (p.gz - 1) * p.span < n[0],
         "grid out of CUDA's limits or an empty chunk", label);
  std::printf("%s  %s: grid %ldx%ldx%ld, %ld planes per chunk\n", bad ? "FAIL" : "ok  ", label, p.gx, p.gy, p.gz,
              p.span);
}

}  // namespace

int main() {
  const long odd[3] = {9, 7, 37}, flat[3] = {3, 70, 2}, cube[3] = {16, 16, 16}, one[3] = {1, 1, 1};
  const long wall[3] = {0, 0, 0}, inner[3] = {5, 3, 11}, mixed[3] = {0, 4, 0};
  const bool none[3] = {false, false, false}, all[3] = {true, true, true}, some[3] = {false, true, true};
  // Tiles of 1 to 32 rows (the fused kernel's thread count follows them; one row has more
  // ring cells than threads), pipelines 1 to 3 planes deep; one SM with one block (whole
  // planes per chunk) or 132 SMs with three blocks each (the plan cuts i into short chunks).
  for (int sm : {1, 132}) {
    case_run<float>("split+fused", odd, wall, none, sm, 3, 8, 2);
    case_run<double>("split+fused", odd, inner, all, sm, 3, 16, 1);
    case_run<float>("split+fused", flat, mixed, some, sm, 2, 24, 3);
    case_run<double>("split+fused", cube, wall, some, sm, 2, 8, 2);
    case_run<float>("split+fused", one, inner, all, sm, 2, 16, 2);
    case_run<double>("split+fused", odd, wall, some, sm, 2, 3, 3);
    case_run<float>("split+fused", flat, mixed, some, sm, 2, 12, 1);
    case_run<float>("split+fused", odd, inner, all, sm, 2, 32, 2);
    case_run<double>("split+fused", odd, mixed, all, sm, 2, 1, 2);
    case_run<float>("split+fused", cube, wall, none, sm, 2, 2, 3);
  }
  // Few SMs for the grid: each split-kernel thread marches through several i planes (the
  // last chunk shorter), so the register reuse along i is exercised; the fused kernel's
  // tiles stream through long chunks.
  // (The fused kernel recomputes H on the ghost layers at index 0, which only walls and
  // deferred faces read: a block off the low wall always has its low face deferred.)
  const long deep[3] = {40, 24, 64}, jk[3] = {0, 3, 11};
  case_run<float>("marching", deep, jk, some, 1, 2, 16, 2);
  case_run<double>("marching", deep, wall, none, 1, 2, 8, 3);
  case_run<float>("chunked", deep, wall, all, 8, 2, 8, 1);
  // Sweeps of two steps: tiles of 8 and 16 rows, partial tiles in j and k, chunks along i
  // (132 SMs), whole planes (1 SM); probes of Ez and Hy.
  sweep_case<float, 2>(odd, 8, 132, kEz);
  sweep_case<double, 2>(odd, 16, 1, kHy);
  sweep_case<float, 2>(cube, 8, 1, kHx);
  sweep_case<double, 2>(deep, 8, 132, kEx);
  sweep_case<float, 2>(flat, 16, 132, kEy);
  sweep_case<double, 2>(odd, 3, 132, kHz);
  sweep_case<float, 2>(cube, 12, 1, kEz);
  // More than 65535 blocks of j rows: the j stride must cover the rest (coverage only:
  // the fields of such a grid in the padded layout would take 1.2 GB).
  const long tall[3] = {1, 65535L * 8 + 13, 1};
  for (const long* n : {odd, flat, cube, deep, tall})
    for (int sm : {1, 8, 132}) plan_coverage(n, sm);
  const long one_ghost[3] = {1, 1, 1}, deep_ghosts[3] = {3, 1, 4}, deeper[3] = {16, 16, 16};
  layout_case<float>(odd, one_ghost);
  layout_case<double>(odd, deep_ghosts);
  layout_case<float>(flat, deeper);
  layout_case<double>(cube, deeper);
  const long big[3] = {512, 512, 512};
  for (const long* n : {odd, flat, cube, deep, tall})
    for (long rows : {8, 16})
      for (int sm : {1, 132}) fused_plan_coverage(n, rows, sm, 3);
  fused_plan_coverage(big, 16, 132, 3);
  if (g_failures) {
    std::printf("%d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("all checks passed\n");
  return 0;
}
