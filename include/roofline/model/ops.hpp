#pragma once

// FLOPs and bytes of the operations of LLM inference: the one formula that the model, the
// reports and the microbenchmarks all use (a benchmark turns its time into FLOP/s and B/s by
// calling the same function). Byte counts are HBM traffic: bytes read + bytes written.
//
// The names and fields of the contract draft (OpCost, GemmShape/gemm_cost, GemvShape/gemv_cost,
// ElementwiseShape/elementwise_cost) are relied on by the benchmarks and the LLM model; fields
// were only added, with defaults. docs/formulas.md derives every formula here.
//
// Every cost function is allocation-free and cheap (sweeps call them millions of times). Each
// validates its shape: a size that is not positive, or a byte count that does not fit in a
// signed 64-bit integer, throws InputError (exit 2) naming the operation and the size.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "roofline/core/dtype.hpp"
#include "roofline/core/roofline.hpp"

namespace roofline {

struct OpCost {
  double flops = 0;
  double bytes_read = 0;
  double bytes_written = 0;

  [[nodiscard]] constexpr double bytes() const { return bytes_read + bytes_written; }
  [[nodiscard]] constexpr double intensity() const { return flops / bytes(); }
};

// The largest byte count a cost may report: 2^63 - 1, the range of std::int64_t (as a double it
// rounds to 2^63; a count at or above it is rejected).
inline constexpr double max_byte_count = 9223372036854775807.0;

// C[m x n] = A[m x k] . B[k x n], `batch` independent products. Minimum traffic: each operand
// read once, C written once. In a linear layer A holds the activations (`a`, the type the math
// runs in) and B the weights (`b`); C is written in `c`.
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  DType a = DType::bf16;
  DType b = DType::bf16;
  DType c = DType::bf16;
};
[[nodiscard]] OpCost gemm_cost(const GemmShape& shape);

// The HBM traffic of a GEMM without on-chip reuse: every multiply-add loads both of its
// operands from memory (2mnk loads), C is written once. The upper bound that tiling removes.
[[nodiscard]] OpCost gemm_naive_cost(const GemmShape& shape);

// Output tile of one thread block of a tiled GEMM. Each block loads a tile.m x k strip of A and a
// k x tile.n strip of B through shared memory, so A is read ceil(n / tile.n) times and B
// ceil(m / tile.m) times (no reuse between blocks through L2 is assumed); C is written once.
struct GemmTiles {
  std::int64_t m = 128;
  std::int64_t n = 128;
};
[[nodiscard]] OpCost gemm_tiled_cost(const GemmShape& shape, GemmTiles tiles);

// y[batch x m] = W[m x k] . x[batch x k]: the weight matrix is read once for all vectors.
// `activation` is x's format (the format the math runs in); y is written in `output` where set (a
// W8A8 GEMV reads e4m3 x and writes bf16 y), else in `activation`.
struct GemvShape {
  std::int64_t m = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  DType weight = DType::bf16;
  DType activation = DType::bf16;
  std::optional<DType> output;
  [[nodiscard]] DType output_format() const { return output.value_or(activation); }
};
[[nodiscard]] OpCost gemv_cost(const GemvShape& shape);

// `inputs` arrays read and `outputs` arrays written, `elements` each. Inputs or outputs may be
// zero (a fill writes only), not both.
struct ElementwiseShape {
  std::int64_t elements = 0;
  int inputs = 1;
  int outputs = 1;
  double flops_per_element = 0;
  DType dtype = DType::bf16;
};
[[nodiscard]] OpCost elementwise_cost(const ElementwiseShape& shape);

// Named elementwise functions with their operand counts and FLOPs per element. Counting rule:
// every add, multiply, compare/max and divide is one FLOP, and so is every transcendental
// (exp, tanh) although it runs on the slower special-function units.
enum class ElementwiseFn : std::uint8_t { copy, add, mul, relu, gelu, silu, swiglu };
struct ElementwiseFnInfo {
  ElementwiseFn fn;
  std::string_view name;
  int inputs;
  int outputs;
  double flops_per_element;
  std::string_view formula;  // how the FLOPs were counted
};
[[nodiscard]] std::span<const ElementwiseFnInfo> elementwise_functions();
[[nodiscard]] const ElementwiseFnInfo& info(ElementwiseFn fn);
// Throws InputError naming `flag`, with a suggestion and the known names.
[[nodiscard]] ElementwiseFn parse_elementwise_fn(std::string_view text, std::string_view flag = "--fn");

// Normalisation over the last dimension of a rows x hidden tensor. RMSNorm reads a gamma vector,
// LayerNorm gamma and beta (hidden elements each, read once). With `residual` the kernel first
// adds a residual tensor and also writes the sum (the fused add + norm of vLLM and TensorRT-LLM).
enum class NormKind : std::uint8_t { rmsnorm, layernorm };
[[nodiscard]] constexpr std::string_view name_of(NormKind kind) {
  return kind == NormKind::rmsnorm ? "rmsnorm" : "layernorm";
}
[[nodiscard]] NormKind parse_norm_kind(std::string_view text, std::string_view flag = "--kind");
struct NormShape {
  std::int64_t rows = 0;
  std::int64_t hidden = 0;
  NormKind kind = NormKind::rmsnorm;
  bool residual = false;
  DType dtype = DType::bf16;
};
[[nodiscard]] OpCost norm_cost(const NormShape& shape);

// Softmax over each row of a rows x cols tensor, read once and written once (the row stays on
// chip between the max, exp-sum and normalise steps).
struct SoftmaxShape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  DType dtype = DType::bf16;
};
[[nodiscard]] OpCost softmax_cost(const SoftmaxShape& shape);

// Elementwise, normalisation and softmax math runs on the vector units, in fp32 for every storage
// type narrower than fp64 (bf16/fp8/int data is widened), in fp64 for fp64 data.
[[nodiscard]] constexpr PeakClass vector_peak_class(DType type) {
  return type == DType::fp64 ? PeakClass::fp64 : PeakClass::fp32;
}

// The roofline's lower bound on the time of one operation on one processor: the larger of the
// compute time (FLOPs / peak) and the memory time (bytes / bandwidth). attainable_flops equals
// roofline::attainable(peak, bandwidth, intensity).flops, and the bound is classified the same way
// (compute when the two times are equal).
struct OpTime {
  double compute_s = 0;
  double memory_s = 0;
  double time_s = 0;
  Bound bound = Bound::memory;
  double attainable_flops = 0;
};
[[nodiscard]] constexpr OpTime roofline_time(const OpCost& cost, double peak_flops, double bandwidth_bytes_per_s) {
  OpTime t;
  t.compute_s = cost.flops / peak_flops;
  t.memory_s = cost.bytes() / bandwidth_bytes_per_s;
  t.bound = t.compute_s < t.memory_s ? Bound::memory : Bound::compute;
  t.time_s = t.bound == Bound::memory ? t.memory_s : t.compute_s;
  t.attainable_flops = t.time_s > 0 ? cost.flops / t.time_s : 0.0;
  return t;
}

// Fractions of the peak rate and of the bandwidth that a real kernel reaches (0 < x <= 1).
struct Efficiency {
  double compute = 1.0;
  double memory = 1.0;
};
// The expected time: each part of the lower bound stretched by its efficiency, the larger wins.
[[nodiscard]] constexpr double expected_time_s(const OpTime& t, Efficiency e) {
  const double compute = t.compute_s / e.compute;
  const double memory = t.memory_s / e.memory;
  return compute > memory ? compute : memory;
}
// Parses "compute=X,memory=Y" (either part may be left out and is then 1). Throws InputError.
[[nodiscard]] Efficiency parse_efficiency(std::string_view text, std::string_view flag = "--efficiency");

namespace detail {
// Shared by the cost functions: a size below `minimum`, or a byte count at or above
// max_byte_count, throws InputError naming the operation `op` and the size `what`. The checks are
// inline; only the throwing part is out of line.
[[noreturn]] void throw_bad_size(std::string_view op, std::string_view what, std::int64_t value, std::int64_t minimum);
[[noreturn]] void throw_too_many_bytes(std::string_view op, double bytes);
inline void check_size(std::string_view op, std::string_view what, std::int64_t value, std::int64_t minimum = 1) {
  if (value < minimum) [[unlikely]]
    throw_bad_size(op, what, value, minimum);
}
inline void check_bytes(std::string_view op, double bytes) {
  if (!(bytes < max_byte_count)) [[unlikely]]
    throw_too_many_bytes(op, bytes);
}
}  // namespace detail

}  // namespace roofline
