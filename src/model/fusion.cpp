#include "roofline/model/fusion.hpp"

#include <fmt/format.h>

#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"

namespace roofline {
namespace {

constexpr std::array<ChainOpInfo, 9> chain_op_table{{
    {ChainOp::linear, "linear", "GEMM with a weight matrix; linear:N sets the output width (default --hidden)"},
    {ChainOp::gelu, "gelu", "GELU, tanh form (9 FLOPs per element)"},
    {ChainOp::silu, "silu", "SiLU (4 FLOPs per element)"},
    {ChainOp::relu, "relu", "ReLU (1 FLOP per element)"},
    {ChainOp::swiglu, "swiglu", "silu(first half) * second half: halves the width (5 FLOPs per output element)"},
    {ChainOp::add, "add", "adds a residual tensor of the same shape, read from HBM (1 FLOP per element)"},
    {ChainOp::rmsnorm, "rmsnorm", "RMSNorm over the width, reads gamma"},
    {ChainOp::layernorm, "layernorm", "LayerNorm over the width, reads gamma and beta"},
    {ChainOp::softmax, "softmax", "softmax over the width"},
}};

constexpr bool chain_table_in_order() {
  for (std::size_t i = 0; i < chain_op_table.size(); ++i) {
    if (static_cast<std::size_t>(chain_op_table[i].op) != i) return false;
  }
  return true;
}
static_assert(chain_table_in_order(), "chain_op_table must list the elements in ChainOp order");

std::int64_t elements_of(std::int64_t rows, std::int64_t width) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(rows, width, &product)) {
    detail::throw_too_many_bytes("fuse", static_cast<double>(rows) * static_cast<double>(width));
  }
  return product;
}

ElementwiseShape elementwise(ElementwiseFn fn, std::int64_t elements, DType dtype) {
  const ElementwiseFnInfo& f = info(fn);
  return {elements, f.inputs, f.outputs, f.flops_per_element, dtype};
}

}  // namespace

std::span<const ChainOpInfo> chain_ops() {
  return chain_op_table;
}

std::string_view name_of(ChainOp op) {
  return chain_op_table[static_cast<std::size_t>(op)].name;
}

Chain parse_chain(std::string_view text, std::string_view flag) {
  std::vector<std::string> names;
  for (const ChainOpInfo& entry : chain_op_table) names.emplace_back(entry.name);
  const std::vector<std::string> pieces = split(text, ',');
  if (pieces.size() == 1 && pieces[0].empty()) {
    throw InputError(fmt::format("{}: the chain is empty; give elements such as linear,gelu,layernorm (known: {})",
                                 flag, fmt::join(names, ", ")));
  }
  if (pieces.size() > max_chain_length) {
    throw InputError(fmt::format("{}: {} elements; at most {}", flag, pieces.size(), max_chain_length));
  }
  Chain chain;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const std::string piece = to_lower(pieces[i]);
    if (piece.empty()) throw InputError(fmt::format("{}: element {} is empty", flag, i + 1));
    const auto colon = piece.find(':');
    const std::string name = piece.substr(0, colon);
    const ChainOpInfo* found = nullptr;
    for (const ChainOpInfo& entry : chain_op_table) {
      if (entry.name == name) found = &entry;
    }
    if (found == nullptr) {
      std::string message = fmt::format("{}: unknown element '{}'", flag, pieces[i]);
      if (auto guess = closest_match(name, names)) message += fmt::format(" (did you mean '{}'?)", *guess);
      throw InputError(message + fmt::format("; known: {}", fmt::join(names, ", ")));
    }
    ChainElement element{found->op, 0};
    if (colon != std::string::npos) {
      const std::string width = piece.substr(colon + 1);
      if (found->op != ChainOp::linear) {
        throw InputError(fmt::format("{}: '{}': only linear takes a width (linear:N)", flag, pieces[i]));
      }
      std::size_t used = 0;
      long long value = 0;
      try {
        value = std::stoll(width, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (width.empty() || used != width.size() || value <= 0) {
        throw InputError(fmt::format("{}: '{}': the width must be a positive integer", flag, pieces[i]));
      }
      element.width = value;
    }
    chain.elements[chain.size++] = element;
  }
  return chain;
}

std::string to_string(const Chain& chain) {
  std::string text;
  for (const ChainElement& element : chain.view()) {
    if (!text.empty()) text += ',';
    text += name_of(element.op);
    if (element.width > 0) text += fmt::format(":{}", element.width);
  }
  return text;
}

FuseCost fuse_cost(const Chain& chain, const FuseShape& shape) {
  detail::check_size("fuse", "rows", shape.rows);
  detail::check_size("fuse", "hidden", shape.hidden);
  if (chain.size == 0) throw InputError("fuse: the chain is empty");
  const double act = bytes_per_element(shape.act);
  const double rows = static_cast<double>(shape.rows);
  FuseCost total;
  std::int64_t width = shape.hidden;
  for (const ChainElement& element : chain.view()) {
    ChainStepCost step;
    step.op = element.op;
    step.width_in = width;
    step.width_out = width;
    const std::int64_t elements = elements_of(shape.rows, width);
    switch (element.op) {
      case ChainOp::linear:
        step.width_out = element.width > 0 ? element.width : shape.hidden;
        step.cost = gemm_cost({shape.rows, step.width_out, width, 1, shape.act, shape.weights, shape.act});
        step.matrix = true;
        break;
      case ChainOp::gelu: step.cost = elementwise_cost(elementwise(ElementwiseFn::gelu, elements, shape.act)); break;
      case ChainOp::silu: step.cost = elementwise_cost(elementwise(ElementwiseFn::silu, elements, shape.act)); break;
      case ChainOp::relu: step.cost = elementwise_cost(elementwise(ElementwiseFn::relu, elements, shape.act)); break;
      case ChainOp::add: step.cost = elementwise_cost(elementwise(ElementwiseFn::add, elements, shape.act)); break;
      case ChainOp::swiglu:
        if (width % 2 != 0) {
          throw InputError(fmt::format("fuse: swiglu splits its input in two halves; width {} is odd", width));
        }
        step.width_out = width / 2;
        step.cost = elementwise_cost(elementwise(ElementwiseFn::swiglu, elements / 2, shape.act));
        break;
      case ChainOp::rmsnorm: step.cost = norm_cost({shape.rows, width, NormKind::rmsnorm, false, shape.act}); break;
      case ChainOp::layernorm: step.cost = norm_cost({shape.rows, width, NormKind::layernorm, false, shape.act}); break;
      case ChainOp::softmax: step.cost = softmax_cost({shape.rows, width, shape.act}); break;
    }
    step.input_bytes = rows * static_cast<double>(step.width_in) * act;
    step.output_bytes = rows * static_cast<double>(step.width_out) * act;
    total.unfused.flops += step.cost.flops;
    total.unfused.bytes_read += step.cost.bytes_read;
    total.unfused.bytes_written += step.cost.bytes_written;
    (step.matrix ? total.matrix_flops : total.vector_flops) += step.cost.flops;
    // Fused, a step reads from HBM only what does not come from the step before it.
    total.fused.bytes_read += step.cost.bytes_read - (total.size == 0 ? 0.0 : step.input_bytes);
    width = step.width_out;
    total.steps[total.size++] = step;
  }
  const ChainStepCost& last = total.steps[total.size - 1];
  total.fused.flops = total.unfused.flops;
  total.fused.bytes_written = last.output_bytes;
  total.on_chip_bytes = 0;
  for (std::size_t i = 0; i + 1 < total.size; ++i) total.on_chip_bytes += total.steps[i].output_bytes;
  detail::check_bytes("fuse", total.unfused.bytes());
  return total;
}

}  // namespace roofline
