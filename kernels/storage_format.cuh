#pragma once

// Device-side traits of the storage formats (storage_format.hpp) and the one dispatch from a
// run-time format to a kernel's template instantiation. A kernel is a template on its element
// type; StorageTraits<F> (or TraitsOf<Element>) gives it the conversions to and from fp32 and the
// tensor-core operand type of the format, so that a kernel written against the traits takes a new
// format by instantiation, not by editing it.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "compute_types.hpp"
#include "storage_format.hpp"

namespace roofline::kernels {

// The operand type a tensor-core instruction (mma.sync, wgmma) names for a format: its PTX
// spelling is given by ROOFLINE_WITH_PTX_TYPE (tc_ptx.cuh). 16-bit formats take k = 16 per
// instruction, 8-bit ones k = 32.
enum class TensorOperand : std::uint8_t { bf16, f16, e4m3, e5m2 };

template <StorageFormat F>
struct StorageTraits;

template <>
struct StorageTraits<StorageFormat::bf16> {
  using Element = __nv_bfloat16;
  static constexpr StorageFormat format = StorageFormat::bf16;
  static constexpr TensorOperand operand = TensorOperand::bf16;
  static constexpr int bits = 16;
  __device__ static __forceinline__ float to_float(Element v) { return __bfloat162float(v); }
  __device__ static __forceinline__ Element from_float(float v) { return __float2bfloat16_rn(v); }
  // Two elements in one 32-bit register, `lo` in the low half (the mma fragment layout).
  __device__ static __forceinline__ uint32_t pack(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
  __device__ static __forceinline__ float2 pair_to_float2(uint32_t bits) {
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&bits));
  }
};

template <>
struct StorageTraits<StorageFormat::fp16> {
  using Element = __half;
  static constexpr StorageFormat format = StorageFormat::fp16;
  static constexpr TensorOperand operand = TensorOperand::f16;
  static constexpr int bits = 16;
  __device__ static __forceinline__ float to_float(Element v) { return __half2float(v); }
  __device__ static __forceinline__ Element from_float(float v) { return __float2half_rn(v); }
  __device__ static __forceinline__ uint32_t pack(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
  __device__ static __forceinline__ float2 pair_to_float2(uint32_t bits) {
    return __half22float2(*reinterpret_cast<const __half2*>(&bits));
  }
};

// The fp8 formats: conversions round to nearest and saturate to the largest finite value (what
// quantised weights, activations and KV caches use). Two elements pack into 16 bits.
template <typename Fp8, __nv_fp8_interpretation_t Interpretation>
struct Fp8Traits {
  using Element = Fp8;
  static constexpr int bits = 8;
  __device__ static __forceinline__ float to_float(Element v) { return static_cast<float>(v); }
  __device__ static __forceinline__ Element from_float(float v) { return Element(v); }
  __device__ static __forceinline__ uint16_t pack(float lo, float hi) {
    return __nv_cvt_float2_to_fp8x2(make_float2(lo, hi), __NV_SATFINITE, Interpretation);
  }
  __device__ static __forceinline__ float2 pair_to_float2(uint16_t bits) {
    const __half2_raw raw = __nv_cvt_fp8x2_to_halfraw2(bits, Interpretation);
    return __half22float2(*reinterpret_cast<const __half2*>(&raw));
  }
};

template <>
struct StorageTraits<StorageFormat::fp8_e4m3> : Fp8Traits<__nv_fp8_e4m3, __NV_E4M3> {
  static constexpr StorageFormat format = StorageFormat::fp8_e4m3;
  static constexpr TensorOperand operand = TensorOperand::e4m3;
};

template <>
struct StorageTraits<StorageFormat::fp8_e5m2> : Fp8Traits<__nv_fp8_e5m2, __NV_E5M2> {
  static constexpr StorageFormat format = StorageFormat::fp8_e5m2;
  static constexpr TensorOperand operand = TensorOperand::e5m2;
};

// The format whose element type is `Element`: kernels are templates on the element type and find
// their traits through it (no primary definition: an element type without a format does not compile).
template <typename Element>
struct ElementFormat;
template <>
struct ElementFormat<__nv_bfloat16> {
  static constexpr StorageFormat value = StorageFormat::bf16;
};
template <>
struct ElementFormat<__half> {
  static constexpr StorageFormat value = StorageFormat::fp16;
};
template <>
struct ElementFormat<__nv_fp8_e4m3> {
  static constexpr StorageFormat value = StorageFormat::fp8_e4m3;
};
template <>
struct ElementFormat<__nv_fp8_e5m2> {
  static constexpr StorageFormat value = StorageFormat::fp8_e5m2;
};

template <typename Element>
using TraitsOf = StorageTraits<ElementFormat<Element>::value>;

// Four e4m3 values (the bytes of `word`, byte 0 first) as two pairs of 16-bit T (bf16 or fp16),
// .x holding bytes 0 and 1, .y bytes 2 and 3, each pair in the mma fragment layout (`lo` in the low
// half). Exact: every e4m3 value is a bf16 and an fp16. The sign stays and the 7 exponent-and-
// mantissa bits move to T's places (down 4 bits for bf16, 1 for fp16), which gives the value times
// 2^-(bias of T - 7), subnormals included; one exact multiply by 2^120 (bf16) or 2^8 (fp16) undoes
// it. Fewer instructions than cvt.rn.f16x2.e4m3x2 (for bf16 followed by two conversions through
// fp32), and no conversion instruction, which issues at a fraction of the integer rate: an fp8
// weight or KV-cache read widens a value per byte it streams from HBM.
template <typename T>
__device__ __forceinline__ uint2 e4m3x4_to_pairs(uint32_t word) {
  // __byte_perm selectors: byte 4 of (word, 0) is zero; 0x1404 places bytes 0 and 1 at bits 8-15
  // and 24-31, 0x3424 bytes 2 and 3.
  const uint32_t spread[2] = {__byte_perm(word, 0, 0x1404), __byte_perm(word, 0, 0x3424)};
  uint32_t out[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    if constexpr (ElementFormat<T>::value == StorageFormat::bf16) {
      const uint32_t bits = (spread[i] & 0x80008000U) | ((spread[i] >> 4) & 0x07F007F0U);
      const __nv_bfloat162 bias = __halves2bfloat162(__ushort_as_bfloat16(0x7B80), __ushort_as_bfloat16(0x7B80));
      const __nv_bfloat162 v = __hmul2(*reinterpret_cast<const __nv_bfloat162*>(&bits), bias);
      out[i] = *reinterpret_cast<const uint32_t*>(&v);
    } else {
      static_assert(ElementFormat<T>::value == StorageFormat::fp16, "e4m3 widens to bf16 or fp16");
      const uint32_t bits = (spread[i] & 0x80008000U) | ((spread[i] >> 1) & 0x3F803F80U);
      const __half2 bias = __halves2half2(__ushort_as_half(0x5C00), __ushort_as_half(0x5C00));
      const __half2 v = __hmul2(*reinterpret_cast<const __half2*>(&bits), bias);
      out[i] = *reinterpret_cast<const uint32_t*>(&v);
    }
  }
  return make_uint2(out[0], out[1]);
}

namespace detail {

template <StorageFormats Set>
constexpr StorageFormat first_format() {
  for (StorageFormat f : all_storage_formats) {
    if (Set.contains(f)) return f;
  }
  return StorageFormat::bf16;
}

template <StorageFormats Supported, std::size_t I, typename Result, typename Body>
Result dispatch_from(StorageFormat format, Body& body) {
  if constexpr (I == all_storage_formats.size()) {
    throw KernelError(std::string("this kernel is not instantiated for storage format ") +
                      std::string(name_of(format)));
  } else {
    constexpr StorageFormat candidate = all_storage_formats[I];
    if constexpr (Supported.contains(candidate)) {
      if (format == candidate) return body(StorageTraits<candidate>{});
    }
    return dispatch_from<Supported, I + 1, Result>(format, body);
  }
}

}  // namespace detail

// Calls body(StorageTraits<format>{}) for a format in `Supported` (the set a launcher's header
// publishes, so that a runner can tell a case is not supported before it launches); any other
// format throws KernelError, never falls back to another instantiation.
template <StorageFormats Supported, typename Body>
decltype(auto) dispatch_storage(StorageFormat format, Body&& body) {
  static_assert(Supported.bits != 0, "a kernel family is instantiated for at least one format");
  using Result = decltype(body(StorageTraits<detail::first_format<Supported>()>{}));
  return detail::dispatch_from<Supported, 0, Result>(format, body);
}

}  // namespace roofline::kernels
