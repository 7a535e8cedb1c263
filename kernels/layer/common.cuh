#pragma once

// What the decoder-layer kernels (layer.hpp; one file per job in this folder) share: the block
// size, 16-byte vector loads of eight 16-bit values, their 8-byte e4m3 stores, and the launchers'
// argument checks and type dispatch.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "../cuda_check.cuh"
#include "../layer.hpp"
#include "../tc_ptx.cuh"

namespace roofline::kernels::layer_common {

constexpr int kThreads = 256;

inline unsigned grid_for(std::int64_t tasks, int threads = kThreads) {
  const std::int64_t blocks = (tasks + threads - 1) / threads;
  return static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, 65535LL * 64));
}

// Eight 16-bit values in a uint4, as fp32 and back.
template <typename T>
__device__ __forceinline__ void unpack8(const uint4& v, float (&f)[8]) {
  const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t word = words[i];
    f[2 * i] = TraitsOf<T>::to_float(*reinterpret_cast<const T*>(&word));
    const uint32_t high = word >> 16;
    f[2 * i + 1] = TraitsOf<T>::to_float(*reinterpret_cast<const T*>(&high));
  }
}
template <typename T>
__device__ __forceinline__ uint4 pack8(const float (&f)[8]) {
  return make_uint4(TraitsOf<T>::pack(f[0], f[1]), TraitsOf<T>::pack(f[2], f[3]), TraitsOf<T>::pack(f[4], f[5]),
                    TraitsOf<T>::pack(f[6], f[7]));
}

// Eight values as e4m3 of value / scale (layer.hpp's e4m3 outputs), in 8 bytes.
__device__ __forceinline__ uint2 pack8_e4m3(const float (&f)[8], float scale) {
  uint32_t words[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const __nv_fp8x2_storage_t pair =
        __nv_cvt_float2_to_fp8x2(make_float2(f[2 * i] / scale, f[2 * i + 1] / scale), __NV_SATFINITE, __NV_E4M3);
    words[i] = static_cast<uint32_t>(pair);
  }
  return make_uint2(words[0] | (words[1] << 16), words[2] | (words[3] << 16));
}

// Eight results at vector index `i` of `out`: 16-bit T (16 bytes) or, with a scale, e4m3 (8 bytes).
template <typename T>
__device__ __forceinline__ void store8(void* out, std::int64_t i, const float (&f)[8], const float* e4m3_scale) {
  if (e4m3_scale != nullptr) {
    static_cast<uint2*>(out)[i] = pack8_e4m3(f, *e4m3_scale);
  } else {
    static_cast<uint4*>(out)[i] = pack8<T>(f);
  }
}

inline void require_aligned(const void* p, const char* what) {
  detail::require(p != nullptr && reinterpret_cast<std::uintptr_t>(p) % 16 == 0,
                  std::string(what) + ": pointers must be non-null and 16-byte aligned");
}

template <typename F>
void by_type(StorageFormat type, F&& f) {
  if (type == StorageFormat::bf16) {
    f(__nv_bfloat16{});
  } else {
    f(__half{});
  }
}

}  // namespace roofline::kernels::layer_common
