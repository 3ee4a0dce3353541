// CUDA wavefront kernel (src/time_block.hpp; compiled by nvcc as CUDA): several time
// steps per pass over the fields. On one rank (every box of the pass is the owned box) a
// pass runs sweeps of kSweepSteps steps (temporal_block.hpp: each block keeps its tile's
// cone of steps in shared memory, so the fields travel through device memory once per
// sweep, not once per step), and a last single step as the fused kernel. With neighbour
// ranks the pass's boxes reach into the deep halo; there it runs the split kernels step by
// step over those boxes (correct, no faster than the fused kernel). Design and figures:
// solver/NOTES-cuda.md, "Kernels" and "Measured on an H200".
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "backends/cuda/async_copy.hpp"
#include "backends/cuda/backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/temporal_block.hpp"
#include "time_block.hpp"

#ifndef YEE_CUDA_SWEEP_STEPS
#define YEE_CUDA_SWEEP_STEPS 2
#endif

namespace yee {
namespace kernels {
namespace {

constexpr int kSweepSteps = YEE_CUDA_SWEEP_STEPS;  // time steps per sweep
static_assert(kSweepSteps >= 2 && kSweepSteps <= 8, "YEE_CUDA_SWEEP_STEPS: 2 .. 8");
bool g_wavefront = false;

// Registers: capped at 2 blocks of 256 threads per SM in f32, 1 in f64 (NOTES-cuda.md, "Registers").
template <typename T>
constexpr int sweep_min_blocks() {
  return sizeof(T) == 4 ? 2 : 1;
}

// The phases of temporal_block.hpp with a barrier wherever one reads what other threads
// wrote; tests/cuda_fused_emulator.hpp (run_sweep) runs the same schedule on the host.
template <typename T, int TB>
__global__ void __launch_bounds__(cuda::kSweepThreads, sweep_min_blocks<T>()) sweep_kernel(cuda::SweepArgs<T> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  const cuda::SweepShared<T, TB> s{reinterpret_cast<T*>(smem), a.rows};
  const int tid = int(threadIdx.x);
  cuda::AsyncCopy mv;
  for (long tj = blockIdx.y; tj < a.tiles_j; tj += gridDim.y) {
    const cuda::FusedTile t = cuda::sweep_tile(a, long(blockIdx.x), tj, long(blockIdx.z));
    __syncthreads();
    cuda::sweep_copy_first(a, s, t, tid, mv);
    mv.commit();
    for (long p = cuda::sweep_first_front(t, TB); p <= cuda::sweep_last_front(t, TB); ++p) {
      mv.wait_all();
      __syncthreads();  // this front's planes have landed; the previous front is done
      cuda::sweep_copy_next(a, s, t, p, tid, mv);
      mv.commit();
#pragma unroll 1
      for (int st = 1; st <= TB; ++st) {
        cuda::sweep_h_phase(a, s, t, st, p, tid);
        __syncthreads();
        cuda::sweep_e_phase(a, s, t, st, p, tid);
        if (a.nprobes > 0) {
          __syncthreads();
          cuda::sweep_probes(a, s, t, st, p, tid);
        }
        if (st < TB) __syncthreads();
      }
    }
  }
}

template <typename T, int TB>
long sweep_blocks_per_sm(long rows) {
  static long cached_rows = -1, cached = 1;
  if (rows != cached_rows) {
    const std::size_t smem = cuda::sweep_smem_bytes<T, TB>(rows);
    CUDA_CHECK(cudaFuncSetAttribute(sweep_kernel<T, TB>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    int n = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, sweep_kernel<T, TB>, cuda::kSweepThreads, smem));
    cached_rows = rows;
    cached = std::max(n, 1);
  }
  return cached;
}

// Device copies of the pass's probe table and samples, kept between passes.
struct Probes {
  std::vector<cuda::SweepProbe> host;
  cuda::SweepProbe* table = nullptr;
  double* samples = nullptr;
  std::size_t table_cap = 0, samples_cap = 0;
};
Probes g_probes;

template <typename T>
void* grow(T*& p, std::size_t& cap, std::size_t need) {
  if (need > cap) {
    if (p) CUDA_CHECK(cudaFree(p));
    CUDA_CHECK(cudaMalloc(&p, need * sizeof(T)));
    cap = need;
  }
  return p;
}

// Steps t0 .. t0+TB-1 of the pass as one sweep from the current copy into the other.
template <typename T, int TB>
void launch_sweep(Fields<T>& f, const PassPlan& plan, int t0, T c, const Box& owned) {
  const Fields<T> next = cuda_backend::other_copy(f);
  const long rows = cuda_backend::tile_rows(f, cuda_backend::sweep_default_rows<T>());
  const cuda::FusedPlan lp = cuda::plan_fused(owned, rows, cuda_backend::sm_count(), sweep_blocks_per_sm<T, TB>(rows),
                                              2 * TB - 1);
  cuda::SweepArgs<T> a{};
  a.src = cuda::dev(f);
  a.dst = cuda::dev(next);
  a.owned = owned;
  a.rows = rows;
  a.tiles_j = lp.tiles_j;
  a.span = lp.span;
  a.c = c;
  a.has_source = plan.has_source;
  for (int d = 0; d < 3; ++d) a.source[d] = plan.source[d];
  for (int s = 0; s < TB; ++s) a.source_value[s] = plan.source_value[t0 + s];
  a.nprobes = int(plan.probes.size());
  a.probes = g_probes.table;
  a.probe_comp = plan.probe_comp;
  a.samples = g_probes.samples;
  a.stride = long(plan.sample_stride);
  a.t0 = t0;
  if (lp.blocks() > 0) {
    sweep_kernel<T, TB><<<dim3(unsigned(lp.gx), unsigned(lp.gy), unsigned(lp.gz)), cuda::kSweepThreads,
                          cuda::sweep_smem_bytes<T, TB>(rows)>>>(a);
    CUDA_CHECK_LAUNCH("sweep_kernel");
  }
  for (int q = 0; q < 6; ++q) f.comp[q] = next.comp[q];
}

bool same_box(const Box& a, const Box& b) {
  for (int d = 0; d < 3; ++d)
    if (a.lo[d] != b.lo[d] || a.hi[d] != b.hi[d]) return false;
  return true;
}

bool inside(const Box& b, const long p[3]) {
  for (int d = 0; d < 3; ++d)
    if (p[d] < b.lo[d] || p[d] >= b.hi[d]) return false;
  return true;
}

}  // namespace

namespace cuda_backend {
bool wavefront_requested() { return g_wavefront; }
template <typename T>
std::size_t sweep_smem_bytes(long rows) {
  return cuda::sweep_smem_bytes<T, kSweepSteps>(rows);
}
// f32: 16 rows where a block of them fits the device's shared memory (H100, H200), else 8;
// f64: 8. Measured on an H200 at 512^3 (NOTES-cuda.md, "Tile rows"): f32 16 rows 39.4
// Gcells/s, 32 34.3, 24 30.8, 8 27.5; f64 8 rows 21.4, 16 18.9.
template <typename T>
long sweep_default_rows() {
  return sizeof(T) == 4 && cuda::sweep_smem_bytes<T, kSweepSteps>(16) <= smem_optin() ? 16 : 8;
}
template std::size_t sweep_smem_bytes<float>(long);
template std::size_t sweep_smem_bytes<double>(long);
template long sweep_default_rows<float>();
template long sweep_default_rows<double>();
}  // namespace cuda_backend

template <typename T>
void time_block_pass(Fields<T>& f, const PassPlan& p, T c) {
  const Box owned{{1, 1, 1}, {f.n[0] + 1, f.n[1] + 1, f.n[2] + 1}};
  bool one_rank = true;
  for (int t = 0; t < p.steps; ++t) one_rank = one_rank && same_box(p.box[t], owned) && same_box(p.ebox[t], owned);
  for (int d = 0; d < 3; ++d) one_rank = one_rank && f.goff[d] == 0 && f.n[d] == f.gn[d];
  if (!one_rank) {
    // Neighbour ranks: step by step over the pass's boxes (deep halo), in place.
    for (int t = 0; t < p.steps; ++t) {
      cuda_backend::launch_h(f, p.box[t], c);
      cuda_backend::launch_e(f, p.ebox[t], c);
      if (p.has_source && inside(p.ebox[t], p.source)) add_to(f, kEz, p.source[0], p.source[1], p.source[2],
                                                                p.source_value[t]);
      for (const auto& q : p.probes)
        p.samples[std::size_t(t) * p.sample_stride + std::size_t(q.id)] = read(f, p.probe_comp, q.i, q.j, q.k);
    }
    cuda_backend::finish();
    return;
  }
  const std::size_t nsamples = std::size_t(p.steps) * p.sample_stride;
  if (!p.probes.empty()) {
    g_probes.host.clear();
    for (const auto& q : p.probes) g_probes.host.push_back({q.i, q.j, q.k, q.id});
    grow(g_probes.table, g_probes.table_cap, g_probes.host.size());
    grow(g_probes.samples, g_probes.samples_cap, nsamples);
    CUDA_CHECK(cudaMemcpy(g_probes.table, g_probes.host.data(), sizeof(cuda::SweepProbe) * g_probes.host.size(),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(g_probes.samples, p.samples, sizeof(double) * nsamples, cudaMemcpyHostToDevice));
  }
  int t = 0;
  for (; t + kSweepSteps <= p.steps; t += kSweepSteps) launch_sweep<T, kSweepSteps>(f, p, t, c, owned);
  for (; t < p.steps; ++t) {  // the rest, one fused step at a time, with the time loop's hooks
    cuda_backend::launch_fused(f, cuda::fused_split(f), c);
    if (p.has_source) add_to(f, kEz, p.source[0], p.source[1], p.source[2], p.source_value[t]);
    for (const auto& q : p.probes)
      p.samples[std::size_t(t) * p.sample_stride + std::size_t(q.id)] = read(f, p.probe_comp, q.i, q.j, q.k);
  }
  cuda_backend::finish();
  if (!p.probes.empty()) {  // the sweeps' samples (the single steps' were read directly)
    std::vector<double> dev(nsamples);
    CUDA_CHECK(cudaMemcpy(dev.data(), g_probes.samples, sizeof(double) * nsamples, cudaMemcpyDeviceToHost));
    const int swept = p.steps / kSweepSteps * kSweepSteps;
    for (int s = 0; s < swept; ++s)
      for (const auto& q : p.probes)
        p.samples[std::size_t(s) * p.sample_stride + std::size_t(q.id)] =
            dev[std::size_t(s) * p.sample_stride + std::size_t(q.id)];
  }
}

// The time loop asks for this only when it will run the wavefront kernel (before the
// fields are allocated): allocate() then also checks the wavefront kernel's tile. The
// figure feeds the CPU's cache model, which sets the pass length (and the halo depth with
// several ranks); the sweeps themselves are kSweepSteps steps long whatever it says.
std::size_t cache_bytes_per_thread() {
  g_wavefront = true;
  return std::size_t(512) * 1024;
}

// (pack_box and unpack_box, the deep halo's, are in kernels.cpp with the other copies.)
template void time_block_pass<float>(Fields<float>&, const PassPlan&, float);
template void time_block_pass<double>(Fields<double>&, const PassPlan&, double);

}  // namespace kernels
}  // namespace yee
