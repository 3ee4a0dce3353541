#pragma once
// What the CUDA backend's two translation units share: kernels.cpp (the kernel contract)
// defines these, time_block.cpp (the wavefront kernel) uses them.
#include <cstddef>
#include <string>

#include "backends/cuda/fused_block.hpp"
#include "kernel_contract.hpp"

namespace yee {
namespace kernels {
namespace cuda_backend {

int sm_count();                 // of the selected device
std::size_t smem_optin();       // shared memory a block may have after cudaFuncSetAttribute
const std::string& device_name();
void finish();                  // waits for the device's work (faults reported here)
void* scratch(std::size_t bytes);  // device scratch of at least `bytes`, reused (freed by release())

// Split kernels over a box (ghosts allowed), in place.
template <typename T> void launch_h(Fields<T>& f, const Box& box, T c);
template <typename T> void launch_e(Fields<T>& f, const Box& box, T c);
// One fused sweep (H over split.owned, E over split.core), into the other copy, which
// becomes the current one.
template <typename T> void launch_fused(Fields<T>& f, const cuda::FusedSplit& split, T c);
// The copy the next sweep writes (comp of the copy that is not current).
template <typename T> Fields<T> other_copy(const Fields<T>& f);
// Tile rows (--tile, or the kernel's default) and blocks resident per SM, for the plans.
template <typename T> long tile_rows(const Fields<T>& f, long default_rows);

// Set by time_block.cpp when the time loop will run the wavefront kernel (it asks for the
// cache size first), so that allocate() also checks the wavefront kernel's shared memory.
bool wavefront_requested();
template <typename T> std::size_t sweep_smem_bytes(long rows);
template <typename T> long sweep_default_rows();

}  // namespace cuda_backend
}  // namespace kernels
}  // namespace yee
