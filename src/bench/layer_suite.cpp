#include "roofline/layer_suite.hpp"

#include <fmt/format.h>

#include "roofline/attention.hpp"
#include "roofline/kernel_tiles.hpp"
#include "roofline/ops.hpp"

namespace roofline::bench::layer {
namespace {

using C = ColumnOf<BenchmarkResult>;
namespace col = columns;

constexpr std::array<C, 22> layer_columns{{
    col::id,
    col::implementation,
    col::status,
    {{"phase", "phase", 0}, &param<"phase">},
    {{"batch", "batch", 0}, &param<"batch">},
    {{"seq", "new tokens", 0}, &param<"seq">},
    {{"context", "context", 0}, &param<"context">},
    {{"tokens", "tokens", 0}, &param<"tokens">},
    col::model_flops,
    col::model_bytes,
    col::median_us,
    col::min_us,
    col::max_us,
    col::spread_pct,
    col::samples,
    col::launches_per_sample,
    col::graph,
    {{"direct_us", "direct [us]", 2}, &param<"direct_us">},
    {{"stages_sum_us", "sum of stages [us]", 2}, &param<"stages_sum_us">},
    col::tflops,
    col::bandwidth_tbps,
    col::detail,
}};

constexpr std::array<C, 22> stage_columns{{
    col::id,
    col::implementation,
    col::status,
    {{"layer", "layer", 0}, &param<"layer">},
    {{"index", "#", 0}, &param<"index">},
    {{"stage", "stage", 0}, &param<"stage">},
    {{"kernel", "kernel", 0}, &param<"kernel">},
    {{"table", "calibration table", 0}, &param<"table">},
    {{"model", "model", 0}, &param<"model">},
    {{"tokens", "tokens", 0}, &param<"tokens">},
    col::model_flops,
    col::model_bytes,
    col::median_us,
    col::min_us,
    col::max_us,
    col::spread_pct,
    col::samples,
    {{"share_pct", "% of layer", 1}, &param<"share_pct">},
    col::tflops,
    col::bandwidth_tbps,
    {{"intensity", "FLOP/B", 2}, &param<"intensity">},
    col::detail,
}};

const std::array<GroupLayout, 2> group_layouts{{
    {"layer",
     "Decoder layer (LLaMA-3-70B shape, bf16, one GPU): the whole step replayed as one CUDA graph; model FLOPs and "
     "bytes are the sums of the stages'",
     layer_columns},
    {"layer_stages",
     "Layer stages: each timed inside the layer (direct launches, events between stages), with the model's FLOPs and "
     "bytes",
     stage_columns},
}};

std::vector<CaseInfo> list_cases() {
  std::vector<CaseInfo> list;
  for (const Case& c : cases) list.push_back({"layer", "layer", case_id(c), std::string(name_of(c.linear)), c.quick});
  return list;
}

// A linear layer: in_features -> out_features on `rows` tokens. Decode runs it as a GEMV (the
// weight read once for all tokens), prefill as a GEMM; the model counts both the same way.
StagePlan plan_of(Stage stage, std::string_view model, Basis basis) {
  return {stage, name_of(stage), model, basis.cost, std::move(basis)};
}

StagePlan linear_stage(Stage stage, const Case& c, std::int64_t out_features, std::int64_t in_features, DType dtype) {
  const std::int64_t rows = tokens(c);
  if (c.phase == Phase::decode) {
    return plan_of(stage, "gemv_cost", gemv_basis({out_features, in_features, rows, dtype, dtype}));
  }
  return plan_of(stage, "gemm_cost", gemm_basis({rows, out_features, in_features, 1, dtype, dtype, dtype}));
}

StagePlan copy_stage(Stage stage, std::int64_t elements, DType dtype) {
  return plan_of(stage, "elementwise_cost", elementwise_basis({elements, 1, 1, 0, dtype}));
}

}  // namespace

std::int64_t tokens(const Case& c) {
  return c.batch * c.seq;
}

AttentionShape attention_shape(const Case& c, const ModelShape& m) {
  AttentionShape shape;
  shape.batch = c.batch;
  shape.heads = m.heads;
  shape.kv_heads = m.kv_heads;
  shape.head_dim = m.head_dim;
  shape.seq = c.seq;
  shape.kv_seq = c.context;
  shape.causal = c.phase == Phase::prefill;
  shape.act = m.dtype;
  shape.kv = m.dtype;
  return shape;
}

FlashTiling attention_tiling(Phase phase) {
  // Only the minimum traffic (.hbm) is reported, so the tiles are those of the kernels that run.
  return phase == Phase::decode ? FlashTiling{1, kernel_tiles::decode_attention_block_n}
                                : FlashTiling{kernel_tiles::flash_wgmma.block_m, kernel_tiles::flash_wgmma.block_n};
}

OpCost attention_cost(const Case& c, const ModelShape& m) {
  return flash_attention_cost(attention_shape(c, m), attention_tiling(c.phase)).hbm;
}

std::string_view name_of(Phase phase) {
  return phase == Phase::decode ? "decode" : "prefill";
}

std::string_view name_of(Linear linear) {
  return linear == Linear::roofline ? "roofline" : "cublas";
}

std::string_view name_of(Stage stage) {
  switch (stage) {
    case Stage::rmsnorm1: return "rmsnorm1";
    case Stage::qkv: return "qkv";
    case Stage::kv_write: return "kv_write";
    case Stage::qkv_split: return "qkv_split";
    case Stage::attention: return "attention";
    case Stage::attn_merge: return "attn_merge";
    case Stage::o_proj: return "o_proj";
    case Stage::residual1: return "residual1";
    case Stage::rmsnorm2: return "rmsnorm2";
    case Stage::gate_up: return "gate_up";
    case Stage::swiglu: return "swiglu";
    case Stage::down: return "down";
    case Stage::residual2: return "residual2";
  }
  return "?";
}

std::string case_id(const Case& c) {
  if (c.phase == Phase::decode) return fmt::format("layer.decode.b{}.ctx{}.{}", c.batch, c.context, name_of(c.linear));
  return fmt::format("layer.prefill.n{}.{}", c.seq, name_of(c.linear));
}

std::string stage_id(const Case& c, Stage stage) {
  // Ids are dotted words of letters and digits: "kv_write" becomes "kvwrite".
  std::string word(name_of(stage));
  std::erase(word, '_');
  return fmt::format("{}.{}", case_id(c), word);
}

std::vector<StagePlan> stages(const Case& c, const ModelShape& m) {
  const std::int64_t rows = tokens(c);
  const DType dt = m.dtype;
  const NormShape norm{rows, m.hidden, NormKind::rmsnorm, false, dt};
  const ElementwiseFnInfo& add = info(ElementwiseFn::add);
  const ElementwiseFnInfo& swiglu = info(ElementwiseFn::swiglu);
  const StagePlan residual =
      plan_of(Stage::residual1, "elementwise_cost",
              elementwise_basis({rows * m.hidden, add.inputs, add.outputs, add.flops_per_element, dt}));

  const AttentionShape attention = attention_shape(c, m);

  std::vector<StagePlan> plan;
  plan.push_back(plan_of(Stage::rmsnorm1, "norm_cost", norm_basis(norm)));
  plan.push_back(linear_stage(Stage::qkv, c, m.qkv_width(), m.hidden, dt));
  if (c.phase == Phase::decode) {
    // The new token's k and v into the cache: 2 x kv_heads x d elements per token, read and written.
    plan.push_back(copy_stage(Stage::kv_write, rows * 2 * m.kv_heads * m.head_dim, dt));
  } else {
    plan.push_back(copy_stage(Stage::qkv_split, rows * m.qkv_width(), dt));
  }
  plan.push_back(plan_of(Stage::attention, "flash_attention_cost", flash_step_basis(attention, attention_cost(c, m))));
  if (c.phase == Phase::prefill) plan.push_back(copy_stage(Stage::attn_merge, rows * m.q_width(), dt));
  plan.push_back(linear_stage(Stage::o_proj, c, m.hidden, m.q_width(), dt));
  plan.push_back(residual);
  plan.push_back(plan_of(Stage::rmsnorm2, "norm_cost", norm_basis(norm)));
  plan.push_back(linear_stage(Stage::gate_up, c, 2 * m.ffn, m.hidden, dt));
  plan.push_back(
      plan_of(Stage::swiglu, "elementwise_cost",
              elementwise_basis({rows * m.ffn, swiglu.inputs, swiglu.outputs, swiglu.flops_per_element, dt})));
  plan.push_back(linear_stage(Stage::down, c, m.hidden, m.ffn, dt));
  StagePlan second = residual;
  second.stage = Stage::residual2;
  second.name = name_of(Stage::residual2);
  plan.push_back(second);
  return plan;
}

OpCost layer_cost(const Case& c, const ModelShape& model) {
  OpCost total;
  for (const StagePlan& s : stages(c, model)) {
    total.flops += s.cost.flops;
    total.bytes_read += s.cost.bytes_read;
    total.bytes_written += s.cost.bytes_written;
  }
  return total;
}

std::string implementation_table(const Case& c, const StagePlan& plan, std::string_view implementation,
                                 const ModelShape& model) {
  if (implementation.empty()) return {};
  if (plan.stage == Stage::attention) {
    return attention_implementation_table(implementation, model.dtype, model.head_dim, c.phase == Phase::prefill);
  }
  return fmt::format("{}.{}", plan.basis.best_table, implementation);
}

std::vector<BenchmarkResult> make_results(const Case& c, std::span<const StageKernel> kernels) {
  std::vector<BenchmarkResult> results;
  BenchmarkResult whole;
  whole.suite = "layer";
  whole.group = "layer";
  whole.id = case_id(c);
  whole.implementation = std::string(name_of(c.linear));
  whole.cost = layer_cost(c);
  whole.parameters = {{"phase", Cell{std::string(name_of(c.phase))}},
                      {"batch", Cell{c.batch}},
                      {"seq", Cell{c.seq}},
                      {"context", Cell{c.context}},
                      {"tokens", Cell{tokens(c)}}};
  results.push_back(std::move(whole));
  const std::vector<StagePlan> plan = stages(c);
  for (std::size_t i = 0; i < plan.size(); ++i) {
    BenchmarkResult r;
    r.suite = "layer";
    r.group = "layer_stages";
    r.id = stage_id(c, plan[i].stage);
    r.implementation = std::string(name_of(c.linear));
    r.cost = plan[i].cost;
    r.parameters = {{"layer", Cell{case_id(c)}},
                    {"index", Cell{static_cast<std::int64_t>(i)}},
                    {"stage", Cell{std::string(plan[i].name)}},
                    {"kernel", i < kernels.size() ? Cell{kernels[i].name} : Cell{}},
                    {"table", i < kernels.size() && !kernels[i].implementation.empty()
                                  ? Cell{implementation_table(c, plan[i], kernels[i].implementation)}
                                  : Cell{}},
                    {"model", Cell{std::string(plan[i].model)}},
                    {"tokens", Cell{tokens(c)}},
                    {"intensity", Cell{plan[i].cost.intensity()}}};
    results.push_back(std::move(r));
  }
  return results;
}

const SuiteInfo& suite() {
  static const SuiteInfo info{
      "layer",
      "A LLaMA-3-70B decoder layer (bf16, one GPU) at decode and prefill: the whole step and every stage, with the "
      "model's FLOPs and bytes per stage",
      group_layouts, std::span<const Target>{}, &list_cases};
  return info;
}

}  // namespace roofline::bench::layer
