// Host check of the CUDA backend's device code without a GPU: runs the exact per-thread
// bodies of src/backends/cuda/stencil.hpp over every (block, thread) of the launch plan
// kernels.cpp uses, on the CUDA layout (padded rows, shifted base, NaN in the padding),
// and compares with the CPU backend (linked in) bitwise: split H and E updates with the
// energy sums, the fused part 1 / part 2 split with deferred faces, PEC walls at global
// index 0, checksum and div E, halo face pack/unpack offsets; and that launch plans cover every cell once,
// also when the j extent needs more than 65535 blocks. Exit 0 when everything matches, 1 with the first differences otherwise.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "backends/cuda/stencil.hpp"
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

// Fields in the CUDA layout, in host memory.
template <typename T>
struct Emulated {
  Fields<T> f;
  std::vector<T> store[6];
  explicit Emulated(const Fields<T>& like) {
    f = like;
    f.origin = 0;  // the CUDA layout: (0,0,0) at the shifted base (the CPU's rows start elsewhere)
    constexpr long A = cuda::align_elems<T>();
    f.sy = cuda::padded_row<T>(f.n[2]);
    f.sx = f.sy * (f.n[1] + 2);
    f.count = std::size_t(f.sx) * std::size_t(f.n[0] + 2);
    T nan;
    std::memset(&nan, 0xff, sizeof nan);
    for (int c = 0; c < 6; ++c) {
      store[c].assign(f.count + std::size_t(A), nan);
      f.comp[c] = store[c].data() + (A - 1);
    }
  }
  // Padding (k >= n2+2 in every row, and the slack before the base) must still be NaN.
  bool padding_intact() const {
    constexpr long A = cuda::align_elems<T>();
    for (int c = 0; c < 6; ++c) {
      for (long q = 0; q < A - 1; ++q)
        if (!std::isnan(store[c][std::size_t(q)])) return false;
      for (long r = 0; r < (f.n[0] + 2) * (f.n[1] + 2); ++r)
        for (long k = f.n[2] + 2; k < f.sy; ++k)
          if (!std::isnan(f.comp[c][r * f.sy + k])) return false;
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

template <typename T>
void case_run(const char* name, const long n[3], const long goff[3], const bool defer[3], int sm, int steps) {
  char label[160];
  std::snprintf(label, sizeof label, "%s %s n=%ldx%ldx%ld goff=%ld,%ld,%ld defer=%d%d%d sm=%d", name,
                sizeof(T) == 4 ? "f32" : "f64", n[0], n[1], n[2], goff[0], goff[1], goff[2], defer[0], defer[1],
                defer[2], sm);
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
          gpu.f.comp[c][gpu.f.at(i, j, k)] = v;
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
    // Fused pair: part 1, then (after the halo) part 2.
    kernels::fused_part1(cpu, c);
    const cuda::FusedSplit fs = cuda::fused_split(gpu.f);
    emu_h(gpu, fs.owned, c, sm, nullptr);
    emu_e(gpu, fs.core, c, sm);
    // (No comparison here: the CPU's part 1 also defers E on its threads' first rows.)
    kernels::fused_part2(cpu, c);
    for (int a = 0; a < 3; ++a)
      if (fs.has_slab[a]) emu_e(gpu, fs.slab[a], c, sm);
    expect(same_fields(cpu, gpu, label), "fused part 1 + part 2 differ", label);
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

}  // namespace

int main() {
  const long odd[3] = {9, 7, 37}, flat[3] = {3, 70, 2}, cube[3] = {16, 16, 16}, one[3] = {1, 1, 1};
  const long wall[3] = {0, 0, 0}, inner[3] = {5, 3, 11}, mixed[3] = {0, 4, 0};
  const bool none[3] = {false, false, false}, all[3] = {true, true, true}, some[3] = {false, true, true};
  for (int sm : {1, 132}) {
    case_run<float>("split+fused", odd, wall, none, sm, 3);
    case_run<double>("split+fused", odd, inner, all, sm, 3);
    case_run<float>("split+fused", flat, mixed, some, sm, 2);
    case_run<double>("split+fused", cube, wall, some, sm, 2);
    case_run<float>("split+fused", one, inner, all, sm, 2);
  }
  // Few SMs for the grid: each thread marches through several i planes (the last chunk
  // shorter), so the register reuse along i is exercised.
  const long deep[3] = {40, 24, 64};
  case_run<float>("marching", deep, inner, some, 1, 2);
  case_run<double>("marching", deep, wall, none, 1, 2);
  // More than 65535 blocks of j rows: the j stride must cover the rest (coverage only:
  // the fields of such a grid in the padded layout would take 1.2 GB).
  const long tall[3] = {1, 65535L * 8 + 13, 1};
  for (const long* n : {odd, flat, cube, deep, tall})
    for (int sm : {1, 8, 132}) plan_coverage(n, sm);
  if (g_failures) {
    std::printf("%d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("all checks passed\n");
  return 0;
}
