#include "storage_formats.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "roofline/bench/testdata.hpp"

namespace roofline::bench::cuda {
namespace {

[[noreturn]] void not_half16(kernels::StorageFormat format) {
  throw std::logic_error(fmt::format("{} is not a 16-bit storage format", kernels::name_of(format)));
}

}  // namespace

FormatChoice choose_format(DType dtype, kernels::StorageFormats built, std::string_view family) {
  const std::optional<kernels::StorageFormat> format = kernels::storage_format_of(dtype);
  if (!format) return {std::nullopt, fmt::format("no kernel stores {} element by element", name_of(dtype))};
  if (!built.contains(*format)) {
    return {std::nullopt, fmt::format("the {} kernels are not built for {}", family, kernels::name_of(*format))};
  }
  return {format, {}};
}

float half16_to_float(kernels::StorageFormat format, std::uint16_t bits) {
  switch (format) {
    case kernels::StorageFormat::bf16: return testdata::bf16_bits_to_float(bits);
    case kernels::StorageFormat::fp16: return testdata::fp16_bits_to_float(bits);
    default: not_half16(format);
  }
}

std::uint16_t half16_level_bits(kernels::StorageFormat format, int lvl) {
  switch (format) {
    case kernels::StorageFormat::bf16: return testdata::level_bf16_bits(lvl);
    case kernels::StorageFormat::fp16: return testdata::level_fp16_bits(lvl);
    default: not_half16(format);
  }
}

double e4m3_value(std::uint8_t bits) {
  const int exponent = (bits >> 3) & 0xF;
  const int mantissa = bits & 0x7;
  if (exponent == 0xF && mantissa == 0x7) return std::numeric_limits<double>::quiet_NaN();
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, -9) : std::ldexp(8 + mantissa, exponent - 10);
  return (bits & 0x80U) != 0 ? -magnitude : magnitude;
}

std::uint8_t finite_e4m3(std::uint32_t random) {
  const auto bits = static_cast<std::uint8_t>(random & 0xFFU);
  // The two NaN codes become the largest finite magnitude, 448, of the same sign.
  return (bits & 0x7FU) == 0x7FU ? static_cast<std::uint8_t>(bits ^ 0x01U) : bits;
}

std::uint8_t e4m3_of_eighths(int level) {
  // The codes of -1, -7/8, ..., 7/8, 1, found once among the 256 by their values (0 is 0x00).
  static const std::array<std::uint8_t, 17> codes = [] {
    std::array<std::uint8_t, 17> table{};
    for (int l = -8; l <= 8; ++l) {
      int found = -1;
      for (int bits = 0; bits < 256 && found < 0; ++bits) {
        if (e4m3_value(static_cast<std::uint8_t>(bits)) == l / 8.0) found = bits;
      }
      if (found < 0) throw std::logic_error(fmt::format("no e4m3 code holds {}/8", l));
      table[static_cast<std::size_t>(l + 8)] = static_cast<std::uint8_t>(found);
    }
    return table;
  }();
  if (level < -8 || level > 8)
    throw std::logic_error(fmt::format("e4m3_of_eighths: level {} is outside [-8, 8]", level));
  return codes[static_cast<std::size_t>(level + 8)];
}

}  // namespace roofline::bench::cuda
