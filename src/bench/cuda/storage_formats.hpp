#pragma once

// How a runner turns a case's model dtype into the storage format of a kernel family's
// instantiation (kernels/storage_format.hpp), and reads 16-bit results on the host. The one place
// where a dtype meets a kernel's format: a dtype the family is not built for becomes the case's
// not_supported reason, never another format.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/storage_format.hpp"
#include "roofline/core/dtype.hpp"

namespace roofline::bench::cuda {

struct FormatChoice {
  std::optional<kernels::StorageFormat> format;
  std::string unsupported;  // why there is none (empty when `format` is set)
};

// The format `family` (a name for the reason, e.g. "GEMV") runs `dtype` in, given the formats its
// kernels are instantiated for (the launcher header's *_formats).
[[nodiscard]] FormatChoice choose_format(DType dtype, kernels::StorageFormats built, std::string_view family);

// The value of a 16-bit element of `format` (bf16 or fp16; throws std::logic_error otherwise).
[[nodiscard]] float half16_to_float(kernels::StorageFormat format, std::uint16_t bits);

// The 16-bit encoding of the test level lvl / 256 (roofline/testdata.hpp) in `format` (bf16 or
// fp16; throws std::logic_error otherwise).
[[nodiscard]] std::uint16_t half16_level_bits(kernels::StorageFormat format, int lvl);

// The value of an fp8 e4m3 byte (OCP FP8: bias 7, subnormals, 0x7F / 0xFF NaN, no infinities).
[[nodiscard]] double e4m3_value(std::uint8_t bits);
// A finite e4m3 byte from 32 random bits: any of the 254 finite codes (zeros and subnormals
// included), so that a kernel's widening of every exponent is exercised.
[[nodiscard]] std::uint8_t finite_e4m3(std::uint32_t random);
// The e4m3 byte of level / 8 for a level in [-8, 8] (kernels::fp8_check_level's range: every such
// value is exact in e4m3); throws std::logic_error outside it.
[[nodiscard]] std::uint8_t e4m3_of_eighths(int level);

}  // namespace roofline::bench::cuda
