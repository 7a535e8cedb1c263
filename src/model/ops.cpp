#include "roofline/model/ops.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"

namespace roofline {
namespace {

double as_double(std::int64_t value) {
  return static_cast<double>(value);
}

double ceil_div(std::int64_t a, std::int64_t b) {
  return as_double(a / b + (a % b != 0 ? 1 : 0));
}

// FLOPs per element of each named function; docs/formulas.md shows the same counts.
constexpr std::array<ElementwiseFnInfo, 7> fn_table{{
    {ElementwiseFn::copy, "copy", 1, 1, 0, "y = x: no arithmetic"},
    {ElementwiseFn::add, "add", 2, 1, 1, "y = a + b"},
    {ElementwiseFn::mul, "mul", 2, 1, 1, "y = a * b"},
    {ElementwiseFn::relu, "relu", 1, 1, 1, "y = max(x, 0)"},
    {ElementwiseFn::gelu, "gelu", 1, 1, 9,
     "tanh form 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))): 7 mul/add, 1 add, 1 tanh"},
    {ElementwiseFn::silu, "silu", 1, 1, 4, "x / (1 + exp(-x)): negate, exp, add, divide"},
    {ElementwiseFn::swiglu, "swiglu", 2, 1, 5, "silu(gate) * up: silu's 4 and a multiply"},
}};

constexpr bool fn_table_in_order() {
  for (std::size_t i = 0; i < fn_table.size(); ++i) {
    if (static_cast<std::size_t>(fn_table[i].fn) != i) return false;
  }
  return true;
}
static_assert(fn_table_in_order(), "fn_table must list the functions in ElementwiseFn order");

// RMSNorm per element: square, accumulate, scale by 1/rms, scale by gamma; per row: divide by
// hidden, add epsilon, reciprocal square root. LayerNorm per element: accumulate (mean),
// subtract, square, accumulate (variance), scale by 1/std, gamma, add beta; per row: two divides,
// epsilon, reciprocal square root. The fused residual adds one add per element.
constexpr double rmsnorm_flops_per_element = 4;
constexpr double rmsnorm_flops_per_row = 3;
constexpr double layernorm_flops_per_element = 7;
constexpr double layernorm_flops_per_row = 4;

// Softmax per element: max, subtract, exp, accumulate, scale by 1/sum; per row: one reciprocal.
constexpr double softmax_flops_per_element = 5;
constexpr double softmax_flops_per_row = 1;

}  // namespace

namespace detail {

void throw_bad_size(std::string_view op, std::string_view what, std::int64_t value, std::int64_t minimum) {
  throw InputError(fmt::format("{}: {} = {} is out of range (must be at least {})", op, what, value, minimum));
}

void throw_too_many_bytes(std::string_view op, double bytes) {
  throw InputError(fmt::format("{}: the byte count ({:.4g} bytes) does not fit in 64 bits (limit 2^63 - 1 = {:.4g})",
                               op, bytes, max_byte_count));
}

}  // namespace detail

OpCost gemm_cost(const GemmShape& s) {
  detail::check_size("gemm", "m", s.m);
  detail::check_size("gemm", "n", s.n);
  detail::check_size("gemm", "k", s.k);
  detail::check_size("gemm", "batch", s.batch);
  const double m = as_double(s.m), n = as_double(s.n), k = as_double(s.k), batch = as_double(s.batch);
  OpCost cost;
  cost.flops = 2 * m * n * k * batch;
  cost.bytes_read = batch * (m * k * bytes_per_element(s.a) + k * n * bytes_per_element(s.b));
  cost.bytes_written = batch * m * n * bytes_per_element(s.c);
  detail::check_bytes("gemm", cost.bytes());
  return cost;
}

OpCost gemm_naive_cost(const GemmShape& s) {
  OpCost cost = gemm_cost(s);
  const double products = as_double(s.batch) * as_double(s.m) * as_double(s.n) * as_double(s.k);
  cost.bytes_read = products * (bytes_per_element(s.a) + bytes_per_element(s.b));
  detail::check_bytes("gemm (naive)", cost.bytes());
  return cost;
}

OpCost gemm_tiled_cost(const GemmShape& s, GemmTiles tiles) {
  OpCost cost = gemm_cost(s);
  detail::check_size("gemm (tiled)", "tile m", tiles.m);
  detail::check_size("gemm (tiled)", "tile n", tiles.n);
  const double m = as_double(s.m), n = as_double(s.n), k = as_double(s.k), batch = as_double(s.batch);
  cost.bytes_read = batch * (m * k * bytes_per_element(s.a) * ceil_div(s.n, tiles.n) +
                             k * n * bytes_per_element(s.b) * ceil_div(s.m, tiles.m));
  detail::check_bytes("gemm (tiled)", cost.bytes());
  return cost;
}

OpCost gemv_cost(const GemvShape& s) {
  detail::check_size("gemv", "m", s.m);
  detail::check_size("gemv", "k", s.k);
  detail::check_size("gemv", "batch", s.batch);
  const double m = as_double(s.m), k = as_double(s.k), batch = as_double(s.batch);
  OpCost cost;
  cost.flops = 2 * m * k * batch;
  cost.bytes_read = m * k * bytes_per_element(s.weight) + batch * k * bytes_per_element(s.activation);
  cost.bytes_written = batch * m * bytes_per_element(s.output_format());
  detail::check_bytes("gemv", cost.bytes());
  return cost;
}

OpCost elementwise_cost(const ElementwiseShape& s) {
  detail::check_size("elementwise", "elements", s.elements);
  detail::check_size("elementwise", "inputs", s.inputs, 0);
  detail::check_size("elementwise", "outputs", s.outputs, 0);
  detail::check_size("elementwise", "inputs + outputs", std::int64_t{s.inputs} + s.outputs);
  if (!(s.flops_per_element >= 0) || !std::isfinite(s.flops_per_element)) {
    throw InputError(
        fmt::format("elementwise: flops per element = {} must be a finite number >= 0", s.flops_per_element));
  }
  const double elements = as_double(s.elements);
  const double bytes = bytes_per_element(s.dtype);
  OpCost cost;
  cost.flops = elements * s.flops_per_element;
  cost.bytes_read = elements * s.inputs * bytes;
  cost.bytes_written = elements * s.outputs * bytes;
  detail::check_bytes("elementwise", cost.bytes());
  return cost;
}

std::span<const ElementwiseFnInfo> elementwise_functions() {
  return fn_table;
}

const ElementwiseFnInfo& info(ElementwiseFn fn) {
  return fn_table[static_cast<std::size_t>(fn)];
}

ElementwiseFn parse_elementwise_fn(std::string_view text, std::string_view flag) {
  const std::string wanted = to_lower(text);
  std::vector<std::string> names;
  for (const ElementwiseFnInfo& entry : fn_table) {
    if (entry.name == wanted) return entry.fn;
    names.emplace_back(entry.name);
  }
  std::string message = fmt::format("{}: unknown function '{}'", flag, text);
  if (auto guess = closest_match(wanted, names)) message += fmt::format(" (did you mean '{}'?)", *guess);
  message += fmt::format("; known: {}", fmt::join(names, ", "));
  throw InputError(message);
}

NormKind parse_norm_kind(std::string_view text, std::string_view flag) {
  const std::string wanted = to_lower(text);
  if (wanted == "rmsnorm" || wanted == "rms") return NormKind::rmsnorm;
  if (wanted == "layernorm" || wanted == "ln") return NormKind::layernorm;
  throw InputError(fmt::format("{}: unknown normalisation '{}'; known: rmsnorm, layernorm", flag, text));
}

OpCost norm_cost(const NormShape& s) {
  detail::check_size("norm", "rows", s.rows);
  detail::check_size("norm", "hidden", s.hidden);
  const double rows = as_double(s.rows), hidden = as_double(s.hidden);
  const bool rms = s.kind == NormKind::rmsnorm;
  const double residual = s.residual ? 1.0 : 0.0;
  const double per_element = (rms ? rmsnorm_flops_per_element : layernorm_flops_per_element) + residual;
  const double per_row = rms ? rmsnorm_flops_per_row : layernorm_flops_per_row;
  const double parameters = rms ? 1.0 : 2.0;
  const double bytes = bytes_per_element(s.dtype);
  OpCost cost;
  cost.flops = rows * (per_element * hidden + per_row);
  cost.bytes_read = rows * hidden * bytes * (1 + residual) + parameters * hidden * bytes;
  cost.bytes_written = rows * hidden * bytes * (1 + residual);
  detail::check_bytes("norm", cost.bytes());
  return cost;
}

OpCost softmax_cost(const SoftmaxShape& s) {
  detail::check_size("softmax", "rows", s.rows);
  detail::check_size("softmax", "cols", s.cols);
  const double rows = as_double(s.rows), cols = as_double(s.cols);
  const double bytes = bytes_per_element(s.dtype);
  OpCost cost;
  cost.flops = rows * (softmax_flops_per_element * cols + softmax_flops_per_row);
  cost.bytes_read = rows * cols * bytes;
  cost.bytes_written = rows * cols * bytes;
  detail::check_bytes("softmax", cost.bytes());
  return cost;
}

Efficiency parse_efficiency(std::string_view text, std::string_view flag) {
  Efficiency e;
  bool any = false;
  for (const std::string& piece : split(text, ',')) {
    const auto eq = piece.find('=');
    const std::string key = to_lower(piece.substr(0, eq == std::string::npos ? piece.size() : eq));
    if (eq == std::string::npos || (key != "compute" && key != "memory")) {
      throw InputError(fmt::format("{}: '{}' is not compute=X or memory=Y", flag, piece));
    }
    const std::string number = piece.substr(eq + 1);
    const std::optional<double> parsed = parse_decimal(number);
    const double value = parsed.value_or(0);
    if (!parsed || !(value > 0) || value > 1) {
      throw InputError(fmt::format("{}: {} = '{}' must be a fraction in (0, 1]", flag, key, number));
    }
    (key == "compute" ? e.compute : e.memory) = value;
    any = true;
  }
  if (!any) throw InputError(fmt::format("{}: empty; expected compute=X,memory=Y", flag));
  return e;
}

}  // namespace roofline
