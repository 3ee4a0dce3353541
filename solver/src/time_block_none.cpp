// Backends without a wavefront kernel: the options reject --kernel wavefront before a run
// starts, so these are never reached; they only complete the link.
#include <stdexcept>

#include "time_block.hpp"

namespace yee {
namespace kernels {

namespace {
[[noreturn]] void unsupported() { throw std::runtime_error("the wavefront kernel needs the cpu backend"); }
}  // namespace

template <typename T> void time_block_pass(Fields<T>&, const PassPlan&, T) { unsupported(); }
template <typename T> std::size_t pack_box(const Fields<T>&, const Box&, T*) { unsupported(); }
template <typename T> void unpack_box(Fields<T>&, const Box&, const T*) { unsupported(); }
std::size_t cache_bytes_per_thread() { return 512 * 1024; }

YEE_INSTANTIATE_TIME_BLOCK(float)
YEE_INSTANTIATE_TIME_BLOCK(double)

}  // namespace kernels
}  // namespace yee
