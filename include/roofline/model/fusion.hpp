#pragma once

// Operator fusion: a chain of operations on one activation tensor (rows x width), costed as
// separate kernels (every intermediate written to HBM and read back) and as one fused kernel
// (the intermediates stay on chip). Each step's cost comes from the one formula of its operation
// in ops.hpp; docs/formulas.md lists the elements.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "roofline/core/dtype.hpp"
#include "roofline/model/ops.hpp"

namespace roofline {

// The elements a chain may contain. linear is a GEMM with a weight matrix (width_in x width_out,
// in the weight type); the others run on the vector units. add reads a second tensor of the same
// shape (a residual) from HBM, fused or not; the norms read their gamma (and beta) vectors.
enum class ChainOp : std::uint8_t { linear, gelu, silu, relu, swiglu, add, rmsnorm, layernorm, softmax };

struct ChainOpInfo {
  ChainOp op;
  std::string_view name;
  std::string_view description;
};
[[nodiscard]] std::span<const ChainOpInfo> chain_ops();
[[nodiscard]] std::string_view name_of(ChainOp op);

inline constexpr std::size_t max_chain_length = 16;

struct ChainElement {
  ChainOp op = ChainOp::linear;
  std::int64_t width = 0;  // linear only: the output width; 0 = the chain's hidden width
};

struct Chain {
  std::array<ChainElement, max_chain_length> elements{};
  std::size_t size = 0;
  [[nodiscard]] std::span<const ChainElement> view() const { return {elements.data(), size}; }
};

// Parses "linear,gelu,layernorm" or "linear:14336,swiglu,linear" (linear:N sets that linear's
// output width). Throws InputError naming `flag` on an empty chain, an empty or unknown element,
// a bad width, or more than max_chain_length elements.
[[nodiscard]] Chain parse_chain(std::string_view text, std::string_view flag = "--chain");
// The canonical text of a chain ("linear:14336,swiglu,linear").
[[nodiscard]] std::string to_string(const Chain& chain);

struct FuseShape {
  std::int64_t rows = 0;    // tokens
  std::int64_t hidden = 0;  // width of the chain's input tensor
  DType act = DType::bf16;  // every activation tensor; the math of linear
  DType weights = DType::bf16;
};

struct ChainStepCost {
  ChainOp op = ChainOp::linear;
  std::int64_t width_in = 0;
  std::int64_t width_out = 0;
  OpCost cost;              // the step as its own kernel
  double input_bytes = 0;   // the chain tensor it reads (the previous step's output)
  double output_bytes = 0;  // the chain tensor it writes
  bool matrix = false;      // tensor cores (linear) or vector units
};

struct FuseCost {
  std::array<ChainStepCost, max_chain_length> steps{};
  std::size_t size = 0;
  OpCost unfused;            // the sum of the steps
  OpCost fused;              // reads the chain input and every external operand, writes the last output
  double matrix_flops = 0;   // of the linear steps
  double vector_flops = 0;   // of the others
  double on_chip_bytes = 0;  // the intermediates (every output but the last), each written and read back unfused
  [[nodiscard]] std::span<const ChainStepCost> view() const { return {steps.data(), size}; }
};

// Throws InputError on a bad shape (non-positive sizes, swiglu on an odd width, overflow).
[[nodiscard]] FuseCost fuse_cost(const Chain& chain, const FuseShape& shape);

}  // namespace roofline
