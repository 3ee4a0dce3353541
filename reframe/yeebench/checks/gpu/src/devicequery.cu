// Device query: every visible GPU with the properties an acceptance sheet lists.
// Prints "devices N" and one "device ..." line per GPU; exit 1 when none is usable.
#include "check.cuh"

int main()
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        std::printf("devices 0 (%s) INVALID\n",
                    err != cudaSuccess ? cudaGetErrorString(err) : "no CUDA device visible");
        return 1;
    }
    int driver = 0, runtime = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    std::printf("devices %d driver %d runtime %d\n", count, driver, runtime);
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp p;
        CUDA_CHECK(cudaGetDeviceProperties(&p, d));
        int clock_khz = 0, mem_bus_bits = 0, mem_clock_khz = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, d));
        CUDA_CHECK(cudaDeviceGetAttribute(&mem_bus_bits, cudaDevAttrGlobalMemoryBusWidth, d));
        CUDA_CHECK(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, d));
        // DDR memory: two transfers per clock
        double peak_gbs = 2.0 * mem_clock_khz * 1e3 * (mem_bus_bits / 8.0) / 1e9;
        std::printf("device %d name \"%s\" cc %d.%d sms %d memory_GiB %.1f ecc %d "
                    "clock_MHz %d peak_mem_GBs %.0f pci %04x:%02x:%02x\n",
                    d, p.name, p.major, p.minor, p.multiProcessorCount,
                    p.totalGlobalMem / double(1 << 30), p.ECCEnabled, clock_khz / 1000, peak_gbs,
                    p.pciDomainID, p.pciBusID, p.pciDeviceID);
    }
    std::printf("devicequery VALID\n");
    return 0;
}
