// CUDA backend of the kernel contract (compiled by nvcc as CUDA, see CMakeLists.txt).
// Fields live in device memory; Fields<T>::comp holds device pointers, so only this file
// and time_block.cpp dereference them. Design and predicted effects: solver/NOTES-cuda.md.
//  - Layout: the CPU's (i, j, k) order with k fastest, but each k row is padded to a
//    multiple of 128 bytes and shifted so that owned k = 1 starts a 128-byte line: a
//    warp's 32 consecutive k entries are one aligned transaction.
//  - Updates: the fused kernel (fused_block.hpp) makes one sweep per step (12 field words
//    per cell): it reads one copy of the fields and writes the other, then the two swap
//    (Fields::comp always names the current one). The split kernels (stencil.hpp) update in
//    place, H then E (18 words); diagnosed steps and the deferred faces use them.
//  - Arithmetic: the CPU's expressions in the CPU's order, built with --fmad=false, so the
//    fields are bitwise equal to the CPU backend's (and across GPU decompositions).
//  - Reductions: energy sums per block, then one block sums the partials in a fixed order
//    (run-to-run identical); checksum (wrapping uint64 sum) and div E (max) are order-free.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cuda/async_copy.hpp"
#include "backends/cuda/backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/fused_block.hpp"
#include "backends/cuda/stencil.hpp"
#include "kernel_contract.hpp"
#include "options.hpp"
#include "time_block.hpp"  // UsageError: a tile or grid this GPU cannot run is bad input

namespace yee {
namespace kernels {
namespace {

using cuda::dev;
using cuda::DevFields;
using cuda::kBlockJ;
using cuda::kBlockK;
using cuda::kMinBlocks;
constexpr int kReduceThreads = 256;

int g_sm_count = 0;  // of the selected device, for the launch geometry
std::size_t g_smem_optin = 0;  // shared memory one block may have (after cudaFuncSetAttribute)
std::string g_device_name = "the GPU";

// Test aid: YEE_POISON=1 fills row padding and message buffers with NaN bytes, so a
// kernel that reads what it should not turns the checksum and energy into NaN.
bool poison() {
  const char* v = std::getenv("YEE_POISON");
  return v && std::strcmp(v, "1") == 0;
}

// Device scratch that grows on demand (reduction partials), freed by release().
struct Scratch {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  void* get(std::size_t need) {
    if (need > bytes) {
      if (ptr) CUDA_CHECK(cudaFree(ptr));
      ptr = nullptr;
      CUDA_CHECK(cudaMalloc(&ptr, need));
      bytes = need;
    }
    return ptr;
  }
  void free() {
    if (ptr) CUDA_CHECK(cudaFree(ptr));
    ptr = nullptr;
    bytes = 0;
  }
};
Scratch g_partials, g_result, g_scratch;

// Launch geometry of a box (plan in stencil.hpp).
struct Geometry {
  dim3 grid, block;
  long span;
  long blocks() const { return long(grid.x) * grid.y * grid.z; }
};

Geometry geometry(const Box& b) {
  const cuda::LaunchPlan p = cuda::plan_launch(b, g_sm_count);
  return {dim3(unsigned(p.gx), unsigned(p.gy), unsigned(p.gz)), dim3(kBlockK, kBlockJ, 1), p.span};
}

__device__ inline cuda::ThreadIds thread_ids() {
  return {long(blockIdx.x), long(blockIdx.y), long(blockIdx.z), long(threadIdx.x), long(threadIdx.y), long(gridDim.y)};
}

// ---------------------------------------------------------------------------- updates

// H^{n+1/2} = H^{n-1/2} - c curl E^n. With kEnergy, also the sums of |E^n|^2 and
// H^{n-1/2}.H^{n+1/2} (one double2 per block in `partials`).
template <typename T, bool kEnergy>
__global__ void __launch_bounds__(kBlockK* kBlockJ, kMinBlocks)
    h_kernel(DevFields<T> f, Box b, long span, T c, double2* partials) {
  double se = 0.0, sh = 0.0;
  cuda::h_thread<T, kEnergy>(f, b, span, c, thread_ids(), se, sh);
  if (kEnergy) {
    // Fixed-shape tree over the block: same order on every run.
    __shared__ double s_e[kBlockK * kBlockJ], s_h[kBlockK * kBlockJ];
    const int t = threadIdx.y * kBlockK + threadIdx.x;
    s_e[t] = se;
    s_h[t] = sh;
    __syncthreads();
    for (int w = kBlockK * kBlockJ / 2; w > 0; w /= 2) {
      if (t < w) {
        s_e[t] += s_e[t + w];
        s_h[t] += s_h[t + w];
      }
      __syncthreads();
    }
    if (t == 0)
      partials[(long(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] = make_double2(s_e[0], s_h[0]);
  }
}

// E^{n+1} = E^n + c curl H^{n+1/2}, then PEC: tangential E on the walls at global index 0 is 0.
template <typename T>
__global__ void __launch_bounds__(kBlockK* kBlockJ, kMinBlocks) e_kernel(DevFields<T> f, Box b, long span, T c) {
  cuda::e_thread<T>(f, b, span, c, thread_ids());
}

// One sweep of H^{n+1/2} and E^{n+1} (src -> dst), copies D planes ahead: the block program
// of fused_block.hpp with one barrier per plane. tests/cuda_fused_emulator.hpp (run_fused)
// repeats this schedule on the host. Any tile of 1 .. 32 rows (32 threads per row): the
// register cap is that of 1024 threads (64); ptxas -v: NOTES-cuda.md, "Fused kernel, pipelined".
template <typename T, int D>
__global__ void __launch_bounds__(cuda::kFusedMaxThreads, 1) fused_kernel(cuda::FusedArgs<T> a) {
  constexpr int K = cuda::fused_cached_pieces<T>();
  extern __shared__ __align__(16) unsigned char smem[];
  const cuda::FusedShared<T> s = cuda::fused_shared<T>(reinterpret_cast<T*>(smem), int(a.rows), D);
  const int tid = int(threadIdx.x), nthreads = int(blockDim.x);
  cuda::AsyncCopy mv;
  for (long tj = blockIdx.y; tj < a.tiles_j; tj += gridDim.y) {
    const cuda::FusedTile t = cuda::fused_tile(a, long(blockIdx.x), tj, long(blockIdx.z));
    const cuda::FusedGeom<T> geom = cuda::fused_geom(a, t);
    const cuda::FusedPieces<T, K> pieces = cuda::fused_pieces<T, K>(a, t, geom, tid, nthreads);
    const cuda::FusedThread th = cuda::fused_thread(a, t, tid, nthreads);
    cuda::FusedCell<T> cell = cuda::fused_cell(a, t, tid);
    __syncthreads();  // the previous tile's last reads are done before its buffers refill
    cuda::fused_copy_group<T, D>(a, s, t, geom, pieces, -1, th.h_end, tid, nthreads, mv);
    for (int g = 0; g < D; ++g) {
      cuda::fused_copy_group<T, D>(a, s, t, geom, pieces, g, th.h_end, tid, nthreads, mv);
      mv.commit();
    }
    for (int it = 0; it < th.iterations; ++it) {
      mv.wait<D - 1>();
      __syncthreads();  // group `it` has landed everywhere; the previous iteration's reads are done
      cuda::fused_copy_group<T, D>(a, s, t, geom, pieces, it + D, th.h_end, tid, nthreads, mv);
      mv.commit();
      cuda::fused_iteration<T, D>(a, s, th, it, cell);
    }
  }
}

// One block sums the per-block partials in a fixed order.
__global__ void sum_partials(const double2* partials, long n, double2* out) {
  __shared__ double s_e[kReduceThreads], s_h[kReduceThreads];
  double e = 0.0, h = 0.0;
  for (long q = threadIdx.x; q < n; q += kReduceThreads) {
    e += partials[q].x;
    h += partials[q].y;
  }
  s_e[threadIdx.x] = e;
  s_h[threadIdx.x] = h;
  __syncthreads();
  for (int w = kReduceThreads / 2; w > 0; w /= 2) {
    if (int(threadIdx.x) < w) {
      s_e[threadIdx.x] += s_e[threadIdx.x + w];
      s_h[threadIdx.x] += s_h[threadIdx.x + w];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = make_double2(s_e[0], s_h[0]);
}

// The contract's update calls return with the work done, so the solver's phase timers
// measure the kernels, not their launches.
void finish() { CUDA_CHECK(cudaDeviceSynchronize()); }

template <typename T>
void launch_h(Fields<T>& f, const Box& box, T c, EnergySums* sums) {
  if (box.empty()) return;
  const Geometry g = geometry(box);
  if (sums) {
    auto* partials = static_cast<double2*>(g_partials.get(sizeof(double2) * std::size_t(g.blocks())));
    auto* result = static_cast<double2*>(g_result.get(sizeof(double2)));
    h_kernel<T, true><<<g.grid, g.block>>>(dev(f), box, g.span, c, partials);
    CUDA_CHECK_LAUNCH("h_kernel<energy>");
    sum_partials<<<1, kReduceThreads>>>(partials, g.blocks(), result);
    CUDA_CHECK_LAUNCH("sum_partials");
    double2 host;
    CUDA_CHECK(cudaMemcpy(&host, result, sizeof host, cudaMemcpyDeviceToHost));
    sums->e2 += host.x;
    sums->hh += host.y;
  } else {
    h_kernel<T, false><<<g.grid, g.block>>>(dev(f), box, g.span, c, nullptr);
    CUDA_CHECK_LAUNCH("h_kernel");
  }
}

template <typename T>
void launch_e(Fields<T>& f, const Box& box, T c) {
  if (box.empty()) return;
  const Geometry g = geometry(box);
  e_kernel<T><<<g.grid, g.block>>>(dev(f), box, g.span, c);
  CUDA_CHECK_LAUNCH("e_kernel");
}

template <typename T>
Box owned_box(const Fields<T>& f) {
  return Box{{1, 1, 1}, {f.n[0] + 1, f.n[1] + 1, f.n[2] + 1}};
}

// The two copies of the fields (comp pointers as allocate() sets them): the fused kernel
// reads the current one and writes the other, then comp is swapped; release() frees both.
struct Copies {
  void* set[2][6];
  long slack;  // elements from an allocation's start to comp (Layout), for cudaFree
};
std::vector<Copies> g_copies;

template <typename T>
Copies* copies_of(const Fields<T>& f) {
  for (auto& c : g_copies)
    if (c.set[0][0] == f.comp[0] || c.set[1][0] == f.comp[0]) return &c;
  return nullptr;
}

// The fused kernel's pipeline depth (planes of copies in flight): YEE_CUDA_FUSED_DEPTH=1..3,
// a measurement aid (bench/run_cuda_bench.py: fused:depth=N), else kFusedDefaultDepth.
int fused_depth() {
  static const int depth = [] {
    const char* v = std::getenv("YEE_CUDA_FUSED_DEPTH");
    if (!v || !*v) return cuda::kFusedDefaultDepth;
    if (v[1] != '\0' || v[0] < '1' || v[0] > '0' + cuda::kFusedMaxDepth)
      throw UsageError(std::string("YEE_CUDA_FUSED_DEPTH=") + v + ": the fused kernel's depth is 1, 2 or 3");
    return v[0] - '0';
  }();
  return depth;
}

template <typename T>
long fused_rows(const Fields<T>& f) {
  if (f.tile > 0) return f.tile;
  long rows = cuda::fused_default_rows<T>();  // halved until a block fits (GPUs with less shared memory)
  while (rows > 1 && cuda::fused_smem_bytes<T>(rows, fused_depth()) > g_smem_optin) rows /= 2;
  return rows;
}

template <typename T>
using FusedKernel = void (*)(cuda::FusedArgs<T>);

template <typename T>
FusedKernel<T> fused_kernel_of(int depth) {
  return depth == 1 ? fused_kernel<T, 1> : depth == 2 ? fused_kernel<T, 2> : fused_kernel<T, 3>;
}

// Blocks of the fused kernel resident per SM at this tile size (for the launch plan).
template <typename T>
long fused_blocks_per_sm(long rows) {
  static long cached_rows = -1, cached = 1;
  if (rows != cached_rows) {
    const std::size_t smem = cuda::fused_smem_bytes<T>(rows, fused_depth());
    const FusedKernel<T> k = fused_kernel_of<T>(fused_depth());
    CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    int n = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, int(cuda::kBlockK * rows), smem));
    cached_rows = rows;
    cached = std::max(n, 1);
  }
  return cached;
}

// The copy of the fields that is not current.
template <typename T>
Fields<T> other_of(const Fields<T>& f) {
  const Copies* cp = copies_of(f);
  if (!cp) throw std::logic_error("CUDA backend: fields not allocated by this backend");
  const int cur = cp->set[0][0] == f.comp[0] ? 0 : 1;
  Fields<T> next = f;
  for (int q = 0; q < 6; ++q) next.comp[q] = static_cast<T*>(cp->set[1 - cur][q]);
  return next;
}

// H everywhere in `owned`, E in `core` (E^n copied on the deferred faces), from the
// current copy into the other; then the other becomes the current one.
template <typename T>
void launch_fused(Fields<T>& f, const cuda::FusedSplit& split, T c) {
  for (int q = 0; q < 3; ++q)  // the ring's H on the index-0 ghosts must only feed walls and deferred faces
    if (f.goff[q] > 0 && !f.defer_low[q]) throw std::logic_error("fused kernel: a low face off the wall is not deferred");
  const Fields<T> next = other_of(f);
  const long rows = fused_rows(f);
  const cuda::FusedPlan plan = cuda::plan_fused(split.owned, rows, g_sm_count, fused_blocks_per_sm<T>(rows));
  if (plan.blocks() > 0) {
    cuda::FusedArgs<T> a{dev(f), dev(next), split.owned, split.core, rows, plan.tiles_j, plan.span, c};
    fused_kernel_of<T>(fused_depth())<<<dim3(unsigned(plan.gx), unsigned(plan.gy), unsigned(plan.gz)),
                                        unsigned(cuda::kBlockK * rows),
                                        cuda::fused_smem_bytes<T>(rows, fused_depth())>>>(a);
    CUDA_CHECK_LAUNCH("fused_kernel");
  }
  for (int q = 0; q < 6; ++q) f.comp[q] = next.comp[q];
}

// ---------------------------------------------------------------------------- small kernels

template <typename T>
__global__ void add_kernel(T* x, T v) {
  *x = T(*x + v);
}

template <typename T>
__device__ inline T all_ones() {  // a NaN
  if constexpr (sizeof(T) == 4) {
    return __int_as_float(-1);
  } else {
    return __longlong_as_double(-1LL);
  }
}

// NaN in the row padding (entries k = n2+g2+1 .. sy-g2 of every row, Layout in stencil.hpp).
template <typename T>
__global__ void poison_padding(T* a, long i_lo, long j_lo, long nj, long rows, long sx, long sy, long pad_lo,
                               long pad_hi) {
  const long r = long(blockIdx.x) * blockDim.y + threadIdx.y;
  if (r >= rows) return;
  T* row = a + (i_lo + r / nj) * sx + (j_lo + r % nj) * sy;
  for (long k = pad_lo + threadIdx.x; k < pad_hi; k += blockDim.x) row[k] = all_ones<T>();
}

// Every component in a box (ghosts allowed), in (comp, i, j, k) order: to (kPack) or from
// a contiguous buffer (pack_box / unpack_box of the wavefront kernel's deep halo).
template <typename T, bool kPack>
__global__ void box_kernel(DevFields<T> f, Box b, T* buf) {
  const long nk = b.hi[2] - b.lo[2], nj = b.hi[1] - b.lo[1], ni = b.hi[0] - b.lo[0];
  const long k = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= nk) return;
  for (long r = long(blockIdx.y) * blockDim.y + threadIdx.y; r < 6 * ni * nj; r += long(gridDim.y) * blockDim.y) {
    const int c = int(r / (ni * nj));
    const long i = b.lo[0] + (r / nj) % ni, j = b.lo[1] + r % nj;
    T* comp = c == 0 ? f.ex : c == 1 ? f.ey : c == 2 ? f.ez : c == 3 ? f.hx : c == 4 ? f.hy : f.hz;
    T& x = comp[i * f.sx + j * f.sy + b.lo[2] + k];
    if (kPack)
      buf[r * nk + k] = x;
    else
      x = buf[r * nk + k];
  }
}

using cuda::Face;
using cuda::face_of;

template <typename T, bool kPack>
__global__ void face_kernel(Face fc, T* c0, T* c1, T* buf) {
  const long v = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= fc.nb) return;
  const long face = fc.na * fc.nb;
  for (long u = long(blockIdx.y) * blockDim.y + threadIdx.y; u < fc.na; u += long(gridDim.y) * blockDim.y) {
    const long q = u * fc.nb + v;
    const long o = fc.offset(u, v);
    if (kPack) {
      buf[q] = c0[o];
      buf[face + q] = c1[o];
    } else {
      c0[o] = buf[q];
      c1[o] = buf[face + q];
    }
  }
}

template <typename T, bool kPack>
void launch_face(const Fields<T>& f, int axis, long layer, int comp0, int comp1, T* buf) {
  const Face fc = face_of(f, axis, layer);
  if (fc.na * fc.nb == 0) return;
  const dim3 block(64, 4);
  const dim3 grid(unsigned((fc.nb + 63) / 64), unsigned(std::min<long>((fc.na + 3) / 4, 65535)));
  face_kernel<T, kPack><<<grid, block>>>(fc, f.comp[comp0], f.comp[comp1], buf);
  CUDA_CHECK_LAUNCH("face_kernel");
  finish();  // the message is complete (pack) / free for the next receive (unpack) on return
}

// Sum over owned entries of all six components, wrapping uint64: order-free.
template <typename T>
__global__ void checksum_kernel(DevFields<T> f, Box b, long span, std::uint64_t g1, std::uint64_t g2,
                                unsigned long long* out) {
  std::uint64_t sum = cuda::checksum_thread(f, b, span, g1, g2, thread_ids());
  for (int d = 16; d > 0; d /= 2) sum += __shfl_down_sync(0xffffffffu, sum, d);
  if (threadIdx.x == 0) atomicAdd(out, static_cast<unsigned long long>(sum));
}

// max |div E| and max |E|. Non-negative doubles order like their bit patterns, so an
// integer atomicMax is exact.
template <typename T>
__global__ void div_kernel(DevFields<T> f, Box b, long span, unsigned long long* out) {
  double dm = 0.0, em = 0.0;
  cuda::div_thread(f, b, span, thread_ids(), dm, em);
  for (int d = 16; d > 0; d /= 2) {
    dm = fmax(dm, __shfl_down_sync(0xffffffffu, dm, d));
    em = fmax(em, __shfl_down_sync(0xffffffffu, em, d));
  }
  if (threadIdx.x == 0) {
    atomicMax(&out[0], static_cast<unsigned long long>(__double_as_longlong(dm)));
    atomicMax(&out[1], static_cast<unsigned long long>(__double_as_longlong(em)));
  }
}

// Host <-> device copies of the owned entries (local (i, j, k) row-major, k fastest).
template <typename T>
void copy_owned_planes(const Fields<T>& f, int comp, T* host, bool to_host) {
  const std::size_t w = sizeof(T) * std::size_t(f.n[2]), dpitch = sizeof(T) * std::size_t(f.sy);
  for (long i = 1; i <= f.n[0]; ++i) {
    T* d = f.comp[comp] + f.at(i, 1, 1);
    T* h = host + std::size_t(i - 1) * std::size_t(f.n[1]) * std::size_t(f.n[2]);
    if (to_host)
      CUDA_CHECK(cudaMemcpy2D(h, w, d, dpitch, w, std::size_t(f.n[1]), cudaMemcpyDeviceToHost));
    else
      CUDA_CHECK(cudaMemcpy2D(d, dpitch, h, w, w, std::size_t(f.n[1]), cudaMemcpyHostToDevice));
  }
}

}  // namespace

const char* backend_name() { return "cuda"; }

// The fused kernel (the default): read E and H once, write them once. The split kernels
// move 18 (H sweep: read 6, write 3; E sweep: read 6, write 3).
int traffic_words_per_cell() { return 12; }

std::string select_device(int local_rank, int local_size, bool gpu_per_rank) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA backend: no usable GPU (cudaGetDeviceCount: ") +
                             cudaGetErrorString(e) + ")");
  if (count < 1) throw std::runtime_error("CUDA backend: no GPU visible to this process");
  // One visible device per rank usually means the launcher bound it (CUDA_VISIBLE_DEVICES,
  // srun --gpus-per-task): accept that; otherwise the node's ranks need count >= ranks.
  if (gpu_per_rank && count > 1 && local_size > count)
    throw std::runtime_error("--gpu-per-rank: " + std::to_string(local_size) + " ranks on this node but " +
                             std::to_string(count) + " GPU(s)");
  const int device = local_rank % count;
  CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  g_sm_count = p.multiProcessorCount;
  g_smem_optin = p.sharedMemPerBlockOptin;
  g_device_name = p.name;
  return std::string(p.name) + " (device " + std::to_string(device) + " of " + std::to_string(count) + ", sm_" +
         std::to_string(p.major) + std::to_string(p.minor) + ")";
}

bool messages_on_device() { return true; }

void* alloc_message(std::size_t bytes) {
  void* p = nullptr;
  if (cudaMalloc(&p, std::max<std::size_t>(bytes, 16)) != cudaSuccess) {
    (void)cudaGetLastError();
    throw std::bad_alloc();
  }
  CUDA_CHECK(cudaMemset(p, poison() ? 0xff : 0, std::max<std::size_t>(bytes, 16)));
  return p;
}

void free_message(void* p) {
  if (p) CUDA_CHECK(cudaFree(p));
}

void message_to_host(void* host, const void* msg, std::size_t bytes) {
  CUDA_CHECK(cudaMemcpy(host, msg, bytes, cudaMemcpyDeviceToHost));
}

void message_from_host(void* msg, const void* host, std::size_t bytes) {
  CUDA_CHECK(cudaMemcpy(msg, host, bytes, cudaMemcpyHostToDevice));
}

namespace {

std::string gib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f GiB", bytes / 1073741824.0);
  return b;
}

// Bad input that only the device can judge, refused before anything is allocated: a
// --tile whose block needs more shared memory than the GPU has, a grid larger than the
// GPU's free memory. (Any row count is a tile: the rows are spread over the block's rows
// of threads, and tiles at the grid's edge are cut.)
template <typename T>
void check_fits(const Fields<T>& f, std::size_t bytes_per_array) {
  const char* prec = sizeof(T) == 4 ? "f32" : "f64";
  if (fused_rows(f) > cuda::kFusedMaxRows)
    throw UsageError("--tile " + std::to_string(fused_rows(f)) + ": the fused kernel's tiles have at most " +
                     std::to_string(cuda::kFusedMaxRows) + " rows (a thread per cell, " +
                     std::to_string(cuda::kFusedMaxThreads) + " per block)");
  const std::size_t smem = cuda::fused_smem_bytes<T>(fused_rows(f), fused_depth());
  if (smem > g_smem_optin)
    throw UsageError("--tile " + std::to_string(fused_rows(f)) + ": the fused kernel's tile of that many rows needs " +
                     std::to_string(smem / 1024) + " KiB of shared memory per block in " + prec + ", more than the " +
                     std::to_string(g_smem_optin / 1024) + " KiB " + g_device_name + " allows");
  if (cuda_backend::wavefront_requested()) {
    const long rows = f.tile > 0 ? f.tile : cuda_backend::sweep_default_rows<T>();
    const std::size_t need = cuda_backend::sweep_smem_bytes<T>(rows);
    if (need > g_smem_optin)
      throw UsageError("--tile " + std::to_string(rows) + ": the wavefront kernel's tile of that many rows needs " +
                       std::to_string(need / 1024) + " KiB of shared memory per block in " + prec + ", more than the " +
                       std::to_string(g_smem_optin / 1024) + " KiB " + g_device_name + " allows");
  }
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const double need = 12.0 * double(bytes_per_array);
  if (need > double(free_b))
    throw UsageError("grid block " + std::to_string(f.n[0]) + "x" + std::to_string(f.n[1]) + "x" +
                     std::to_string(f.n[2]) + " (" + prec + ") needs " + gib(need) +
                     " of GPU memory (E and H twice: the fused kernel writes each step into a second copy), more than "
                     "the " + gib(double(free_b)) + " free on " + g_device_name);
}

}  // namespace

template <typename T>
void allocate(Fields<T>& f) {
  for (long& g : f.ghost) g = std::max<long>(1, g);
  const cuda::Layout l = cuda::layout_of<T>(f.n, f.ghost);
  f.sy = l.sy;
  f.sx = l.sx;
  f.count = std::size_t(l.count);
  const std::size_t bytes = std::size_t(l.elems) * sizeof(T);
  check_fits(f, bytes);
  Copies cp{};
  for (int set = 0; set < 2; ++set)
    for (int c = 0; c < 6; ++c) {
      void* p = nullptr;
      if (cudaMalloc(&p, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        for (auto& row : cp.set)
          for (void* q : row)
            if (q) CUDA_CHECK(cudaFree(static_cast<T*>(q) - l.slack));
        throw std::bad_alloc();
      }
      // Shifted so that owned k = 1 of every row starts a 128-byte line (cudaMalloc is 256 B aligned).
      T* comp = static_cast<T*>(p) + l.slack;
      cp.set[set][c] = comp;
      CUDA_CHECK(cudaMemset(p, 0, bytes));
      if (poison()) {
        const long low = (1 - f.ghost[0]) * l.sx + (1 - f.ghost[1]) * l.sy + (1 - f.ghost[2]);  // lowest entry
        CUDA_CHECK(cudaMemset(p, 0xff, sizeof(T) * std::size_t(l.slack + low)));
        const long nj = f.n[1] + 2 * f.ghost[1], rows = (f.n[0] + 2 * f.ghost[0]) * nj;
        poison_padding<T><<<unsigned((rows + 7) / 8), dim3(32, 8)>>>(comp, 1 - f.ghost[0], 1 - f.ghost[1], nj, rows,
                                                                    l.sx, l.sy, f.n[2] + f.ghost[2] + 1,
                                                                    l.sy - f.ghost[2] + 1);
        CUDA_CHECK_LAUNCH("poison_padding");
      }
    }
  cp.slack = l.slack;
  for (int c = 0; c < 6; ++c) f.comp[c] = static_cast<T*>(cp.set[0][c]);
  g_copies.push_back(cp);
  finish();
}

template <typename T>
void release(Fields<T>& f) {
  for (auto it = g_copies.begin(); it != g_copies.end(); ++it)
    if (it->set[0][0] == f.comp[0] || it->set[1][0] == f.comp[0]) {
      for (auto& row : it->set)
        for (void* q : row) CUDA_CHECK(cudaFree(static_cast<T*>(q) - it->slack));
      g_copies.erase(it);
      break;
    }
  for (auto& p : f.comp) p = nullptr;
  g_partials.free();
  g_result.free();
  g_scratch.free();
}

template <typename T>
void init_e(Fields<T>& f, InitFn fn, const void* ctx) {
  // The formulas are host callbacks: evaluate on the host, then copy the owned entries up.
  std::vector<T> host(std::size_t(f.n[0]) * std::size_t(f.n[1]) * std::size_t(f.n[2]));
  for (int c = 0; c < 3; ++c) {
#pragma omp parallel for collapse(2)
    for (long i = 1; i <= f.n[0]; ++i)
      for (long j = 1; j <= f.n[1]; ++j)
        for (long k = 1; k <= f.n[2]; ++k)
          host[(std::size_t(i - 1) * std::size_t(f.n[1]) + std::size_t(j - 1)) * std::size_t(f.n[2]) +
               std::size_t(k - 1)] = T(fn(ctx, c, f.goff[0] + i - 1, f.goff[1] + j - 1, f.goff[2] + k - 1));
    copy_owned_planes(f, c, host.data(), false);
  }
}

template <typename T>
void update_h(Fields<T>& f, const Box& box, T c, EnergySums* sums) {
  launch_h(f, box, c, sums);
  finish();
}

template <typename T>
void update_e(Fields<T>& f, const Box& box, T c) {
  launch_e(f, box, c);
  finish();
}

// The contract's fused pair: one sweep of the fused kernel (H over the owned box, E away
// from the deferred faces, into the other copy, which becomes the current one); then E on
// the deferred slabs in place (the same split as the CPU's plan, so the values equal
// update_h + update_e).
template <typename T>
void fused_part1(Fields<T>& f, T c) {
  launch_fused(f, cuda::fused_split(f), c);
  finish();
}

template <typename T>
void fused_part2(Fields<T>& f, T c) {
  const cuda::FusedSplit s = cuda::fused_split(f);
  for (int a = 0; a < 3; ++a)
    if (s.has_slab[a]) launch_e(f, s.slab[a], c);
  finish();
}

template <typename T>
void add_to(Fields<T>& f, int comp, long i, long j, long k, double value) {
  add_kernel<T><<<1, 1>>>(f.comp[comp] + f.at(i, j, k), T(value));
  CUDA_CHECK_LAUNCH("add_kernel");
}

template <typename T>
double read(const Fields<T>& f, int comp, long i, long j, long k) {
  T v;
  CUDA_CHECK(cudaMemcpy(&v, f.comp[comp] + f.at(i, j, k), sizeof v, cudaMemcpyDeviceToHost));
  return double(v);
}

template <typename T>
std::size_t pack(const Fields<T>& f, int axis, long layer, int comp0, int comp1, T* buf) {
  launch_face<T, true>(f, axis, layer, comp0, comp1, buf);
  return std::size_t(2 * f.n[axis == 0 ? 1 : 0] * f.n[axis == 2 ? 1 : 2]);
}

template <typename T>
void unpack(Fields<T>& f, int axis, long layer, int comp0, int comp1, const T* buf) {
  launch_face<T, false>(f, axis, layer, comp0, comp1, const_cast<T*>(buf));
}

template <typename T>
void copy_owned(const Fields<T>& f, int comp, T* out) {
  copy_owned_planes(f, comp, out, true);
}

template <typename T>
std::uint64_t checksum(const Fields<T>& f) {
  const Box b = owned_box(f);
  const Geometry g = geometry(b);
  auto* out = static_cast<unsigned long long*>(g_result.get(2 * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMemset(out, 0, sizeof(unsigned long long)));
  checksum_kernel<T><<<g.grid, g.block>>>(dev(f), b, g.span, std::uint64_t(f.gn[1] + 1), std::uint64_t(f.gn[2] + 1),
                                          out);
  CUDA_CHECK_LAUNCH("checksum_kernel");
  unsigned long long host = 0;
  CUDA_CHECK(cudaMemcpy(&host, out, sizeof host, cudaMemcpyDeviceToHost));
  return std::uint64_t(host);
}

template <typename T>
void div_e(const Fields<T>& f, double* div_max, double* e_max) {
  const Box b = owned_box(f);
  const Geometry g = geometry(b);
  auto* out = static_cast<unsigned long long*>(g_result.get(2 * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMemset(out, 0, 2 * sizeof(unsigned long long)));
  div_kernel<T><<<g.grid, g.block>>>(dev(f), b, g.span, out);
  CUDA_CHECK_LAUNCH("div_kernel");
  unsigned long long host[2];
  CUDA_CHECK(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
  std::memcpy(div_max, &host[0], sizeof(double));
  std::memcpy(e_max, &host[1], sizeof(double));
}

// The wavefront kernel's deep halo: every component of a box (ghosts allowed), (comp, i,
// j, k) order, to or from host memory through device scratch.
template <typename T>
std::size_t pack_box(const Fields<T>& f, const Box& b, T* buf) {
  if (b.empty()) return 0;
  const long nk = b.hi[2] - b.lo[2], rows = 6 * (b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]);
  const std::size_t n = std::size_t(rows) * std::size_t(nk);
  T* d = static_cast<T*>(g_scratch.get(n * sizeof(T)));
  box_kernel<T, true><<<dim3(unsigned((nk + 63) / 64), unsigned(std::min<long>((rows + 3) / 4, 65535))), dim3(64, 4)>>>(
      dev(f), b, d);
  CUDA_CHECK_LAUNCH("box_kernel<pack>");
  CUDA_CHECK(cudaMemcpy(buf, d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return n;
}

template <typename T>
void unpack_box(Fields<T>& f, const Box& b, const T* buf) {
  if (b.empty()) return;
  const long nk = b.hi[2] - b.lo[2], rows = 6 * (b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]);
  const std::size_t n = std::size_t(rows) * std::size_t(nk);
  T* d = static_cast<T*>(g_scratch.get(n * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(d, buf, n * sizeof(T), cudaMemcpyHostToDevice));
  box_kernel<T, false><<<dim3(unsigned((nk + 63) / 64), unsigned(std::min<long>((rows + 3) / 4, 65535))), dim3(64, 4)>>>(
      dev(f), b, d);
  CUDA_CHECK_LAUNCH("box_kernel<unpack>");
  finish();
}

YEE_INSTANTIATE_CONTRACT(float)
YEE_INSTANTIATE_CONTRACT(double)
template std::size_t pack_box<float>(const Fields<float>&, const Box&, float*);
template std::size_t pack_box<double>(const Fields<double>&, const Box&, double*);
template void unpack_box<float>(Fields<float>&, const Box&, const float*);
template void unpack_box<double>(Fields<double>&, const Box&, const double*);

namespace cuda_backend {

int sm_count() { return g_sm_count; }
std::size_t smem_optin() { return g_smem_optin; }
const std::string& device_name() { return g_device_name; }
void finish() { kernels::finish(); }
void* scratch(std::size_t bytes) { return g_scratch.get(bytes); }
template <typename T>
void launch_h(Fields<T>& f, const Box& box, T c) {
  kernels::launch_h(f, box, c, nullptr);
}
template <typename T>
void launch_e(Fields<T>& f, const Box& box, T c) {
  kernels::launch_e(f, box, c);
}
template <typename T>
void launch_fused(Fields<T>& f, const cuda::FusedSplit& split, T c) {
  kernels::launch_fused(f, split, c);
}
template <typename T>
Fields<T> other_copy(const Fields<T>& f) {
  return other_of(f);
}
template <typename T>
long tile_rows(const Fields<T>& f, long default_rows) {
  return f.tile > 0 ? f.tile : default_rows;
}

#define YEE_CUDA_BACKEND_INSTANTIATE(T)                                   \
  template void launch_h<T>(Fields<T>&, const Box&, T);                   \
  template void launch_e<T>(Fields<T>&, const Box&, T);                   \
  template void launch_fused<T>(Fields<T>&, const cuda::FusedSplit&, T);  \
  template Fields<T> other_copy<T>(const Fields<T>&);                     \
  template long tile_rows<T>(const Fields<T>&, long);
YEE_CUDA_BACKEND_INSTANTIATE(float)
YEE_CUDA_BACKEND_INSTANTIATE(double)

}  // namespace cuda_backend

}  // namespace kernels
}  // namespace yee
