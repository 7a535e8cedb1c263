#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace roofline {

// The peak-rate classes a hardware file can state (the keys of `peak_tflops` in
// hardware/schema.json; a unit test checks that the two lists agree).
enum class PeakClass : std::uint8_t { fp64, fp64_tensor, fp32, tf32, fp16, bf16, fp8, fp6, fp4, int8, int4 };

inline constexpr std::array<std::string_view, 11> peak_class_names{
    "fp64", "fp64_tensor", "fp32", "tf32", "fp16", "bf16", "fp8", "fp6", "fp4", "int8", "int4"};

[[nodiscard]] constexpr std::string_view name_of(PeakClass peak) {
  return peak_class_names[static_cast<std::size_t>(peak)];
}
[[nodiscard]] std::optional<PeakClass> peak_class_from_name(std::string_view name);

// Number formats the model knows. Block-scaled formats carry one scale per block of elements,
// and those scale bytes are part of every byte count.
enum class DType : std::uint8_t {
  fp64,
  fp32,
  tf32,
  fp16,
  bf16,
  fp8_e4m3,
  fp8_e5m2,
  int8,
  int4,
  int4_g128,
  fp4,
  nvfp4,
  mxfp8,
  mxfp6,
  mxfp4,
};

struct DTypeInfo {
  DType type;
  std::string_view name;                    // canonical, as printed
  std::array<std::string_view, 3> aliases;  // also accepted on the command line (empty = unused)
  double element_bits;                      // payload bits per element
  std::uint32_t block_elements;             // elements sharing one scale (0: no block scale)
  double scale_bits_per_block;              // bits of the scale (and zero point) of one block
  // The peak classes whose rate bounds matrix math in this format: the first one the GPU
  // states is used (fp64 prefers the tensor-core rate and falls back to the vector rate).
  std::array<std::optional<PeakClass>, 2> matrix_peaks;
  std::string_view description;

  // Bytes one element occupies in memory, block scales included.
  [[nodiscard]] constexpr double bytes_per_element() const {
    const double scale = block_elements == 0 ? 0.0 : scale_bits_per_block / block_elements;
    return (element_bits + scale) / 8.0;
  }
};

// Every format, in DType order.
[[nodiscard]] std::span<const DTypeInfo> all_dtypes();
[[nodiscard]] const DTypeInfo& info(DType type);
[[nodiscard]] inline std::string_view name_of(DType type) {
  return info(type).name;
}
[[nodiscard]] inline double bytes_per_element(DType type) {
  return info(type).bytes_per_element();
}

// Parses a format name or alias, case-insensitively. Throws InputError naming `flag` with a
// "did you mean" suggestion and the list of known formats.
[[nodiscard]] DType parse_dtype(std::string_view text, std::string_view flag = "--dtype");

}  // namespace roofline
