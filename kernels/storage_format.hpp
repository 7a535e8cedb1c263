#pragma once

// The storage formats of kernel operands (weights, activations, KV caches): what a launcher takes
// at run time to pick its template instantiation. Plain C++ (host callers include it without any
// CUDA header); the device-side traits of each format are in storage_format.cuh.

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "roofline/core/dtype.hpp"

namespace roofline::kernels {

// int4_g128: 4-bit weights, two per byte, with one 16-bit scale per group of 128 and no zero point
// (symmetric; the layout of the GEMV that reads them is in gemv.hpp); only weights are stored so.
enum class StorageFormat : std::uint8_t { bf16, fp16, fp8_e4m3, fp8_e5m2, int4_g128 };

inline constexpr std::array<StorageFormat, 5> all_storage_formats{StorageFormat::bf16, StorageFormat::fp16,
                                                                  StorageFormat::fp8_e4m3, StorageFormat::fp8_e5m2,
                                                                  StorageFormat::int4_g128};

[[nodiscard]] constexpr std::string_view name_of(StorageFormat format) {
  switch (format) {
    case StorageFormat::bf16: return "bf16";
    case StorageFormat::fp16: return "fp16";
    case StorageFormat::fp8_e4m3: return "fp8_e4m3";
    case StorageFormat::fp8_e5m2: return "fp8_e5m2";
    case StorageFormat::int4_g128: return "int4_g128";
  }
  return "?";
}

// Bits of one element's value (a group-scaled format's scales not counted).
[[nodiscard]] constexpr int bits_of(StorageFormat format) {
  switch (format) {
    case StorageFormat::bf16:
    case StorageFormat::fp16: return 16;
    case StorageFormat::fp8_e4m3:
    case StorageFormat::fp8_e5m2: return 8;
    case StorageFormat::int4_g128: return 4;
  }
  return 0;
}

// A group-scaled format's elements per scale and bits per scale (0 for the others). What W moves is
// bits_of + group_scale_bits_of / group_of per element: the model's bytes_per_element of the same
// dtype (core/dtype.cpp; a unit test holds the two equal).
[[nodiscard]] constexpr int group_of(StorageFormat format) {
  return format == StorageFormat::int4_g128 ? 128 : 0;
}
[[nodiscard]] constexpr int group_scale_bits_of(StorageFormat format) {
  return format == StorageFormat::int4_g128 ? 16 : 0;
}

// Bytes of one element in memory, for the formats that hold whole bytes per element (not
// int4_g128, two elements per byte: size its buffers with bits_of).
[[nodiscard]] constexpr int bytes_of(StorageFormat format) {
  if (bits_of(format) % 8 != 0) throw std::logic_error("a 4-bit storage format has no whole bytes per element");
  return bits_of(format) / 8;
}

// The storage format a model dtype is held in, or nothing where no kernel stores it element by
// element (fp32 and wider, integers, block-scaled formats).
[[nodiscard]] constexpr std::optional<StorageFormat> storage_format_of(DType dtype) {
  switch (dtype) {
    case DType::bf16: return StorageFormat::bf16;
    case DType::fp16: return StorageFormat::fp16;
    case DType::fp8_e4m3: return StorageFormat::fp8_e4m3;
    case DType::fp8_e5m2: return StorageFormat::fp8_e5m2;
    case DType::int4_g128: return StorageFormat::int4_g128;
    default: return std::nullopt;
  }
}

// A set of storage formats: those a kernel family is instantiated for. A structural type, so that
// the device-side dispatch (storage_format.cuh) takes the same set as a template argument.
struct StorageFormats {
  std::uint8_t bits = 0;

  constexpr StorageFormats(std::initializer_list<StorageFormat> formats) {
    for (StorageFormat f : formats) bits = static_cast<std::uint8_t>(bits | (1U << static_cast<unsigned>(f)));
  }
  [[nodiscard]] constexpr bool contains(StorageFormat format) const {
    return (bits >> static_cast<unsigned>(format) & 1U) != 0;
  }
};

// The 16-bit formats: what the tensor-core kernels of today are instantiated for.
inline constexpr StorageFormats half16_formats{StorageFormat::bf16, StorageFormat::fp16};

}  // namespace roofline::kernels
