#include "roofline/core/dtype.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"

namespace roofline {
namespace {

using P = PeakClass;

// Element and scale sizes: IEEE 754 and the OCP Microscaling (MX) v1.0 specification
// (blocks of 32 with an 8-bit E8M0 scale); NVFP4 per NVIDIA's Blackwell documentation
// (blocks of 16 with an FP8 E4M3 scale; its per-tensor FP32 scale is negligible and not
// counted); int4_g128 as the symmetric GPTQ kernels read it (vLLM's gptq_marlin: uint4 with a bias
// of 8, a 16-bit scale per group of 128 and no zero point; the checkpoint's qzeros are not read).
// AWQ's asymmetric groups also read a 4-bit zero per 128 (qzeros: 8 to an int32 word), 4.15625 bits
// against these 4.125: not counted (docs/llm.md).
constexpr std::array<DTypeInfo, 15> dtype_table{{
    {DType::fp64, "fp64", {"double", "float64", ""}, 64, 0, 0, {P::fp64_tensor, P::fp64}, "IEEE double"},
    {DType::fp32, "fp32", {"float", "float32", ""}, 32, 0, 0, {P::fp32, std::nullopt}, "IEEE single"},
    {DType::tf32,
     "tf32",
     {"", "", ""},
     32,
     0,
     0,
     {P::tf32, std::nullopt},
     "fp32 storage, 10-bit-mantissa tensor-core math"},
    {DType::fp16, "fp16", {"half", "float16", ""}, 16, 0, 0, {P::fp16, std::nullopt}, "IEEE half"},
    {DType::bf16, "bf16", {"bfloat16", "", ""}, 16, 0, 0, {P::bf16, std::nullopt}, "bfloat16"},
    {DType::fp8_e4m3,
     "fp8_e4m3",
     {"fp8", "e4m3", "fp8-e4m3"},
     8,
     0,
     0,
     {P::fp8, std::nullopt},
     "8-bit float, 4-bit exponent"},
    {DType::fp8_e5m2,
     "fp8_e5m2",
     {"e5m2", "fp8-e5m2", ""},
     8,
     0,
     0,
     {P::fp8, std::nullopt},
     "8-bit float, 5-bit exponent"},
    {DType::int8, "int8", {"i8", "", ""}, 8, 0, 0, {P::int8, std::nullopt}, "8-bit integer"},
    {DType::int4, "int4", {"i4", "", ""}, 4, 0, 0, {P::int4, std::nullopt}, "4-bit integer, no scales counted"},
    {DType::int4_g128,
     "int4_g128",
     {"int4-g128", "awq", "gptq"},
     4,
     128,
     16,
     {P::int4, std::nullopt},
     "4-bit integer, symmetric, a 16-bit scale per 128 elements"},
    {DType::fp4, "fp4", {"fp4_e2m1", "e2m1", ""}, 4, 0, 0, {P::fp4, std::nullopt}, "4-bit float E2M1, no scales"},
    {DType::nvfp4, "nvfp4", {"", "", ""}, 4, 16, 8, {P::fp4, std::nullopt}, "E2M1 with an E4M3 scale per 16"},
    {DType::mxfp8, "mxfp8", {"", "", ""}, 8, 32, 8, {P::fp8, std::nullopt}, "E4M3 with an E8M0 scale per 32"},
    {DType::mxfp6, "mxfp6", {"", "", ""}, 6, 32, 8, {P::fp6, std::nullopt}, "E3M2/E2M3 with an E8M0 scale per 32"},
    {DType::mxfp4, "mxfp4", {"", "", ""}, 4, 32, 8, {P::fp4, std::nullopt}, "E2M1 with an E8M0 scale per 32"},
}};

constexpr bool table_in_enum_order() {
  for (std::size_t i = 0; i < dtype_table.size(); ++i) {
    if (static_cast<std::size_t>(dtype_table[i].type) != i) return false;
  }
  return true;
}
static_assert(table_in_enum_order(), "dtype_table must list the formats in DType order");

}  // namespace

std::optional<PeakClass> peak_class_from_name(std::string_view name) {
  for (std::size_t i = 0; i < peak_class_names.size(); ++i) {
    if (peak_class_names[i] == name) return static_cast<PeakClass>(i);
  }
  return std::nullopt;
}

std::span<const DTypeInfo> all_dtypes() {
  return dtype_table;
}

const DTypeInfo& info(DType type) {
  return dtype_table[static_cast<std::size_t>(type)];
}

DType parse_dtype(std::string_view text, std::string_view flag) {
  const std::string wanted = to_lower(text);
  std::vector<std::string> names;
  for (const DTypeInfo& entry : dtype_table) {
    if (entry.name == wanted) return entry.type;
    for (std::string_view alias : entry.aliases) {
      if (!alias.empty() && alias == wanted) return entry.type;
    }
    names.emplace_back(entry.name);
  }
  std::string message = fmt::format("{}: unknown data type '{}'", flag, text);
  if (auto guess = closest_match(wanted, names)) message += fmt::format(" (did you mean '{}'?)", *guess);
  message += fmt::format("; known: {}", fmt::join(names, ", "));
  throw InputError(message);
}

}  // namespace roofline
