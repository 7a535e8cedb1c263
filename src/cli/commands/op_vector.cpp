// roofline op elementwise | norm | softmax: memory-bound vector work, bounded by the vector
// (non-tensor) peak: these kernels do not use the tensor cores.
#include <fmt/format.h>

#include "op.hpp"
#include "op_engine.hpp"
#include "roofline/core/dtype.hpp"
#include "roofline/core/error.hpp"

namespace roofline::cli {
namespace {

using namespace op_detail;

std::string vector_math(DType dtype) {
  return fmt::format("{} vector peak (elementwise math runs on the CUDA cores, not the tensor cores)",
                     name_of(vector_peak_class(dtype)));
}

struct ElementwiseRow {
  std::string_view gpu;
  std::string_view function;
  ElementwiseShape shape;
  Timing t;
};

constexpr std::array<OpColumn<ElementwiseRow>, 7> elementwise_columns{{
    {{"gpu", "GPU", 0}, [](const ElementwiseRow& r) { return text(r.gpu); }},
    {{"function", "function", 0}, [](const ElementwiseRow& r) { return text(r.function); }},
    {{"elements", "elements", 0}, [](const ElementwiseRow& r) { return integer(r.shape.elements); }},
    {{"inputs", "inputs", 0}, [](const ElementwiseRow& r) { return integer(r.shape.inputs); }},
    {{"outputs", "outputs", 0}, [](const ElementwiseRow& r) { return integer(r.shape.outputs); }},
    {{"flops_per_element", "FLOP/elem", 2}, [](const ElementwiseRow& r) { return OpCell{r.shape.flops_per_element}; }},
    {{"dtype", "dtype", 0}, [](const ElementwiseRow& r) { return text(name_of(r.shape.dtype)); }},
}};

struct ElementwisePlan {
  OpSetup setup;
  std::string_view function = "custom";
  std::vector<std::int64_t> elements, inputs, outputs;
  std::vector<double> flops;
  DType dtype = DType::bf16;
  MathRoof math;  // what bounds the FLOPs
  std::uint64_t rows = 0;
};

// Operand counts are small integers; a count above this is a typo.
constexpr std::int64_t max_operands = 1024;

std::vector<std::int64_t> operand_axis(std::string_view flag, const std::string& text) {
  std::vector<std::int64_t> values = axis(flag, text, 0);
  if (max_of(values) > max_operands) {
    throw InputError(fmt::format("{}: {} arrays; at most {}", flag, max_of(values), max_operands));
  }
  return values;
}

ElementwisePlan plan_elementwise(const ElementwiseOptions& o, const HardwareRegistry& registry) {
  ElementwisePlan p;
  p.setup = setup_op("op-elementwise", o.op, registry);
  std::string inputs = "1", outputs = "1", flops = "1";
  if (o.fn) {
    const ElementwiseFnInfo& fn = info(parse_elementwise_fn(*o.fn));
    p.function = fn.name;
    inputs = std::to_string(fn.inputs);
    outputs = std::to_string(fn.outputs);
    flops = fmt::format("{}", fn.flops_per_element);
    p.setup.report.notes.push_back(
        fmt::format("{}: {} FLOPs per element, {}", fn.name, fn.flops_per_element, fn.formula));
  }
  p.elements = axis("--elements", o.elements);
  p.inputs = operand_axis("--inputs", o.inputs.value_or(inputs));
  p.outputs = operand_axis("--outputs", o.outputs.value_or(outputs));
  p.flops = parse_real_sweep("--flops-per-element", o.flops_per_element.value_or(flops), 0);
  if (min_of(p.inputs) == 0 && min_of(p.outputs) == 0) {
    throw InputError("--inputs 0 with --outputs 0: an operation must read or write something");
  }
  p.dtype = parse_dtype(o.op.dtype);
  (void)elementwise_cost(
      {max_of(p.elements), static_cast<int>(max_of(p.inputs)), static_cast<int>(max_of(p.outputs)), 0, p.dtype});
  p.math = {MathRoof::Unit::vector, p.dtype};
  const std::array<std::size_t, 5> sizes{p.setup.gpus.size(), p.elements.size(), p.inputs.size(), p.outputs.size(),
                                         p.flops.size()};
  p.rows = sweep_point_count(sizes);

  Report& report = p.setup.report;
  report.inputs.update({{"elements", o.elements},
                        {"function", o.fn ? nlohmann::json(p.function) : nlohmann::json(nullptr)},
                        {"inputs", o.inputs.value_or(inputs)},
                        {"outputs", o.outputs.value_or(outputs)},
                        {"flops_per_element", o.flops_per_element.value_or(flops)}});
  report.notes.push_back(
      "FLOPs = elements x FLOPs per element; bytes = elements x (inputs read + outputs written) x "
      "bytes per element");
  add_roof_notes(report, p.setup.roofs, p.math, vector_math(p.dtype));
  add_dtype_notes(report, {p.dtype});
  return p;
}

template <class Emit>
void generate(const ElementwisePlan& p, Emit&& emit) {
  const std::array<std::size_t, 4> sizes{p.elements.size(), p.inputs.size(), p.outputs.size(), p.flops.size()};
  ElementwiseRow row;
  row.function = p.function;
  for (const Roofs& roofs : p.setup.roofs) {
    row.gpu = roofs.gpu_id;
    SweepCursor at(sizes);
    do {
      row.shape = {p.elements[at[0]], static_cast<int>(p.inputs[at[1]]), static_cast<int>(p.outputs[at[2]]),
                   p.flops[at[3]], p.dtype};
      row.t = time_on(elementwise_cost(row.shape), roofs, p.math, p.setup.efficiency);
      if (p.setup.calibrated()) apply_calibration(row.t, p.setup, elementwise_basis(row.shape));
      emit(row);
    } while (at.next());
  }
}

struct NormRow {
  std::string_view gpu;
  NormShape shape;
  Timing t;
};

constexpr std::array<OpColumn<NormRow>, 6> norm_columns{{
    {{"gpu", "GPU", 0}, [](const NormRow& r) { return text(r.gpu); }},
    {{"kind", "kind", 0}, [](const NormRow& r) { return text(name_of(r.shape.kind)); }},
    {{"rows", "rows", 0}, [](const NormRow& r) { return integer(r.shape.rows); }},
    {{"hidden", "hidden", 0}, [](const NormRow& r) { return integer(r.shape.hidden); }},
    {{"residual", "residual", 0}, [](const NormRow& r) { return OpCell{r.shape.residual}; }},
    {{"dtype", "dtype", 0}, [](const NormRow& r) { return text(name_of(r.shape.dtype)); }},
}};

struct NormPlan {
  OpSetup setup;
  std::vector<std::int64_t> rows_axis, hidden;
  NormKind kind = NormKind::rmsnorm;
  bool residual = false;
  DType dtype = DType::bf16;
  MathRoof math;  // what bounds the FLOPs
  std::uint64_t rows = 0;
};

NormPlan plan_norm(const NormOptions& o, const HardwareRegistry& registry) {
  NormPlan p;
  p.setup = setup_op("op-norm", o.op, registry);
  p.rows_axis = axis("--rows", o.rows);
  p.hidden = axis("--hidden", o.hidden);
  p.kind = parse_norm_kind(o.kind);
  p.residual = o.residual;
  p.dtype = parse_dtype(o.op.dtype);
  (void)norm_cost({max_of(p.rows_axis), max_of(p.hidden), p.kind, p.residual, p.dtype});
  p.math = {MathRoof::Unit::vector, p.dtype};
  const std::array<std::size_t, 3> sizes{p.setup.gpus.size(), p.rows_axis.size(), p.hidden.size()};
  p.rows = sweep_point_count(sizes);

  Report& report = p.setup.report;
  report.inputs.update({{"rows", o.rows}, {"hidden", o.hidden}, {"kind", name_of(p.kind)}, {"residual", p.residual}});
  report.notes.push_back(
      p.kind == NormKind::rmsnorm
          ? "RMSNorm FLOPs = rows (4 hidden + 3): square, accumulate, scale by 1/rms, by gamma per element; divide, "
            "epsilon, rsqrt per row. Bytes: x read, y written, gamma (hidden) read once"
          : "LayerNorm FLOPs = rows (7 hidden + 4): accumulate, subtract, square, accumulate, scale, gamma, beta per "
            "element; two divides, epsilon, rsqrt per row. Bytes: x read, y written, gamma and beta read once");
  if (p.residual) {
    report.notes.push_back("--residual: one more add per element, the residual read and the sum written");
  }
  add_roof_notes(report, p.setup.roofs, p.math, vector_math(p.dtype));
  add_dtype_notes(report, {p.dtype});
  return p;
}

template <class Emit>
void generate(const NormPlan& p, Emit&& emit) {
  const std::array<std::size_t, 2> sizes{p.rows_axis.size(), p.hidden.size()};
  NormRow row;
  for (const Roofs& roofs : p.setup.roofs) {
    row.gpu = roofs.gpu_id;
    SweepCursor at(sizes);
    do {
      row.shape = {p.rows_axis[at[0]], p.hidden[at[1]], p.kind, p.residual, p.dtype};
      row.t = time_on(norm_cost(row.shape), roofs, p.math, p.setup.efficiency);
      if (p.setup.calibrated()) apply_calibration(row.t, p.setup, norm_basis(row.shape));
      emit(row);
    } while (at.next());
  }
}

struct SoftmaxRow {
  std::string_view gpu;
  SoftmaxShape shape;
  Timing t;
};

constexpr std::array<OpColumn<SoftmaxRow>, 4> softmax_columns{{
    {{"gpu", "GPU", 0}, [](const SoftmaxRow& r) { return text(r.gpu); }},
    {{"rows", "rows", 0}, [](const SoftmaxRow& r) { return integer(r.shape.rows); }},
    {{"cols", "cols", 0}, [](const SoftmaxRow& r) { return integer(r.shape.cols); }},
    {{"dtype", "dtype", 0}, [](const SoftmaxRow& r) { return text(name_of(r.shape.dtype)); }},
}};

struct SoftmaxPlan {
  OpSetup setup;
  std::vector<std::int64_t> rows_axis, cols;
  DType dtype = DType::bf16;
  MathRoof math;  // what bounds the FLOPs
  std::uint64_t rows = 0;
};

SoftmaxPlan plan_softmax(const SoftmaxOptions& o, const HardwareRegistry& registry) {
  SoftmaxPlan p;
  p.setup = setup_op("op-softmax", o.op, registry);
  p.rows_axis = axis("--rows", o.rows);
  p.cols = axis("--cols", o.cols);
  p.dtype = parse_dtype(o.op.dtype);
  (void)softmax_cost({max_of(p.rows_axis), max_of(p.cols), p.dtype});
  p.math = {MathRoof::Unit::vector, p.dtype};
  const std::array<std::size_t, 3> sizes{p.setup.gpus.size(), p.rows_axis.size(), p.cols.size()};
  p.rows = sweep_point_count(sizes);

  Report& report = p.setup.report;
  report.inputs.update({{"rows", o.rows}, {"cols", o.cols}});
  report.notes.push_back(
      "softmax FLOPs = rows (5 cols + 1): max, subtract, exp, accumulate, scale per element; one reciprocal per row. "
      "Bytes: each row read once and written once (it stays on chip between the passes)");
  add_roof_notes(report, p.setup.roofs, p.math, vector_math(p.dtype));
  add_dtype_notes(report, {p.dtype});
  return p;
}

template <class Emit>
void generate(const SoftmaxPlan& p, Emit&& emit) {
  const std::array<std::size_t, 2> sizes{p.rows_axis.size(), p.cols.size()};
  SoftmaxRow row;
  for (const Roofs& roofs : p.setup.roofs) {
    row.gpu = roofs.gpu_id;
    SweepCursor at(sizes);
    do {
      row.shape = {p.rows_axis[at[0]], p.cols[at[1]], p.dtype};
      row.t = time_on(softmax_cost(row.shape), roofs, p.math, p.setup.efficiency);
      if (p.setup.calibrated()) apply_calibration(row.t, p.setup, softmax_basis(row.shape));
      emit(row);
    } while (at.next());
  }
}

}  // namespace

Report run_op(const ElementwiseOptions& options, const HardwareRegistry& registry) {
  ElementwisePlan p = plan_elementwise(options, registry);
  return make_report<ElementwiseRow>(p.setup, p.rows, "elementwise", "Elementwise: inputs read, outputs written",
                                     {elementwise_columns, timing_columns<ElementwiseRow>},
                                     [&](auto&& emit) { generate(p, emit); });
}

std::uint64_t stream_op_csv(const ElementwiseOptions& options, const HardwareRegistry& registry, std::ostream& out,
                            std::ostream& notes) {
  const ElementwisePlan p = plan_elementwise(options, registry);
  return stream_rows<ElementwiseRow>(p.setup, {elementwise_columns, timing_columns<ElementwiseRow>}, out, notes,
                                     [&](auto&& emit) { generate(p, emit); });
}

Report run_op(const NormOptions& options, const HardwareRegistry& registry) {
  NormPlan p = plan_norm(options, registry);
  return make_report<NormRow>(p.setup, p.rows, "norm", "Normalisation over rows x hidden",
                              {norm_columns, timing_columns<NormRow>}, [&](auto&& emit) { generate(p, emit); });
}

std::uint64_t stream_op_csv(const NormOptions& options, const HardwareRegistry& registry, std::ostream& out,
                            std::ostream& notes) {
  const NormPlan p = plan_norm(options, registry);
  return stream_rows<NormRow>(p.setup, {norm_columns, timing_columns<NormRow>}, out, notes,
                              [&](auto&& emit) { generate(p, emit); });
}

Report run_op(const SoftmaxOptions& options, const HardwareRegistry& registry) {
  SoftmaxPlan p = plan_softmax(options, registry);
  return make_report<SoftmaxRow>(p.setup, p.rows, "softmax", "Softmax over each row",
                                 {softmax_columns, timing_columns<SoftmaxRow>},
                                 [&](auto&& emit) { generate(p, emit); });
}

std::uint64_t stream_op_csv(const SoftmaxOptions& options, const HardwareRegistry& registry, std::ostream& out,
                            std::ostream& notes) {
  const SoftmaxPlan p = plan_softmax(options, registry);
  return stream_rows<SoftmaxRow>(p.setup, {softmax_columns, timing_columns<SoftmaxRow>}, out, notes,
                                 [&](auto&& emit) { generate(p, emit); });
}

}  // namespace roofline::cli
