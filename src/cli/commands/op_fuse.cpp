// roofline op fuse: a chain of operations as separate kernels vs one fused kernel.
#include <fmt/format.h>

#include "op.hpp"
#include "op_engine.hpp"
#include "roofline/core/error.hpp"
#include "roofline/model/fusion.hpp"

namespace roofline::cli {
namespace {

using namespace op_detail;

// The two roofs a chain's math meets on one GPU: linear on the tensor peak of the activation
// type, everything else on the vector peak.
struct ChainMath {
  MathRoof matrix;
  MathRoof vector;
};

struct FuseRow {
  std::string_view gpu;
  std::string_view chain;
  std::string_view kept;  // the intermediates kept on chip
  FuseShape shape;
  const FuseCost* cost = nullptr;
  const Roofs* roofs = nullptr;
  std::optional<PeakClass> matrix_peak, vector_peak;  // unset: the GPU states none
  bool valid = false;                                 // both roofs the chain needs have a peak
  double unfused_s = 0;
  double fused_matrix_s = 0, fused_vector_s = 0, fused_memory_s = 0, fused_s = 0;
  Bound fused_bound = Bound::memory;
  std::optional<PeakClass> fused_binding;  // the peak that binds when compute-bound
  double expected_unfused_s = 0, expected_fused_s = 0;
};

// FLOP/s of a peak of the row's GPU; 0 where it states none (the row's times are then not valid).
double peak_or_zero(const FuseRow& row, const std::optional<PeakClass>& peak) {
  return peak ? *row.roofs->peak(*peak) : 0.0;
}

constexpr std::array<OpColumn<FuseRow>, 25> fuse_columns{{
    {{"gpu", "GPU", 0}, [](const FuseRow& r) { return text(r.gpu); }},
    {{"rows", "rows", 0}, [](const FuseRow& r) { return integer(r.shape.rows); }},
    {{"hidden", "hidden", 0}, [](const FuseRow& r) { return integer(r.shape.hidden); }},
    {{"chain", "chain", 0}, [](const FuseRow& r) { return text(r.chain); }},
    {{"act_dtype", "act", 0}, [](const FuseRow& r) { return text(name_of(r.shape.act)); }, Show::detail},
    {{"weight_dtype", "weights", 0}, [](const FuseRow& r) { return text(name_of(r.shape.weights)); }, Show::detail},
    {{"flops", "FLOPs", 0}, [](const FuseRow& r) { return OpCell{r.cost->unfused.flops}; }},
    {{"unfused_read_bytes", "unfused read [B]", 0},
     [](const FuseRow& r) { return OpCell{r.cost->unfused.bytes_read}; },
     Show::detail},
    {{"unfused_written_bytes", "unfused written [B]", 0},
     [](const FuseRow& r) { return OpCell{r.cost->unfused.bytes_written}; },
     Show::detail},
    {{"unfused_bytes", "unfused [B]", 0}, [](const FuseRow& r) { return OpCell{r.cost->unfused.bytes()}; }},
    {{"fused_read_bytes", "fused read [B]", 0},
     [](const FuseRow& r) { return OpCell{r.cost->fused.bytes_read}; },
     Show::detail},
    {{"fused_written_bytes", "fused written [B]", 0},
     [](const FuseRow& r) { return OpCell{r.cost->fused.bytes_written}; },
     Show::detail},
    {{"fused_bytes", "fused [B]", 0}, [](const FuseRow& r) { return OpCell{r.cost->fused.bytes()}; }},
    {{"on_chip_bytes", "on chip [B]", 0}, [](const FuseRow& r) { return OpCell{r.cost->on_chip_bytes}; }},
    {{"kept_on_chip", "kept on chip", 0}, [](const FuseRow& r) { return text(r.kept); }},
    {{"traffic_reduction", "bytes unfused/fused", 2},
     [](const FuseRow& r) { return OpCell{r.cost->unfused.bytes() / r.cost->fused.bytes()}; }},
    {{"unfused_time_us", "unfused >= [us]", 3}, [](const FuseRow& r) { return number_if(r.valid, r.unfused_s * 1e6); }},
    {{"fused_time_us", "fused >= [us]", 3}, [](const FuseRow& r) { return number_if(r.valid, r.fused_s * 1e6); }},
    {{"speedup", "speedup", 2}, [](const FuseRow& r) { return number_if(r.valid, r.unfused_s / r.fused_s); }},
    {{"fused_binding", "fused binding", 0},
     [](const FuseRow& r) { return r.valid ? text(binding_name(r.fused_binding, r.fused_bound)) : OpCell{}; }},
    {{"matrix_peak_tflops", "tensor peak [TFLOP/s]", 1},
     [](const FuseRow& r) { return number_if(r.matrix_peak.has_value(), peak_or_zero(r, r.matrix_peak) / 1e12); },
     Show::detail},
    {{"vector_peak_tflops", "vector peak [TFLOP/s]", 1},
     [](const FuseRow& r) { return number_if(r.vector_peak.has_value(), peak_or_zero(r, r.vector_peak) / 1e12); },
     Show::detail},
    {{"bandwidth_tbps", "HBM [TB/s]", 2},
     [](const FuseRow& r) { return OpCell{r.roofs->bandwidth / 1e12}; },
     Show::detail},
    {{"expected_unfused_time_us", "expected unfused [us]", 3},
     [](const FuseRow& r) { return number_if(r.valid, r.expected_unfused_s * 1e6); },
     Show::expected},
    {{"expected_fused_time_us", "expected fused [us]", 3},
     [](const FuseRow& r) { return number_if(r.valid, r.expected_fused_s * 1e6); },
     Show::expected},
}};

// One row per chain step and point (table and JSON only): the step as its own kernel.
struct StepRow {
  std::string_view gpu;
  FuseShape shape;
  std::size_t index = 0;
  const ChainStepCost* step = nullptr;
  bool on_chip = false;  // its output stays on chip when fused
  Timing t;
};

constexpr std::array<OpColumn<StepRow>, 10> step_columns{{
    {{"gpu", "GPU", 0}, [](const StepRow& r) { return text(r.gpu); }},
    {{"rows", "rows", 0}, [](const StepRow& r) { return integer(r.shape.rows); }},
    {{"hidden", "hidden", 0}, [](const StepRow& r) { return integer(r.shape.hidden); }},
    {{"step", "step", 0}, [](const StepRow& r) { return integer(static_cast<std::int64_t>(r.index) + 1); }},
    {{"element", "element", 0}, [](const StepRow& r) { return text(name_of(r.step->op)); }},
    {{"width_in", "width in", 0}, [](const StepRow& r) { return integer(r.step->width_in); }},
    {{"width_out", "width out", 0}, [](const StepRow& r) { return integer(r.step->width_out); }},
    {{"output_bytes", "output [B]", 0}, [](const StepRow& r) { return OpCell{r.step->output_bytes}; }},
    {{"output_on_chip", "output on chip", 0}, [](const StepRow& r) { return OpCell{r.on_chip}; }},
    {{"unit", "unit", 0}, [](const StepRow& r) { return text(r.step->matrix ? "tensor" : "vector"); }},
}};

struct FusePlan {
  OpSetup setup;
  Chain chain;
  std::string chain_text;
  std::string kept;
  bool has_linear = false;
  std::vector<std::int64_t> rows_axis, hidden;
  DType act = DType::bf16, weights = DType::bf16;
  ChainMath math;
  std::uint64_t rows = 0;
};

FusePlan plan_fuse(const FuseOptions& o, const HardwareRegistry& registry) {
  FusePlan p;
  p.setup = setup_op("op-fuse", o.op, registry);
  p.chain = parse_chain(o.chain);
  p.chain_text = to_string(p.chain);
  p.rows_axis = axis("--rows", o.rows);
  p.hidden = axis("--hidden", o.hidden);
  const DType base = parse_dtype(o.op.dtype);
  p.act = o.act ? parse_dtype(*o.act, "--act") : base;
  p.weights = o.weights ? parse_dtype(*o.weights, "--weights") : base;
  for (const ChainElement& element : p.chain.view()) p.has_linear = p.has_linear || element.op == ChainOp::linear;
  for (std::size_t i = 0; i + 1 < p.chain.size; ++i) {
    if (!p.kept.empty()) p.kept += ", ";
    p.kept += fmt::format("{}->{}", name_of(p.chain.elements[i].op), name_of(p.chain.elements[i + 1].op));
  }
  // Every width first (swiglu needs an even one), then the largest point (overflow), so that a
  // bad point fails before any row is written.
  for (std::int64_t hidden : p.hidden) (void)fuse_cost(p.chain, {1, hidden, p.act, p.weights});
  (void)fuse_cost(p.chain, {max_of(p.rows_axis), max_of(p.hidden), p.act, p.weights});
  p.math = {{MathRoof::Unit::matrix, p.act}, {MathRoof::Unit::vector, p.act}};
  const std::array<std::size_t, 3> sizes{p.setup.gpus.size(), p.rows_axis.size(), p.hidden.size()};
  p.rows = sweep_point_count(sizes);

  Report& report = p.setup.report;
  report.inputs.update({{"chain", p.chain_text},
                        {"rows", o.rows},
                        {"hidden", o.hidden},
                        {"act", name_of(p.act)},
                        {"weights", name_of(p.weights)}});
  report.notes.push_back(
      "unfused: each element is its own kernel that reads its input from HBM and writes its output; fused: one "
      "kernel reads the chain's input, the weights and any residual or norm parameters, and writes the last output; "
      "the intermediates (kept_on_chip) never reach HBM");
  report.notes.push_back(
      "unfused time = the sum of each kernel's max(compute, memory); fused time = max(linear FLOPs / tensor peak, "
      "other FLOPs / vector peak, fused bytes / bandwidth); 1 TB/s = 1e12 B/s; peaks are dense");
  if (p.chain.size == 1) report.notes.push_back("a chain of one element has nothing to fuse");
  bool reduction_after_linear = false;
  for (std::size_t i = 1; i < p.chain.size; ++i) {
    const ChainOp op = p.chain.elements[i].op;
    reduction_after_linear =
        reduction_after_linear || op == ChainOp::rmsnorm || op == ChainOp::layernorm || op == ChainOp::softmax;
  }
  if (p.has_linear && reduction_after_linear) {
    report.notes.push_back(
        "a row reduction (norm, softmax) fused behind a linear needs whole rows in one block (tile n = width): the "
        "fused count is the ideal such a kernel reaches");
  }
  for (const ChainElement& element : p.chain.view()) {
    for (const ChainOpInfo& op : chain_ops()) {
      if (op.op == element.op && element.op != ChainOp::linear) {
        report.notes.push_back(fmt::format("{}: {}", op.name, op.description));
      }
    }
  }
  for (const Roofs& roofs : p.setup.roofs) {
    if ((p.has_linear && !p.math.matrix.resolve(roofs)) || !p.math.vector.resolve(roofs)) {
      report.notes.push_back(fmt::format("{} states no peak for this math: its time columns are empty", roofs.gpu_id));
    }
  }
  add_dtype_notes(report, {p.act, p.weights});
  return p;
}

// Times of one point; calls step(index, timing) for each step as its own kernel.
template <class Step>
void time_chain(FuseRow& row, const FuseCost& cost, const ChainMath& math, const std::optional<Efficiency>& e,
                Step&& step) {
  const Roofs& roofs = *row.roofs;
  row.valid = row.vector_peak.has_value();
  row.unfused_s = 0;
  row.expected_unfused_s = 0;
  for (std::size_t i = 0; i < cost.size; ++i) {
    const ChainStepCost& s = cost.steps[i];
    const Timing t = time_on(s.cost, roofs, s.matrix ? math.matrix : math.vector, e);
    row.valid = row.valid && t.has_peak();
    row.unfused_s += t.time.time_s;
    row.expected_unfused_s += t.expected_s;
    step(i, t);
  }
  const double bandwidth = roofs.bandwidth;
  row.fused_matrix_s = cost.matrix_flops > 0 ? cost.matrix_flops / peak_or_zero(row, row.matrix_peak) : 0.0;
  row.fused_vector_s = cost.vector_flops > 0 ? cost.vector_flops / peak_or_zero(row, row.vector_peak) : 0.0;
  row.fused_memory_s = cost.fused.bytes() / bandwidth;
  const bool matrix_binds = row.fused_matrix_s >= row.fused_vector_s;
  const double compute_s = matrix_binds ? row.fused_matrix_s : row.fused_vector_s;
  row.fused_bound = compute_s < row.fused_memory_s ? Bound::memory : Bound::compute;
  row.fused_s = row.fused_bound == Bound::memory ? row.fused_memory_s : compute_s;
  row.fused_binding = matrix_binds ? row.matrix_peak : row.vector_peak;
  if (e) row.expected_fused_s = std::max(compute_s / e->compute, row.fused_memory_s / e->memory);
}

template <class Emit, class EmitStep>
void generate(const FusePlan& p, Emit&& emit, EmitStep&& emit_step) {
  const std::array<std::size_t, 2> sizes{p.rows_axis.size(), p.hidden.size()};
  FuseRow row;
  row.chain = p.chain_text;
  row.kept = p.kept;
  StepRow step_row;
  for (const Roofs& roofs : p.setup.roofs) {
    row.gpu = step_row.gpu = roofs.gpu_id;
    row.roofs = &roofs;
    row.matrix_peak = p.math.matrix.resolve(roofs);
    row.vector_peak = p.math.vector.resolve(roofs);
    SweepCursor at(sizes);
    do {
      row.shape = step_row.shape = {p.rows_axis[at[0]], p.hidden[at[1]], p.act, p.weights};
      const FuseCost cost = fuse_cost(p.chain, row.shape);
      row.cost = &cost;
      time_chain(row, cost, p.math, p.setup.efficiency, [&](std::size_t i, const Timing& t) {
        step_row.index = i;
        step_row.step = &cost.steps[i];
        step_row.on_chip = i + 1 < cost.size;
        step_row.t = t;
        emit_step(step_row);
      });
      emit(row);
    } while (at.next());
  }
}

}  // namespace

Report run_op(const FuseOptions& options, const HardwareRegistry& registry) {
  FusePlan p = plan_fuse(options, registry);
  const bool expected = p.setup.efficiency.has_value();
  const auto step_columns_selected =
      select_columns<StepRow>(p.setup.format, expected, {step_columns, timing_columns<StepRow>});
  Table steps{"steps", "Each element as its own kernel (unfused)", {}, {}};
  for (const OpColumn<StepRow>* c : step_columns_selected) steps.columns.push_back(c->column);
  check_report_rows(p.rows * (p.chain.size + 1));
  const auto no_rows = [](const FuseRow&) {};
  generate(p, no_rows, [&](const StepRow& row) {
    std::vector<Cell> cells;
    for (const OpColumn<StepRow>* c : step_columns_selected) cells.push_back(to_cell(c->value(row)));
    steps.rows.push_back(std::move(cells));
  });
  p.setup.report.tables.push_back(std::move(steps));
  const auto no_steps = [](const StepRow&) {};
  return make_report<FuseRow>(p.setup, p.rows, "fuse", "Fusion: separate kernels vs one fused kernel",
                              {std::span<const OpColumn<FuseRow>>(fuse_columns)},
                              [&](auto&& emit) { generate(p, emit, no_steps); });
}

std::uint64_t stream_op_csv(const FuseOptions& options, const HardwareRegistry& registry, std::ostream& out,
                            std::ostream& notes) {
  const FusePlan p = plan_fuse(options, registry);
  const auto no_steps = [](const StepRow&) {};
  return stream_rows<FuseRow>(p.setup, {std::span<const OpColumn<FuseRow>>(fuse_columns)}, out, notes,
                              [&](auto&& emit) { generate(p, emit, no_steps); });
}

}  // namespace roofline::cli
