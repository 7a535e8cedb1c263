// roofline llm: one deployment of a model on GPUs: memory, KV cache, capacity, and the time of a
// decode step and of a prefill, op by op.
#include "llm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "commands.hpp"
#include "llm_sweep.hpp"
#include "roofline/basis/calibration.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/expert_parallel.hpp"
#include "roofline/llm/llm.hpp"
#include "roofline/llm/llm_report.hpp"
#include "roofline/llm/speculative.hpp"
#include "roofline/plot/report_figures.hpp"
#include "summary_table.hpp"

namespace roofline::cli {
namespace {

struct StageRow {
  std::int64_t stage = 0;
  StageMemory memory;
};

constexpr std::array<ColumnOf<StageRow>, 9> stage_columns{{
    {{"stage", "stage", 0}, [](const StageRow& r) { return Cell{r.stage}; }},
    {{"first_layer", "first layer", 0}, [](const StageRow& r) { return Cell{r.memory.layers.first_layer}; }},
    {{"layers", "layers", 0}, [](const StageRow& r) { return Cell{r.memory.layers.layers()}; }},
    {{"weights_gb", "weights [GB]", 2}, [](const StageRow& r) { return Cell{r.memory.weights.total() / 1e9}; }},
    {{"embedding_head_gb", "emb+head [GB]", 2},
     [](const StageRow& r) { return Cell{(r.memory.weights.embedding + r.memory.weights.head) / 1e9}; }},
    {{"kv_per_token_kb", "KV/token [kB]", 1},
     [](const StageRow& r) { return Cell{r.memory.kv_bytes_per_token / 1e3}; }},
    {{"kv_per_request_gb", "KV/request [GB]", 3},
     [](const StageRow& r) { return Cell{r.memory.kv_bytes_per_request / 1e9}; }},
    {{"free_gb", "free [GB]", 2}, [](const StageRow& r) { return Cell{r.memory.free_bytes / 1e9}; }},
    {{"max_requests", "max requests", 0}, [](const StageRow& r) { return Cell{r.memory.max_requests}; }},
}};

struct OpRow {
  std::string group;
  std::int64_t count = 0;
  StepOp op;
  double step_s = 0;
};

using OpColumn = ColumnOf<OpRow>;
constexpr std::array<OpColumn, 9> op_shape_columns{{
    {{"group", "group", 0}, [](const OpRow& r) { return Cell{r.group}; }},
    {{"count", "x", 0}, [](const OpRow& r) { return Cell{r.count}; }},
    {{"name", "op", 0}, [](const OpRow& r) { return Cell{std::string(r.op.name)}; }},
    {{"model", "model", 0}, [](const OpRow& r) { return Cell{std::string(r.op.op)}; }},
    {{"shape", "shape (one GPU)", 0}, [](const OpRow& r) { return Cell{r.op.shape}; }},
    {{"gflop", "GFLOP", 3}, [](const OpRow& r) { return Cell{r.op.cost.flops / 1e9}; }},
    {{"mbytes", "MB moved", 3},
     [](const OpRow& r) { return Cell{(r.op.cost.bytes() > 0 ? r.op.cost.bytes() : r.op.link_bytes) / 1e6}; }},
    {{"intensity_flop_per_byte", "AI [FLOP/B]", 1},
     [](const OpRow& r) { return r.op.cost.bytes() > 0 ? Cell{r.op.cost.intensity()} : Cell{}; }},
    {{"bound", "bound", 0}, [](const OpRow& r) { return Cell{std::string(r.op.bound)}; }},
}};
constexpr OpColumn time_column{{"time_us", "time [us]", 2}, [](const OpRow& r) { return Cell{r.op.time_s * 1e6}; }};
constexpr OpColumn share_column{
    {"share_of_step", "of step", 3},
    [](const OpRow& r) { return Cell{r.step_s > 0 ? r.op.time_s * static_cast<double>(r.count) / r.step_s : 0.0}; }};
// With --calibration, time_us is the expected time and these follow it.
constexpr std::array<OpColumn, 5> op_calibration_columns{{
    {{"roofline_us", "roofline [us]", 2}, [](const OpRow& r) { return Cell{r.op.roofline_s * 1e6}; }},
    {{"calibration_table", "calibration", 0},
     [](const OpRow& r) {
       return r.op.calibration && r.op.calibration->applied ? Cell{r.op.calibration->table} : Cell{};
     }},
    {{"efficiency", "efficiency", 3},
     [](const OpRow& r) {
       return r.op.calibration && r.op.calibration->applied ? Cell{r.op.calibration->efficiency} : Cell{};
     }},
    {{"clamped", "clamped", 0},
     [](const OpRow& r) {
       return r.op.calibration && r.op.calibration->applied
                  ? Cell{std::string(r.op.calibration->clamped ? "yes" : "no")}
                  : Cell{};
     }},
    {{"calibration_note", "calibration note", 0},
     [](const OpRow& r) { return r.op.calibration ? Cell{r.op.calibration->detail} : Cell{}; }},
}};

template <std::size_t N, std::size_t... M>
constexpr auto join_columns(const std::array<OpColumn, N>& first, const std::array<OpColumn, M>&... rest) {
  std::array<OpColumn, (N + ... + M)> out{};
  std::size_t i = 0;
  for (const OpColumn& c : first) out[i++] = c;
  ((std::for_each(rest.begin(), rest.end(), [&](const OpColumn& c) { out[i++] = c; })), ...);
  return out;
}
constexpr auto op_columns = join_columns(op_shape_columns, std::array{time_column, share_column});
constexpr auto op_columns_calibrated =
    join_columns(op_shape_columns, std::array{time_column}, op_calibration_columns, std::array{share_column});

struct AllReduceRow {
  std::string phase;
  std::string link;
  double message_bytes = 0;
  double one_s = 0;
  double layers = 0;
  double step_s = 0;
};

constexpr std::array<ColumnOf<AllReduceRow>, 7> allreduce_columns{{
    {{"phase", "phase", 0}, [](const AllReduceRow& r) { return Cell{r.phase}; }},
    {{"link", "link", 0}, [](const AllReduceRow& r) { return Cell{r.link}; }},
    {{"message_bytes", "message [B]", 0}, [](const AllReduceRow& r) { return Cell{r.message_bytes}; }},
    {{"allreduce_us", "one [us]", 2}, [](const AllReduceRow& r) { return Cell{r.one_s * 1e6}; }},
    {{"per_layer_us", "per layer (x2) [us]", 2}, [](const AllReduceRow& r) { return Cell{2.0 * r.one_s * 1e6}; }},
    {{"per_step_ms", "per step [ms]", 3}, [](const AllReduceRow& r) { return Cell{2.0 * r.one_s * r.layers * 1e3}; }},
    {{"relative_to_step", "vs step", 3},
     [](const AllReduceRow& r) { return Cell{r.step_s > 0 ? 2.0 * r.one_s * r.layers / r.step_s : 0.0}; }},
}};

constexpr std::array<ColumnOf<FormatLever>, 8> lever_columns{{
    {{"weights", "weights", 0}, [](const FormatLever& r) { return Cell{std::string(name_of(r.weights))}; }},
    {{"kv", "KV", 0}, [](const FormatLever& r) { return Cell{std::string(name_of(r.kv))}; }},
    {{"weights_gb", "weights/GPU [GB]", 2}, [](const FormatLever& r) { return Cell{r.weight_bytes_per_gpu / 1e9}; }},
    {{"max_requests", "max requests", 0}, [](const FormatLever& r) { return Cell{r.max_requests}; }},
    {{"batch", "batch", 0}, [](const FormatLever& r) { return r.batch ? Cell{*r.batch} : Cell{}; }},
    {{"tpot_ms", "ms/token", 3}, [](const FormatLever& r) { return r.tpot_s ? Cell{*r.tpot_s * 1e3} : Cell{}; }},
    {{"tokens_per_s_per_gpu", "tok/s/GPU", 1},
     [](const FormatLever& r) { return optional_cell(r.tokens_per_s_per_gpu); }},
    {{"bottleneck", "bottleneck", 0}, [](const FormatLever& r) { return Cell{r.bottleneck}; }},
}};

// How EP (and attention DP) placed the experts and requests, for the notes.
std::string expert_layout_note(const ModelSpec& model, const Sharding& s) {
  const MoeSpec& e = *model.moe;
  std::string note = fmt::format(
      "expert parallelism: EP {} of TP {}: {} of the {} routed experts per GPU, each {} wide (TP / EP = {} GPUs split "
      "each expert); {} of {} experts per token; the step is timed on the busiest GPU, which receives "
      "--expert-imbalance times the mean token-expert pairs ({}), its experts reached as if it saw that many times "
      "the tokens",
      s.ep, s.tp, s.local_experts, e.experts, s.expert_ffn, s.tp / s.ep, e.experts_per_token, e.experts,
      s.expert_imbalance ? fmt::format("{:g}, --expert-imbalance", *s.expert_imbalance)
                         : std::string("the expectation under uniform routing"));
  if (s.attention_dp > 1) {
    note += fmt::format(
        "; attention DP over {} GPUs: attention, the dense layers, the shared experts and the head whole on every GPU, "
        "each over 1/{} of the requests (its own KV cache only); each MoE layer sends a token once to each other GPU "
        "holding one of its experts ({:.2f} in expectation) and the outputs back (dispatch and combine all-to-all, "
        "activation format, one latency + bytes / link bandwidth per direction)",
        s.attention_dp, s.attention_dp, remote_ranks_per_token(e, s.ep));
  } else {
    note +=
        "; the MoE input is the TP group's all-reduced hidden state on every GPU: no all-to-all, the feed-forward "
        "all-reduce sums the experts' outputs";
  }
  return note;
}

std::vector<OpRow> op_rows(const StepTime& step) {
  std::vector<OpRow> rows;
  for (const LayerGroup& g : step.groups) {
    for (const StepOp& op : g.ops) rows.push_back({std::string(g.name), g.count, op, step.time_s});
  }
  return rows;
}

std::string kv_formula(const ModelSpec& m, DType kv) {
  const AttentionSpec& a = m.attention;
  if (a.kind == AttentionKind::mla) {
    return fmt::format("{} layers x ({} latent + {} rotary key) x {} B", m.layers, a.kv_lora_rank, a.qk_rope_head_dim,
                       bytes_per_element(kv));
  }
  return fmt::format("2 (K, V) x {} layers x {} KV heads x {} head dim x {} B", m.layers, a.kv_heads, a.head_dim,
                     bytes_per_element(kv));
}

// What run_llm resolved from the flags, for the rendering.
struct LlmInputs {
  const LlmOptions& options;
  const ModelSpec& model;
  const GpuSpec& gpu;
  const DeploymentConfig& config;
  const std::optional<Calibration>& calibration;   // the tables the step was timed with
  const std::optional<CalibrationChoice>& choice;  // what --calibration resolved to (set with the flag)
  int gpus = 0;
  LlmQuery query;
  const std::optional<Speculation>& speculation;
};

// Speculative decoding at the report's batch (or what fits beside the drafter).
struct SpeculationResult {
  SpeculativeDecode decode;
  std::int64_t batch = 0;
  std::int64_t max_requests = 0;
  bool capped = false;  // fewer requests than the decode step's fit beside the drafter
};

SpeculationResult speculate(const LlmInputs& in, const LlmReport& r, const TimeOptions& time) {
  const Speculation& s = *in.speculation;
  SpeculationResult out;
  out.decode = speculative_decode(in.model, in.gpu, r.sharding, in.config, r.batch, in.query.context, s, time);
  out.max_requests = max_requests_with_draft(r.memory, r.sharding, out.decode);
  if (out.max_requests < 1) {
    throw InputError(
        fmt::format("--speculate: the drafter's {:.2f} GB of weights per GPU leave no room for one request",
                    out.decode.draft_weight_bytes / 1e9));
  }
  out.batch = r.batch;
  if (out.max_requests < r.batch) {
    if (in.query.batch != 0) {
      throw InputError(fmt::format("--batch {}: only {} requests fit beside the drafter's weights and KV cache",
                                   in.query.batch, out.max_requests));
    }
    out.batch = out.max_requests;
    out.capped = true;
    out.decode = speculative_decode(in.model, in.gpu, r.sharding, in.config, out.batch, in.query.context, s, time);
  }
  return out;
}

struct SpeculationRow {
  std::string key;
  std::string quantity;
  double value = 0;
  std::string unit;
  std::string derivation;
};

constexpr std::array<ColumnOf<SpeculationRow>, 5> speculation_columns{{
    {{"key", "key", 0}, [](const SpeculationRow& r) { return Cell{r.key}; }},
    {{"quantity", "quantity", 0}, [](const SpeculationRow& r) { return Cell{r.quantity}; }},
    {{"value", "value", 3}, [](const SpeculationRow& r) { return Cell{r.value}; }},
    {{"unit", "unit", 0}, [](const SpeculationRow& r) { return Cell{r.unit}; }},
    {{"derivation", "derivation", 0}, [](const SpeculationRow& r) { return Cell{r.derivation}; }},
}};

std::vector<SpeculationRow> speculation_rows(const LlmInputs& in, const SpeculationResult& s) {
  const Speculation& spec = *in.speculation;
  const SpeculativeDecode& d = s.decode;
  const std::string drafter =
      spec.draft_model ? fmt::format("a decode step of {}", spec.draft_model->id) : std::string("the MTP layer + head");
  const double per_user = 1.0 / d.tpot_s;
  return {
      {"batch", "batch (concurrent requests)", static_cast<double>(s.batch), "requests",
       s.capped ? "what fits beside the drafter" : "as for the decode step"},
      {"max_requests", "max requests beside the drafter", static_cast<double>(s.max_requests), "requests",
       fmt::format("(free - {:.2f} GB drafter weights) / (KV + {:.4f} GB drafter KV per request)",
                   d.draft_weight_bytes / 1e9, d.draft_kv_bytes_per_request / 1e9)},
      {"verify_ms", "verify step", d.verify.time_s * 1e3, "ms",
       fmt::format("the model over {} tokens per sequence", spec.draft_tokens + 1)},
      {"draft_ms", "draft pass", d.draft.time_s * 1e3, "ms",
       fmt::format("{}, {} per verify step", drafter, d.draft_passes)},
      {"cycle_ms", "draft + verify cycle", d.cycle_s * 1e3, "ms", "verify + K x draft"},
      {"tokens_per_verify", "tokens per verify step", d.tokens_per_verify, "tokens",
       fmt::format("1 + sum of the products of the acceptance rates ({})", fmt::join(spec.acceptance, ", "))},
      {"tpot_ms", "time per output token", d.tpot_s * 1e3, "ms", "cycle / tokens per verify step"},
      {"tokens_per_s_per_user", "tokens/s per user", per_user, "tokens/s", "1 / TPOT"},
      {"tokens_per_s", "tokens/s, deployment", per_user * static_cast<double>(s.batch * in.config.replicas), "tokens/s",
       fmt::format("{} replica(s) x batch {} / TPOT", in.config.replicas, s.batch)},
  };
}

// The summary table's rows: each figure with how it was reached.
std::vector<SummaryRow> summary_rows(const LlmInputs& in, const LlmReport& r) {
  const LlmOptions& options = in.options;
  const ModelSpec& model = in.model;
  const DeploymentConfig& config = in.config;
  const std::optional<Calibration>& calibration = in.calibration;
  const Sharding& sharding = r.sharding;
  const MemoryPlan& memory = r.memory;
  const StageMemory& heaviest = memory.heaviest();
  const StepTime& decode = r.decode;
  const StepTime& first = r.prefill;
  const std::string replication =
      sharding.kv_replication > 1 ? fmt::format(", each KV head kept on {:g} GPUs", sharding.kv_replication) : "";
  const std::string per_gpu_kv =
      sharding.attention_dp > 1 ? fmt::format("attention DP: each GPU caches only its own requests, all heads")
      : model.attention.kind == AttentionKind::mla
          ? fmt::format("the latent is shared by all heads: every one of the {} TP GPUs keeps all of it",
                        options.parallelism.tp)
          : fmt::format("{} KV head(s) per GPU of TP {}{}", sharding.kv_heads, options.parallelism.tp, replication);
  // --- models (issue 19): a per-layer pattern keeps a different number of tokens per layer.
  const std::string window =
      !model.layer_attention.empty()
          ? fmt::format(" in the full-attention layers; {:.0f} token-layers in all (per-layer windows)",
                        memory.cached_token_layers)
      : model.attention.sliding_window
          ? fmt::format(" (sliding window {} of --context {})", *model.attention.sliding_window, options.context)
          : "";
  std::vector<SummaryRow> rows{
      {"weights_per_gpu_gb", "weights per GPU", heaviest.weights.total() / 1e9, "GB",
       fmt::format("{:.2f} matrices ({}) + {:.2f} embedding/head ({}) + {:.3f} norms, biases, routers",
                   heaviest.weights.linear / 1e9,
                   config.expert_weights
                       ? fmt::format("{}; experts {}", name_of(config.weights), name_of(*config.expert_weights))
                       : std::string(name_of(config.weights)),
                   (heaviest.weights.embedding + heaviest.weights.head) / 1e9, name_of(config.embeddings),
                   heaviest.weights.small / 1e9)},
      {"weights_model_gb", "weights, whole model", memory.weight_bytes_model / 1e9, "GB",
       fmt::format("{:.4g} parameters", count_parameters(model).total)},
      {"kv_per_token_model_kb", "KV cache per token, model", memory.kv_bytes_per_token_model / 1e3, "kB",
       kv_formula(model, config.kv)},
      {"kv_per_token_gpu_kb", "KV cache per token per GPU", r.kv_bytes_per_token_gpu / 1e3, "kB", per_gpu_kv},
      {"kv_per_request_model_gb", "KV cache per request, model", memory.kv_bytes_per_request_model / 1e9, "GB",
       fmt::format("x {} tokens{}", memory.cached_tokens, window)},
      {"kv_per_request_gpu_gb", "KV cache per request per GPU", heaviest.kv_bytes_per_request / 1e9, "GB",
       fmt::format("x {} tokens, {} layers on this stage", memory.cached_tokens, heaviest.layers.layers())},
      {"free_for_kv_gb", "memory left for KV per GPU", heaviest.free_bytes / 1e9, "GB",
       fmt::format("{:.0f} capacity - weights - {:.1f} reserve - {:.1f} workspace", memory.capacity_bytes / 1e9,
                   config.reserve_bytes / 1e9, config.workspace_bytes / 1e9)},
      {"max_requests", "max concurrent requests", r.max_requests, "requests",
       sharding.attention_dp > 1
           ? fmt::format("floor(memory left / KV per request per GPU) x {} attention-DP GPUs", sharding.attention_dp)
           : std::string("floor(memory left / KV per request per GPU)")},
      {"batch", "batch (concurrent requests)", r.batch, "requests", options.batch == "max" ? "--batch max" : "--batch"},
      {"tpot_ms", "time per output token", decode.time_s * 1e3, "ms",
       fmt::format("one decode step, all {} layers{}", model.layers,
                   options.parallelism.pp > 1 ? fmt::format(" through {} stages", options.parallelism.pp) : "")},
      {"ttft_ms", "time to first token", first.time_s * 1e3, "ms",
       fmt::format("prefill of {} tokens, no queueing", in.query.prompt)},
      {"tokens_per_s", "tokens/s, deployment", r.tokens_per_s, "tokens/s",
       fmt::format("{} replica(s) x batch {} / TPOT", config.replicas, r.batch)},
      {"tokens_per_s_per_gpu", "tokens/s per GPU", r.tokens_per_s / in.gpus, "tokens/s",
       fmt::format("/ {} GPUs", in.gpus)},
      {"decode_bottleneck", "decode bottleneck", std::string(decode.bottleneck()), "",
       fmt::format("{:.0f}% of the step", 100.0 * decode.bottleneck_share())},
      {"prefill_bottleneck", "prefill bottleneck", std::string(first.bottleneck()), "",
       fmt::format("{:.0f}% of the prefill", 100.0 * first.bottleneck_share())},
  };
  if (calibration) {
    // The calibrated figures replace the roofline's above; the roofline's stay beside them.
    const auto row = [&rows](std::string_view key) {
      return std::find_if(rows.begin(), rows.end(),
                          [key](const SummaryRow& candidate) { return candidate.key == key; });
    };
    row("tpot_ms")->derivation +=
        fmt::format(", calibrated ({} of {} decode ops)", calibrated_op_count(decode), op_count(decode));
    row("ttft_ms")->derivation +=
        fmt::format(", calibrated ({} of {} prefill ops)", calibrated_op_count(first), op_count(first));
    rows.insert(row("decode_bottleneck"),
                {{"tpot_roofline_ms", "time per output token, roofline", decode.roofline_s * 1e3, "ms",
                  "the same step at the roofline bound"},
                 {"ttft_roofline_ms", "time to first token, roofline", first.roofline_s * 1e3, "ms",
                  "the same prefill at the roofline bound"},
                 {"tokens_per_s_roofline", "tokens/s, deployment, roofline", r.tokens_per_s_roofline, "tokens/s",
                  "at the roofline TPOT"},
                 {"calibration", "calibration", calibration->file, "",
                  fmt::format("{} {} {}; error band: {}", in.choice->kind, calibration->transfer ? "from" : "on",
                              calibration->transfer ? calibration->transfer->from_gpu : calibration->gpu_id,
                              in.choice->band)}});
  }
  return rows;
}

// The report of one deployment: summary, memory by stage, the two steps op by op, the TP
// all-reduce on each link, the levers, and the notes on how each figure was reached.
Report render_llm(const LlmInputs& in, const LlmReport& r, const std::optional<SpeculationResult>& speculation) {
  const LlmOptions& options = in.options;
  const ModelSpec& model = in.model;
  const GpuSpec& gpu = in.gpu;
  const DeploymentConfig& config = in.config;
  const std::optional<Calibration>& calibration = in.calibration;
  const int gpus = in.gpus;
  const std::int64_t prompt = in.query.prompt;
  const MemoryPlan& memory = r.memory;
  const StageMemory& heaviest = memory.heaviest();
  const StepTime& decode = r.decode;
  const StepTime& first = r.prefill;
  const AllReduceCompare& ar_decode = r.allreduce_decode;
  const AllReduceCompare& ar_prefill = r.allreduce_prefill;
  Report report;
  report.kind = "llm";
  report.inputs = {{"model", model_summary(model)},
                   {"gpu", gpu.id},
                   {"gpus", gpus},
                   {"tp", options.parallelism.tp},
                   {"pp", options.parallelism.pp},
                   {"replicas", config.replicas},
                   {"weights", name_of(config.weights)},
                   {"kv", name_of(config.kv)},
                   {"embeddings", name_of(config.embeddings)},
                   {"activations", name_of(config.activations)},
                   {"context", options.context},
                   {"prompt", prompt},
                   {"batch", options.batch},
                   {"deployment", deployment_flags_json(options.deployment)},
                   {"set", options.what_if}};
  if (model.moe) report.inputs["expert_layout"] = expert_flags_json(options.experts);
  if (in.speculation) report.inputs["speculation"] = speculation_json(*in.speculation);
  report.hardware.push_back({gpu.id, gpu.origin});

  const std::vector<SummaryRow> rows = summary_rows(in, r);
  report.tables.push_back(Table::from_rows<SummaryRow>(
      "summary",
      fmt::format("{} on {} x {} (TP {}, PP {}, {} replica(s)), weights {}, KV {}, context {}", model.id, gpus, gpu.id,
                  options.parallelism.tp, options.parallelism.pp, config.replicas, name_of(config.weights),
                  name_of(config.kv), options.context),
      summary_columns, rows));

  std::vector<StageRow> stages;
  for (std::size_t i = 0; i < memory.stages.size(); ++i)
    stages.push_back({static_cast<std::int64_t>(i), memory.stages[i]});
  report.tables.push_back(
      Table::from_rows<StageRow>("memory", "Memory per GPU, by pipeline stage", stage_columns, stages));

  const std::string timing =
      calibration ? "time = one instance, calibrated where a table covers the op" : "time = one instance";
  const auto op_table = [&](std::string name, std::string title, const StepTime& step) {
    return calibration
               ? Table::from_rows<OpRow>(std::move(name), std::move(title), op_columns_calibrated, op_rows(step))
               : Table::from_rows<OpRow>(std::move(name), std::move(title), op_columns, op_rows(step));
  };
  report.tables.push_back(
      op_table("decode",
               fmt::format("One decode step on one GPU: batch {}, {} tokens cached per request ({})", r.batch,
                           memory.cached_tokens, timing),
               decode));
  report.tables.push_back(
      op_table("prefill", fmt::format("Prefill of one {}-token prompt on one GPU ({})", prompt, timing), first));

  const auto layers = static_cast<double>(model.layers);
  std::vector<AllReduceRow> ar_rows{
      {"decode", r.scale_up.name, ar_decode.message_bytes, ar_decode.scale_up_s, layers, decode.time_s},
      {"decode", config.scale_out.name, ar_decode.message_bytes, ar_decode.scale_out_s, layers, decode.time_s},
      {"prefill", r.scale_up.name, ar_prefill.message_bytes, ar_prefill.scale_up_s, layers, first.time_s},
      {"prefill", config.scale_out.name, ar_prefill.message_bytes, ar_prefill.scale_out_s, layers, first.time_s},
  };
  report.tables.push_back(Table::from_rows<AllReduceRow>(
      "tp_allreduce",
      fmt::format("TP all-reduce (ring over {} GPUs, 2 per layer): scale-up link vs scale-out network",
                  std::max(options.parallelism.tp, 2)),
      allreduce_columns, ar_rows));

  if (options.levers) {
    report.tables.push_back(Table::from_rows<FormatLever>(
        "levers",
        fmt::format("What each format buys at the same deployment ({}; batch {})", "weights x KV cache",
                    in.query.batch == 0 ? "max that fits" : fmt::format("{} or what fits", in.query.batch)),
        lever_columns, r.levers));
  }

  report.extra_results = {{"weights_per_gpu_bytes", heaviest.weights.total()},
                          {"kv_per_token_model_bytes", memory.kv_bytes_per_token_model},
                          {"kv_per_token_gpu_bytes", r.kv_bytes_per_token_gpu},
                          {"kv_per_request_model_bytes", memory.kv_bytes_per_request_model},
                          {"kv_per_request_gpu_bytes", heaviest.kv_bytes_per_request},
                          {"kv_replication", r.sharding.kv_replication},
                          {"free_for_kv_bytes", heaviest.free_bytes},
                          {"max_requests", r.max_requests},
                          {"batch", r.batch},
                          {"tpot_ms", decode.time_s * 1e3},
                          {"ttft_ms", first.time_s * 1e3},
                          {"tokens_per_s", r.tokens_per_s},
                          {"tokens_per_s_per_gpu", r.tokens_per_s / gpus},
                          {"decode_bottleneck", decode.bottleneck()},
                          {"prefill_bottleneck", first.bottleneck()},
                          {"tp_allreduce_decode_scale_up_us", ar_decode.scale_up_s * 1e6},
                          {"tp_allreduce_decode_scale_out_us", ar_decode.scale_out_s * 1e6}};
  if (calibration) {
    report.extra_results["tpot_roofline_ms"] = decode.roofline_s * 1e3;
    report.extra_results["ttft_roofline_ms"] = first.roofline_s * 1e3;
    report.extra_results["tokens_per_s_roofline"] = r.tokens_per_s_roofline;
  }
  if (speculation) {
    const std::vector<SpeculationRow> spec_rows = speculation_rows(in, *speculation);
    nlohmann::json block = nlohmann::json::object();
    for (const SpeculationRow& row : spec_rows) block[row.key] = row.value;
    report.extra_results["speculation"] = std::move(block);
    report.tables.push_back(Table::from_rows<SpeculationRow>(
        "speculation_summary",
        fmt::format("Speculative decoding: {} drafts per step ({})", in.speculation->draft_tokens,
                    in.speculation->draft_model ? in.speculation->draft_model->id : std::string("MTP")),
        speculation_columns, spec_rows));
    report.tables.push_back(op_table("verify",
                                     fmt::format("One verify step on one GPU: batch {}, {} tokens per sequence",
                                                 speculation->batch, in.speculation->draft_tokens + 1),
                                     speculation->decode.verify));
    report.tables.push_back(op_table("draft", "One draft pass on one GPU", speculation->decode.draft));
    report.notes.push_back(
        "speculative decoding: each step the drafter proposes K tokens one pass at a time, the model verifies them in "
        "one step of K + 1 tokens per sequence (each sequence's queries causal over its cache and the drafts); "
        "expected tokens per step 1 + a1 + a1 a2 + ... (--acceptance: each position's rate given the ones before)");
  }
  if (in.choice) {
    nlohmann::json block = calibration_block(*in.choice);
    block.update({{"decode_ops", op_count(decode)},
                  {"decode_ops_calibrated", calibration ? calibrated_op_count(decode) : 0},
                  {"prefill_ops", op_count(first)},
                  {"prefill_ops_calibrated", calibration ? calibrated_op_count(first) : 0}});
    report.extra_results["calibration"] = std::move(block);
  }

  if (config.collectives) report.notes.push_back(collectives_note(config, gpu, *options.deployment.calibration));
  if (in.choice) report.notes.push_back(calibration_note(*in.choice));
  if (calibration) {
    if (calibration->gpu_id != gpu.id) {
      report.notes.push_back(fmt::format("the calibration is for {}, not {}: every op keeps its roofline time",
                                         calibration->gpu_id, gpu.id));
    }
  }
  report.notes.push_back(
      fmt::format("{}roofline bounds at datasheet peaks{} (HBM {:.2f} TB/s): every op takes max(FLOPs / peak, bytes / "
                  "bandwidth); ops do not overlap; 1 GB = 1e9 B",
                  calibration ? "roofline times are " : "times are ",
                  options.deployment.efficiency == "compute=1,memory=1" ? "" : " scaled by --efficiency",
                  gpu.memory_bandwidth_tbps));
  report.notes.push_back(fmt::format(
      "projections multiply in {} on {}; norms, softmax and elementwise ops run on the fp32 vector units; attention "
      "math in {}",
      name_of(matmul_dtype(gpu, config.weights, config.activations)), gpu.id, name_of(config.activations)));
  if (model.moe && r.sharding.ep == 1) {
    report.notes.push_back(fmt::format(
        "mixture of experts: {} of {} experts per token; a step reads only the experts its tokens reach (expected "
        "E (1 - (1 - k/E)^tokens) with uniform routing); experts are split over TP like dense layers",
        model.moe->experts_per_token, model.moe->experts));
  } else if (model.moe) {
    report.notes.push_back(expert_layout_note(model, r.sharding));
  }
  if (model.windowed()) {
    // --- models (issue 19)
    report.notes.push_back(
        "windowed and chunked layers: the cache keeps each layer's window (or chunk), decode attention reads it, and "
        "the prefill's attention counts only the pairs the mask keeps (Q, K and V still read once)");
  }
  report.notes.push_back(fmt::format(
      "TP all-reduce: ring, 2 (n - 1) steps of {:g} us + 2 (n - 1) / n x message / link bandwidth per direction; "
      "scale-out {:g} GB/s per GPU and direction (--scale-out-gbps)",
      options.deployment.scale_up_latency_us, options.deployment.scale_out_gbps));
  return report;
}

}  // namespace

Report run_llm(const LlmOptions& options, const HardwareRegistry& registry) {
  const ModelSpec model = resolve_model(options.model);
  const GpuSpec gpu = apply_overrides(registry.find(options.parallelism.gpu), options.what_if);
  require_positive(options.context, "--context");
  const std::int64_t prompt = options.prompt.value_or(options.context);
  require_positive(prompt, "--prompt-tokens");
  // --- models (issue 19; hardening II #13): the prompt fits the context, the context the model.
  if (prompt > options.context) {
    throw InputError(fmt::format("--prompt-tokens {}: longer than --context {} (the cache holds the prompt)", prompt,
                                 options.context));
  }
  const std::string long_context = check_context(model, options.context, options.model);
  const LlmQuery query{options.context, prompt, parse_batch_or_max(options.batch, "--batch"), options.levers};

  DeploymentConfig config;
  apply_format_flags(options.formats, gpu, config);
  const std::string weights_note = apply_checkpoint_format(model, options.formats.weights.has_value(), config);
  const std::optional<CalibrationChoice> choice = apply_deployment_flags(options.deployment, config, gpu, registry);
  const std::optional<Calibration> no_calibration;
  const std::optional<Calibration>& calibration = choice ? choice->calibration : no_calibration;
  TimeOptions time;
  apply_time_flags(options.deployment, calibration, time);
  const int gpus = apply_parallelism_flags(options.parallelism, config);
  apply_expert_flags(options.experts, config);
  const Sharding sharding = shard(model, config);

  const std::optional<Speculation> speculation = resolve_speculation(options.speculation, options.model.models_dirs);
  const LlmReport r = llm_report(model, gpu, sharding, config, query, time);
  const LlmInputs inputs{options, model, gpu, config, calibration, choice, gpus, query, speculation};
  std::optional<SpeculationResult> speculated;
  if (speculation) speculated = speculate(inputs, r, time);
  Report report = render_llm(inputs, r, speculated);
  if (!weights_note.empty()) report.notes.push_back(weights_note);
  if (!long_context.empty()) report.notes.push_back(long_context);
  if (draws_figures(options.common)) report.figures = plot::llm_figures(report, gpu);
  return report;
}

void setup_llm_command(CLI::App& app) {
  auto options = std::make_shared<LlmOptions>();
  CLI::App* command = app.add_subcommand(
      "llm", "One LLM deployment: weights and KV cache per GPU, max batch, decode and prefill op by op, TPOT, TTFT");
  add_model_options(*command, options->model);
  add_context_limit_option(*command, options->model);
  add_parallelism_flags(*command, options->parallelism, "GPUs in all (a multiple of TP x PP; default TP x PP)", false);
  add_expert_flags(*command, options->experts);
  add_speculation_flags(*command, options->speculation);
  add_format_flags(*command, options->formats);
  // --context and --batch sweep like op's flags (llm_sweep.hpp); one point is the report above.
  auto context = std::make_shared<std::string>();
  command
      ->add_option("--context", *context,
                   "Tokens per request in the KV cache; a sweep gives one row per point (4096, 1024,8192 or "
                   "1024:32768:x2)")
      ->required();
  // Renamed from --prompt, as plan's and serve's (docs/reports.md).
  add_renamed_option(*command, "--prompt-tokens", "--prompt", options->prompt,
                     "Prompt tokens for time to first token (default: --context)");
  command
      ->add_option("--batch", options->batch,
                   "Concurrent requests, or 'max' for as many as fit; a sweep like --context's (1,8,64 or 1:256:x2)")
      ->capture_default_str();
  command->add_flag("!--no-levers", options->levers, "Leave out the table of weight/KV formats");
  add_deployment_flags(*command, options->deployment);
  add_what_if_option(*command, options->what_if);
  add_common_options(*command, options->common);
  command->callback([options, context] {
    const LlmSweep sweep = parse_llm_sweep(*context, options->batch);
    const HardwareRegistry registry = load_registry(options->common);
    if (!sweep.single()) {
      emit(run_llm_sweep(*options, sweep, registry), options->common);
      return;
    }
    options->context = sweep.contexts.front();
    emit(run_llm(*options, registry), options->common);
  });
}

}  // namespace roofline::cli
