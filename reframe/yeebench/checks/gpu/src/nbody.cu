// All-pairs N-body forces (paper 003's GPU acceptance test was an N-body code):
// one thread per body, positions staged through shared memory in tiles.
// Reports GFLOP/s with the customary 20 flops per interaction and checks a
// sample of bodies against a double-precision CPU sum.
// Usage: nbody [--bodies N] [--steps K]
#include "check.cuh"
#include <cmath>
#include <string>
#include <vector>

constexpr int TILE = 256;
constexpr float SOFTENING2 = 1e-3f;

__global__ void forces(const float4 *__restrict__ pos, float3 *__restrict__ acc, int n)
{
    __shared__ float4 tile[TILE];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float4 me = i < n ? pos[i] : make_float4(0, 0, 0, 0);
    float3 a = make_float3(0, 0, 0);
    for (int base = 0; base < n; base += TILE) {
        const int j = base + threadIdx.x;
        tile[threadIdx.x] = j < n ? pos[j] : make_float4(0, 0, 0, 0); // mass 0: no force
        __syncthreads();
        #pragma unroll 8
        for (int k = 0; k < TILE; ++k) {
            const float dx = tile[k].x - me.x, dy = tile[k].y - me.y, dz = tile[k].z - me.z;
            const float r2 = dx * dx + dy * dy + dz * dz + SOFTENING2;
            const float inv = rsqrtf(r2);
            const float s = tile[k].w * inv * inv * inv;
            a.x += dx * s; a.y += dy * s; a.z += dz * s;
        }
        __syncthreads();
    }
    if (i < n)
        acc[i] = a;
}

int main(int argc, char **argv)
{
    int n = 32768, steps = 10;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        long v = (i + 1 < argc) ? std::strtol(argv[i + 1], nullptr, 10) : 0;
        if ((arg == "--bodies" || arg == "--steps") && v > 0 && v < (1L << 26)) {
            (arg == "--bodies" ? n = int(v) : steps = int(v));
            ++i;
        } else {
            std::fprintf(stderr, "nbody: error: bad argument %s (use --bodies N --steps K)\n", argv[i]);
            return 2;
        }
    }
    std::vector<float4> pos(n);
    unsigned seed = 12345u;
    auto rnd = [&seed] { seed = seed * 1664525u + 1013904223u; return (seed >> 8) / float(1 << 24); };
    for (auto &p : pos)
        p = make_float4(rnd() * 2 - 1, rnd() * 2 - 1, rnd() * 2 - 1, 1.0f / n);
    float4 *dpos;
    float3 *dacc;
    CUDA_CHECK(cudaMalloc(&dpos, n * sizeof(float4)));
    CUDA_CHECK(cudaMalloc(&dacc, n * sizeof(float3)));
    CUDA_CHECK(cudaMemcpy(dpos, pos.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
    const int blocks = (n + TILE - 1) / TILE;
    forces<<<blocks, TILE>>>(dpos, dacc, n); // warm-up
    CUDA_CHECK(cudaGetLastError());
    cudaEvent_t t0, t1;
    CUDA_CHECK(cudaEventCreate(&t0));
    CUDA_CHECK(cudaEventCreate(&t1));
    CUDA_CHECK(cudaEventRecord(t0));
    for (int s = 0; s < steps; ++s)
        forces<<<blocks, TILE>>>(dpos, dacc, n);
    CUDA_CHECK(cudaEventRecord(t1));
    CUDA_CHECK(cudaEventSynchronize(t1));
    CUDA_CHECK(cudaGetLastError());
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
    std::vector<float3> acc(n);
    CUDA_CHECK(cudaMemcpy(acc.data(), dacc, n * sizeof(float3), cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int k = 0; k < 16; ++k) { // sampled bodies against a double-precision reference
        const int i = int((long long)k * n / 16);
        double ax = 0, ay = 0, az = 0;
        for (int j = 0; j < n; ++j) {
            const double dx = pos[j].x - pos[i].x, dy = pos[j].y - pos[i].y, dz = pos[j].z - pos[i].z;
            const double r2 = dx * dx + dy * dy + dz * dz + SOFTENING2;
            const double s = pos[j].w / (r2 * std::sqrt(r2));
            ax += dx * s; ay += dy * s; az += dz * s;
        }
        const double norm = std::sqrt(ax * ax + ay * ay + az * az) + 1e-30;
        const double err = std::sqrt((acc[i].x - ax) * (acc[i].x - ax) + (acc[i].y - ay) * (acc[i].y - ay) +
                                     (acc[i].z - az) * (acc[i].z - az)) / norm;
        worst = err > worst ? err : worst;
    }
    const bool ok = worst < 1e-3;
    const double interactions = double(n) * n * steps;
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device_name %s\n", prop.name);
    std::printf("interactions_per_s %.4g\n", interactions / (ms * 1e-3));
    std::printf("gflops %.1f\n", 20.0 * interactions / (ms * 1e-3) / 1e9);
    std::printf("nbody bodies %d steps %d max_rel_error %.2e %s\n", n, steps, worst, ok ? "VALID" : "INVALID");
    CUDA_CHECK(cudaFree(dpos));
    CUDA_CHECK(cudaFree(dacc));
    return ok ? 0 : 1;
}
