#include "roofline/bench/layer_suite.hpp"

#include <fmt/format.h>

#include "roofline/basis/calibration_tables.hpp"
#include "roofline/core/embedded_file.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/model_presets.hpp"
#include "roofline/model/attention.hpp"
#include "roofline/model/kernel_tiles.hpp"
#include "roofline/model/ops.hpp"

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
     "Decoder layer (LLaMA-3-70B shape, bf16 or FP8, one GPU): the whole step replayed as one CUDA graph; model FLOPs "
     "and bytes are the sums of the stages'",
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

// The name of the model function that counts an op, for the report's "model" column.
std::string_view cost_function_of(const DecoderOp& op) {
  if (op.kind == OpKind::kv_append) return "kv_append_cost";
  if (op.kind == OpKind::quantize) return "quantize_cost";
  if (op.kind == OpKind::attention) return "flash_attention_cost";
  if (std::holds_alternative<GemvShape>(op.shape)) return "gemv_cost";
  if (std::holds_alternative<GemmShape>(op.shape)) return "gemm_cost";
  if (std::holds_alternative<NormShape>(op.shape)) return "norm_cost";
  return "elementwise_cost";
}

// The stages that runs recorded before the layer ran the ops of the decoder-step description (up
// to 2026-11-30 run 3) and that it no longer has: RMSNorm without the residual, the residual adds
// of their own, and the prefill's move of Q, K and V to head-major. Their bases, as those runs
// counted them, keep the committed runs validating with the numbers they were taken with.
std::optional<Basis> earlier_stage_basis(const Case& c, std::string_view word) {
  const ModelSpec& m = layer_model();
  const std::int64_t rows = tokens(c);
  if (word == "rmsnorm1" || word == "rmsnorm2")
    return norm_basis({rows, m.hidden, NormKind::rmsnorm, false, DType::bf16});
  if (word == "residual1" || word == "residual2") {
    const ElementwiseFnInfo& add = info(ElementwiseFn::add);
    return elementwise_basis({rows * m.hidden, add.inputs, add.outputs, add.flops_per_element, DType::bf16});
  }
  if (word == "qkvsplit") {
    const AttentionSpec& a = m.attention;
    return elementwise_basis({rows * (a.heads + 2 * a.kv_heads) * a.head_dim, 1, 1, 0.0, DType::bf16});
  }
  return std::nullopt;
}

}  // namespace

std::int64_t tokens(const Case& c) {
  return c.batch * c.seq;
}

bool quantized_linears(const Case& c) {
  if (!c.formats.fp8()) return false;
  return c.phase == Phase::prefill || c.linear == Linear::cublas || tokens(c) > roofline_gemv_max_batch;
}

const ModelSpec& layer_model() {
  static const ModelSpec model = [] {
    for (const EmbeddedFile& file : bundled_model_files()) {
      if (file.path.ends_with("/llama-3.1-70b.json")) {
        return load_model_document(file.contents, "bundled:" + std::string(file.path));
      }
    }
    throw InputError("the layer suite's model, the bundled preset llama-3.1-70b, is not in this build");
  }();
  return model;
}

const LayerNumerics& layer_numerics() {
  // meta-llama/Llama-3.1-70B config.json (the preset's source): "rms_norm_eps": 1e-05,
  // "rope_theta": 500000.0.
  static constexpr LayerNumerics numerics{1e-5F, 500000.0F};
  return numerics;
}

std::vector<DecoderOp> layer_ops(const Case& c) {
  const ModelSpec& m = layer_model();
  DescribeOptions options;
  options.kernels.decode_tiles = attention_tiling(Phase::decode);
  options.kernels.prefill_tiles = attention_tiling(Phase::prefill);
  // The project's flash kernel reads head-major Q, K, V and writes head-major outputs.
  options.kernels.head_major_prefill = true;
  options.kernels.quantized_decode_linears = quantized_linears(c);
  const StepShape step{c.phase == Phase::decode ? StepPhase::decode : StepPhase::prefill, tokens(c), c.context};
  StepFormats formats;
  formats.weights = c.formats.weights;
  formats.embeddings = c.formats.activations;
  formats.activations = c.formats.activations;
  formats.kv = c.formats.kv;
  // The suite's FP8 kernels are Hopper's (sm_90a), which multiplies e4m3 at its tensor rate.
  formats.matmul = c.formats.weights;
  return describe_layer(m, shard(m, 1, 1), formats, step, false, options);
}

namespace {

DecoderOp attention_op(const Case& c) {
  for (DecoderOp& op : layer_ops(c)) {
    if (op.kind == OpKind::attention) return std::move(op);
  }
  throw InputError(fmt::format("{}: the layer has no attention op", case_id(c)));
}

}  // namespace

AttentionShape attention_shape(const Case& c) {
  return std::get<AttentionShape>(attention_op(c).shape);
}

FlashTiling attention_tiling(Phase phase) {
  // Only the minimum traffic (.hbm) is reported, so the tiles are those of the kernels that run
  // at the layer model's head dim.
  const kernel_tiles::FlashTiling prefill =
      kernel_tiles::flash_wgmma(static_cast<int>(layer_model().attention.head_dim));
  return phase == Phase::decode ? FlashTiling{1, kernel_tiles::decode_attention_block_n}
                                : FlashTiling{prefill.block_m, prefill.block_n};
}

OpCost attention_cost(const Case& c) {
  return attention_op(c).cost;
}

std::string_view name_of(Phase phase) {
  return phase == Phase::decode ? "decode" : "prefill";
}

std::string_view name_of(Linear linear) {
  return linear == Linear::roofline ? "roofline" : "cublas";
}

std::string case_id(const Case& c) {
  // bf16 ids have no format word: they are the ids every committed run recorded.
  const std::string_view format = c.formats.fp8() ? "fp8." : "";
  if (c.phase == Phase::decode) {
    return fmt::format("layer.decode.{}b{}.ctx{}.{}", format, c.batch, c.context, name_of(c.linear));
  }
  return fmt::format("layer.prefill.{}n{}.{}", format, c.seq, name_of(c.linear));
}

std::string stage_word(std::string_view op_name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 5> recorded{{{"qkv_proj", "qkv"},
                                                                                          {"kv_append", "kvwrite"},
                                                                                          {"ffn_gate_up", "gateup"},
                                                                                          {"ffn_act", "swiglu"},
                                                                                          {"ffn_down", "down"}}};
  for (const auto& [name, word] : recorded) {
    if (name == op_name) return std::string(word);
  }
  // Ids are dotted words of letters and digits: "attn_norm" becomes "attnnorm".
  std::string word(op_name);
  std::erase(word, '_');
  return word;
}

std::string stage_id(const Case& c, std::string_view op_name) {
  return fmt::format("{}.{}", case_id(c), stage_word(op_name));
}

std::vector<StagePlan> stages(const Case& c) {
  std::vector<StagePlan> plan;
  for (DecoderOp& op : layer_ops(c)) {
    Basis basis = std::get<Basis>(basis_of(op));
    const std::string_view name = op.name;
    const std::string_view model = cost_function_of(op);
    const OpCost cost = op.cost;
    plan.push_back({std::move(op), name, model, cost, std::move(basis)});
  }
  return plan;
}

OpCost layer_cost(const Case& c) {
  OpCost total;
  for (const StagePlan& s : stages(c)) {
    total.flops += s.cost.flops;
    total.bytes_read += s.cost.bytes_read;
    total.bytes_written += s.cost.bytes_written;
  }
  return total;
}

std::string implementation_table(const Case& c, const StagePlan& plan, std::string_view implementation) {
  if (implementation.empty()) return {};
  if (plan.op.kind == OpKind::attention) {
    const auto& shape = std::get<AttentionShape>(plan.op.shape);
    return attention_implementation_table(implementation, shape.act, shape.head_dim, c.phase == Phase::prefill);
  }
  return calibration_tables::implementation(plan.basis.best_table, implementation);
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
    r.id = stage_id(c, plan[i].name);
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

const Case* find_case(std::string_view id) {
  for (const Case& c : cases) {
    if (case_id(c) == id) return &c;
  }
  return nullptr;
}

std::string stage_word_of(std::string_view stage_id) {
  const std::size_t dot = stage_id.rfind('.');
  return std::string(dot == std::string_view::npos ? stage_id : stage_id.substr(dot + 1));
}

std::optional<StageOperation> stage_operation(const Case& c, std::string_view word) {
  for (StagePlan& plan : stages(c)) {
    if (stage_word(plan.name) == word) return StageOperation{std::string(plan.name), std::move(plan.basis)};
  }
  if (std::optional<Basis> earlier = earlier_stage_basis(c, word))
    return StageOperation{std::string(word), std::move(*earlier)};
  return std::nullopt;
}

const SuiteInfo& suite() {
  static const SuiteInfo info{
      "layer",
      "A LLaMA-3-70B decoder layer (bf16, and FP8 as serving engines run it; one GPU) at decode and prefill: the "
      "whole step and every stage, with the model's FLOPs and bytes per stage",
      group_layouts, std::span<const Target>{}, &list_cases};
  return info;
}

}  // namespace roofline::bench::layer
