// yee-cuda-copy: measured device-memory bandwidth, the yardstick of the CUDA backend's
// benchmark (solver/bench/run_cuda_bench.py). Copies one device buffer into another
// (cudaMemcpy device-to-device, and a plain copy kernel) and reports the best of K
// repeats in GB/s, counting bytes read + bytes written. Buffers are far larger than the
// L2 cache, so this is DRAM/HBM bandwidth. Validates the copy and prints one JSON object.
//   yee-cuda-copy [--bytes N] [--repeats K]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "yee-cuda-copy: error: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t q = size_t(blockIdx.x) * blockDim.x + threadIdx.x; q < n; q += size_t(gridDim.x) * blockDim.x)
    out[q] = in[q];
}

__global__ void fill_kernel(float* a, size_t n) {
  for (size_t q = size_t(blockIdx.x) * blockDim.x + threadIdx.x; q < n; q += size_t(gridDim.x) * blockDim.x)
    a[q] = float(q % 1000003);
}

long parse(const char* flag, const char* v, long lo, long hi) {
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (!*v || *end || x < lo || x > hi) {
    std::fprintf(stderr, "yee-cuda-copy: error: %s: '%s' is not an integer in [%ld, %ld]\n", flag, v, lo, hi);
    std::exit(2);
  }
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  long bytes = 1L << 30, repeats = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help") {
      std::puts("usage: yee-cuda-copy [--bytes N (default 1 GiB, >= 16 MiB)] [--repeats K (default 20)]\n"
                "Best device-to-device copy bandwidth (read + written bytes per second) as JSON.");
      return 0;
    }
    if ((a == "--bytes" || a == "--repeats") && i + 1 < argc) {
      if (a == "--bytes") bytes = parse("--bytes", argv[++i], 1L << 24, 1L << 40) / 16 * 16;
      else repeats = parse("--repeats", argv[++i], 1, 100000);
    } else {
      std::fprintf(stderr, "yee-cuda-copy: error: unknown or incomplete argument '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  int dev = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp p;
  check(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
  float *a = nullptr, *b = nullptr;
  check(cudaMalloc(&a, size_t(bytes)), "cudaMalloc");
  check(cudaMalloc(&b, size_t(bytes)), "cudaMalloc");
  const size_t n = size_t(bytes) / sizeof(float);
  fill_kernel<<<4 * p.multiProcessorCount, 512>>>(a, n);
  check(cudaGetLastError(), "fill_kernel launch");
  cudaEvent_t t0, t1;
  check(cudaEventCreate(&t0), "cudaEventCreate");
  check(cudaEventCreate(&t1), "cudaEventCreate");
  double best_memcpy = 0.0, best_kernel = 0.0;
  for (long r = 0; r < repeats + 1; ++r) {  // the first of each is a warm-up
    float ms = 0.0f;
    check(cudaMemset(b, 0, size_t(bytes)), "cudaMemset");
    check(cudaEventRecord(t0), "cudaEventRecord");
    check(cudaMemcpy(b, a, size_t(bytes), cudaMemcpyDeviceToDevice), "cudaMemcpy D2D");
    check(cudaEventRecord(t1), "cudaEventRecord");
    check(cudaEventSynchronize(t1), "cudaEventSynchronize");
    check(cudaEventElapsedTime(&ms, t0, t1), "cudaEventElapsedTime");
    if (r > 0) best_memcpy = std::max(best_memcpy, 2.0 * double(bytes) / (ms * 1e-3) / 1e9);
    check(cudaEventRecord(t0), "cudaEventRecord");
    copy_kernel<<<8 * p.multiProcessorCount, 512>>>(reinterpret_cast<const float4*>(b), reinterpret_cast<float4*>(a),
                                                     n / 4);
    check(cudaGetLastError(), "copy_kernel launch");
    check(cudaEventRecord(t1), "cudaEventRecord");
    check(cudaEventSynchronize(t1), "cudaEventSynchronize");
    check(cudaEventElapsedTime(&ms, t0, t1), "cudaEventElapsedTime");
    if (r > 0) best_kernel = std::max(best_kernel, 2.0 * double(bytes) / (ms * 1e-3) / 1e9);
  }
  // Validate: a went to b and back, so both hold the fill pattern.
  bool valid = true;
  for (size_t q : {size_t(0), n / 3, n - 1}) {
    float va = 0.0f, vb = 0.0f;
    check(cudaMemcpy(&va, a + q, sizeof va, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    check(cudaMemcpy(&vb, b + q, sizeof vb, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    valid = valid && va == float(q % 1000003) && vb == va;
  }
  std::printf("{\"program\": \"yee-cuda-copy\", \"schema_version\": 1, \"valid\": %s, \"device\": \"%s\", "
              "\"sm_count\": %d, \"bytes\": %ld, \"repeats\": %ld, \"memcpy_gbs\": %.2f, \"kernel_copy_gbs\": %.2f, "
              "\"best_gbs\": %.2f}\n",
              valid ? "true" : "false", p.name, p.multiProcessorCount, bytes, repeats, best_memcpy, best_kernel,
              std::max(best_memcpy, best_kernel));
  cudaFree(a);
  cudaFree(b);
  return valid ? 0 : 1;
}
