// roofline op gemm | gemv: matrix products, bounded by the tensor peak of the activation type.
#include <fmt/format.h>

#include "op.hpp"
#include "op_engine.hpp"
#include "roofline/core/dtype.hpp"

namespace roofline::cli {
namespace {

using namespace op_detail;

struct GemmRow {
  std::string_view gpu;
  GemmShape shape;
  Timing t;
};

constexpr std::array<OpColumn<GemmRow>, 8> gemm_columns{{
    {{"gpu", "GPU", 0}, [](const GemmRow& r) { return text(r.gpu); }},
    {{"m", "m", 0}, [](const GemmRow& r) { return integer(r.shape.m); }},
    {{"n", "n", 0}, [](const GemmRow& r) { return integer(r.shape.n); }},
    {{"k", "k", 0}, [](const GemmRow& r) { return integer(r.shape.k); }},
    {{"batch", "batch", 0}, [](const GemmRow& r) { return integer(r.shape.batch); }},
    {{"act_dtype", "act", 0}, [](const GemmRow& r) { return text(name_of(r.shape.a)); }},
    {{"weight_dtype", "weights", 0}, [](const GemmRow& r) { return text(name_of(r.shape.b)); }},
    {{"out_dtype", "out", 0}, [](const GemmRow& r) { return text(name_of(r.shape.c)); }, Show::detail},
}};

struct GemmPlan {
  OpSetup setup;
  std::vector<std::int64_t> m, n, k, batch;
  DType act = DType::bf16, weights = DType::bf16, out = DType::bf16;
  MathRoof math;  // what bounds the FLOPs
  std::uint64_t rows = 0;
};

GemmPlan plan_gemm(const GemmOptions& o, const HardwareRegistry& registry) {
  GemmPlan p;
  p.setup = setup_op("op-gemm", o.op, registry);
  p.m = axis("--m", o.m);
  p.n = axis("--n", o.n);
  p.k = axis("--k", o.k);
  p.batch = axis("--batch", o.batch);
  const DType base = parse_dtype(o.op.dtype);
  p.act = o.act ? parse_dtype(*o.act, "--act") : base;
  p.weights = o.weights ? parse_dtype(*o.weights, "--weights") : base;
  p.out = o.out ? parse_dtype(*o.out, "--out") : p.act;
  // The largest point first: a byte count that overflows fails before any row is written.
  (void)gemm_cost({max_of(p.m), max_of(p.n), max_of(p.k), max_of(p.batch), p.act, p.weights, p.out});
  p.math = {MathRoof::Unit::matrix, p.act};
  const std::array<std::size_t, 5> sizes{p.setup.gpus.size(), p.m.size(), p.n.size(), p.k.size(), p.batch.size()};
  p.rows = sweep_point_count(sizes);

  Report& report = p.setup.report;
  report.inputs.update({{"m", o.m},
                        {"n", o.n},
                        {"k", o.k},
                        {"batch", o.batch},
                        {"act", name_of(p.act)},
                        {"weights", name_of(p.weights)},
                        {"out", name_of(p.out)}});
  report.notes.push_back(fmt::format(
      "FLOPs = 2 m n k batch; bytes: A (m x k, {}) and B (k x n, {}) read once, C (m x n, {}) written once: the "
      "minimum traffic (a tiled kernel re-reads A and B; see docs/formulas.md)",
      name_of(p.act), name_of(p.weights), name_of(p.out)));
  add_roof_notes(report, p.setup.roofs, p.math,
                 fmt::format("{} tensor peak (the activation type sets the math)", name_of(p.act)));
  add_dtype_notes(report, {p.act, p.weights, p.out});
  return p;
}

template <class Emit>
void generate(const GemmPlan& p, Emit&& emit) {
  const std::array<std::size_t, 4> sizes{p.m.size(), p.n.size(), p.k.size(), p.batch.size()};
  GemmRow row;
  for (const Roofs& roofs : p.setup.roofs) {
    row.gpu = roofs.gpu_id;
    SweepCursor at(sizes);
    do {
      row.shape = {p.m[at[0]], p.n[at[1]], p.k[at[2]], p.batch[at[3]], p.act, p.weights, p.out};
      row.t = time_on(gemm_cost(row.shape), roofs, p.math, p.setup.efficiency);
      if (p.setup.calibrated()) apply_calibration(row.t, p.setup, gemm_basis(row.shape));
      emit(row);
    } while (at.next());
  }
}

struct GemvRow {
  std::string_view gpu;
  GemvShape shape;
  Timing t;
};

constexpr std::array<OpColumn<GemvRow>, 6> gemv_columns{{
    {{"gpu", "GPU", 0}, [](const GemvRow& r) { return text(r.gpu); }},
    {{"m", "m", 0}, [](const GemvRow& r) { return integer(r.shape.m); }},
    {{"k", "k", 0}, [](const GemvRow& r) { return integer(r.shape.k); }},
    {{"batch", "batch", 0}, [](const GemvRow& r) { return integer(r.shape.batch); }},
    {{"weight_dtype", "weights", 0}, [](const GemvRow& r) { return text(name_of(r.shape.weight)); }},
    {{"act_dtype", "act", 0}, [](const GemvRow& r) { return text(name_of(r.shape.activation)); }},
}};

struct GemvPlan {
  OpSetup setup;
  std::vector<std::int64_t> m, k, batch;
  DType act = DType::bf16, weights = DType::bf16;
  MathRoof math;  // what bounds the FLOPs
  std::uint64_t rows = 0;
};

GemvPlan plan_gemv(const GemvOptions& o, const HardwareRegistry& registry) {
  GemvPlan p;
  p.setup = setup_op("op-gemv", o.op, registry);
  p.m = axis("--m", o.m);
  p.k = axis("--k", o.k);
  p.batch = axis("--batch", o.batch);
  const DType base = parse_dtype(o.op.dtype);
  p.act = o.act ? parse_dtype(*o.act, "--act") : base;
  p.weights = o.weights ? parse_dtype(*o.weights, "--weights") : base;
  (void)gemv_cost({max_of(p.m), max_of(p.k), max_of(p.batch), p.weights, p.act, std::nullopt});
  p.math = {MathRoof::Unit::matrix, p.act};
  const std::array<std::size_t, 4> sizes{p.setup.gpus.size(), p.m.size(), p.k.size(), p.batch.size()};
  p.rows = sweep_point_count(sizes);

  Report& report = p.setup.report;
  report.inputs.update(
      {{"m", o.m}, {"k", o.k}, {"batch", o.batch}, {"act", name_of(p.act)}, {"weights", name_of(p.weights)}});
  report.notes.push_back(fmt::format(
      "FLOPs = 2 m k batch; bytes: W (m x k, {}) read once for the whole batch, x (batch x k) read and y (batch x m) "
      "written in {}",
      name_of(p.weights), name_of(p.act)));
  add_roof_notes(report, p.setup.roofs, p.math,
                 fmt::format("{} tensor peak (the activation type sets the math)", name_of(p.act)));
  add_dtype_notes(report, {p.act, p.weights});
  return p;
}

template <class Emit>
void generate(const GemvPlan& p, Emit&& emit) {
  const std::array<std::size_t, 3> sizes{p.m.size(), p.k.size(), p.batch.size()};
  GemvRow row;
  for (const Roofs& roofs : p.setup.roofs) {
    row.gpu = roofs.gpu_id;
    SweepCursor at(sizes);
    do {
      row.shape = {p.m[at[0]], p.k[at[1]], p.batch[at[2]], p.weights, p.act, std::nullopt};
      row.t = time_on(gemv_cost(row.shape), roofs, p.math, p.setup.efficiency);
      if (p.setup.calibrated()) apply_calibration(row.t, p.setup, gemv_basis(row.shape));
      emit(row);
    } while (at.next());
  }
}

}  // namespace

Report run_op(const GemmOptions& options, const HardwareRegistry& registry) {
  GemmPlan p = plan_gemm(options, registry);
  return make_report<GemmRow>(p.setup, p.rows, "gemm", "GEMM: C = A . B", {gemm_columns, timing_columns<GemmRow>},
                              [&](auto&& emit) { generate(p, emit); });
}

std::uint64_t stream_op_csv(const GemmOptions& options, const HardwareRegistry& registry, std::ostream& out,
                            std::ostream& notes) {
  const GemmPlan p = plan_gemm(options, registry);
  return stream_rows<GemmRow>(p.setup, {gemm_columns, timing_columns<GemmRow>}, out, notes,
                              [&](auto&& emit) { generate(p, emit); });
}

Report run_op(const GemvOptions& options, const HardwareRegistry& registry) {
  GemvPlan p = plan_gemv(options, registry);
  return make_report<GemvRow>(p.setup, p.rows, "gemv", "GEMV: y = W . x, W read once per batch",
                              {gemv_columns, timing_columns<GemvRow>}, [&](auto&& emit) { generate(p, emit); });
}

std::uint64_t stream_op_csv(const GemvOptions& options, const HardwareRegistry& registry, std::ostream& out,
                            std::ostream& notes) {
  const GemvPlan p = plan_gemv(options, registry);
  return stream_rows<GemvRow>(p.setup, {gemv_columns, timing_columns<GemvRow>}, out, notes,
                              [&](auto&& emit) { generate(p, emit); });
}

}  // namespace roofline::cli
