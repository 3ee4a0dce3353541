#pragma once
// The checksum's per-entry hash, shared by every backend so that the same field gives the
// same checksum on any backend, decomposition and thread count: splitmix64 of the value's
// bits mixed with the entry's global index (summed with wrap-around, so order is free).
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define YEE_HD __host__ __device__
#else
#define YEE_HD
#endif

namespace yee {

YEE_HD inline std::uint64_t mix64(std::uint64_t x) {  // splitmix64 finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

template <typename T>
YEE_HD inline std::uint64_t bits_of(T v) {
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(T) == 4) {
    return std::uint64_t(__float_as_uint(v));
  } else {
    return std::uint64_t(__double_as_longlong(v));
  }
#else
  if constexpr (sizeof(T) == 4) {
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    return u;
  } else {
    std::uint64_t u;
    std::memcpy(&u, &v, 8);
    return u;
  }
#endif
}

// Hash of one entry: `entry` is (global cell index) * 6 + component.
template <typename T>
YEE_HD inline std::uint64_t entry_hash(T value, std::uint64_t entry) {
  return mix64(bits_of(value) ^ mix64(entry + 0x9e3779b97f4a7c15ULL));
}

}  // namespace yee
