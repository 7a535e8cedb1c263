// roofline llm: one deployment of a model on GPUs: memory, KV cache, capacity, and the time of a
// decode step and of a prefill, op by op.
#include "llm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "commands.hpp"
#include "roofline/calibration.hpp"
#include "roofline/error.hpp"
#include "roofline/llm.hpp"

namespace roofline::cli {
namespace {

struct SummaryRow {
  std::string key;
  std::string quantity;
  Cell value;
  std::string unit;
  std::string derivation;
};

constexpr std::array<ColumnOf<SummaryRow>, 5> summary_columns{{
    {{"key", "key", 0}, [](const SummaryRow& r) { return Cell{r.key}; }},
    {{"quantity", "quantity", 0}, [](const SummaryRow& r) { return Cell{r.quantity}; }},
    {{"value", "value", 2}, [](const SummaryRow& r) { return r.value; }},
    {{"unit", "unit", 0}, [](const SummaryRow& r) { return Cell{r.unit}; }},
    {{"derivation", "how", 0}, [](const SummaryRow& r) { return Cell{r.derivation}; }},
}};

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

struct LeverRow {
  DType weights = DType::bf16;
  DType kv = DType::bf16;
  double weights_gb = 0;
  std::int64_t max_requests = 0;
  std::optional<std::int64_t> batch;
  std::optional<double> tpot_ms;
  std::optional<double> tokens_per_s_per_gpu;
  std::string bottleneck;
};

constexpr std::array<ColumnOf<LeverRow>, 8> lever_columns{{
    {{"weights", "weights", 0}, [](const LeverRow& r) { return Cell{std::string(name_of(r.weights))}; }},
    {{"kv", "KV", 0}, [](const LeverRow& r) { return Cell{std::string(name_of(r.kv))}; }},
    {{"weights_gb", "weights/GPU [GB]", 2}, [](const LeverRow& r) { return Cell{r.weights_gb}; }},
    {{"max_requests", "max requests", 0}, [](const LeverRow& r) { return Cell{r.max_requests}; }},
    {{"batch", "batch", 0}, [](const LeverRow& r) { return r.batch ? Cell{*r.batch} : Cell{}; }},
    {{"tpot_ms", "ms/token", 3}, [](const LeverRow& r) { return optional_cell(r.tpot_ms); }},
    {{"tokens_per_s_per_gpu", "tok/s/GPU", 1}, [](const LeverRow& r) { return optional_cell(r.tokens_per_s_per_gpu); }},
    {{"bottleneck", "bottleneck", 0}, [](const LeverRow& r) { return Cell{r.bottleneck}; }},
}};

std::vector<OpRow> op_rows(const StepTime& step) {
  std::vector<OpRow> rows;
  for (const LayerGroup& g : step.groups) {
    for (const StepOp& op : g.ops) rows.push_back({std::string(g.name), g.count, op, step.time_s});
  }
  return rows;
}

std::int64_t op_count(const StepTime& step) {
  std::int64_t n = 0;
  for (const LayerGroup& g : step.groups) n += static_cast<std::int64_t>(g.ops.size());
  return n;
}

std::int64_t calibrated_ops(const StepTime& step) {
  std::int64_t n = 0;
  for (const LayerGroup& g : step.groups) {
    for (const StepOp& op : g.ops) n += op.calibration && op.calibration->applied ? 1 : 0;
  }
  return n;
}

std::int64_t parse_batch(const std::string& text) {
  if (text == "max") return 0;
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < 1 || value > max_batch) {
    throw InputError(fmt::format("--batch '{}': expected a positive integer up to {} or 'max'", text, max_batch));
  }
  return value;
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

}  // namespace

void add_deployment_flags(CLI::App& command, DeploymentFlags& flags) {
  command
      .add_option("--reserve-gb", flags.reserve_gb,
                  "GB per GPU for the CUDA context, NCCL buffers, cuBLAS workspace and allocator slack")
      ->capture_default_str()
      ->group("Memory");
  command
      .add_option("--workspace-gb", flags.workspace_gb,
                  "GB per GPU for activations of the step in flight (prefill chunk, logits, CUDA graphs)")
      ->capture_default_str()
      ->group("Memory");
  command
      .add_option("--scale-up-latency-us", flags.scale_up_latency_us,
                  "Latency per collective step on the scale-up link (an assumption; calibrate with NCCL tests)")
      ->capture_default_str()
      ->group("Links");
  command
      .add_option("--scale-out-gbps", flags.scale_out_gbps,
                  "Scale-out network per GPU and direction in GB/s (50 = one 400 Gb/s NIC per GPU)")
      ->capture_default_str()
      ->group("Links");
  command
      .add_option("--scale-out-latency-us", flags.scale_out_latency_us,
                  "Latency per collective step on the scale-out network (assumption)")
      ->capture_default_str()
      ->group("Links");
  command
      .add_option("--scale-up-domain", flags.scale_up_domain,
                  "GPUs on one scale-up link (8 for HGX/DGX, 72 for NVL72); larger groups use the scale-out network")
      ->capture_default_str()
      ->group("Links");
  command
      .add_option("--efficiency", flags.efficiency,
                  "Fractions of the peak FLOP/s and bandwidth kernels reach, e.g. compute=0.7,memory=0.8")
      ->capture_default_str()
      ->group("Model");
  command
      .add_option("--calibration", flags.calibration,
                  "A calibration file (roofline calibrate): each op's expected time from the efficiency its best "
                  "measured implementation reached at that size, and its measured collectives (bench --suite "
                  "collectives) for TP all-reduces and PP transfers; the roofline times stay beside them")
      ->group("Model");
}

std::optional<Calibration> apply_deployment_flags(const DeploymentFlags& flags, DeploymentConfig& config) {
  const auto non_negative = [](double v, std::string_view flag) {
    if (!(v >= 0) || !std::isfinite(v)) throw InputError(fmt::format("{} {}: must be a number >= 0", flag, v));
    return v;
  };
  config.reserve_bytes = non_negative(flags.reserve_gb, "--reserve-gb") * 1e9;
  config.workspace_bytes = non_negative(flags.workspace_gb, "--workspace-gb") * 1e9;
  config.scale_up_latency_s = non_negative(flags.scale_up_latency_us, "--scale-up-latency-us") * 1e-6;
  if (!(flags.scale_out_gbps > 0) || !std::isfinite(flags.scale_out_gbps)) {
    throw InputError(fmt::format("--scale-out-gbps {}: must be a positive number", flags.scale_out_gbps));
  }
  config.scale_out = {fmt::format("scale-out {:g} GB/s", flags.scale_out_gbps), flags.scale_out_gbps * 1e9,
                      non_negative(flags.scale_out_latency_us, "--scale-out-latency-us") * 1e-6};
  if (flags.scale_up_domain < 1) {
    throw InputError(fmt::format("--scale-up-domain {}: must be at least 1", flags.scale_up_domain));
  }
  config.scale_up_domain = flags.scale_up_domain;
  if (!flags.calibration) return std::nullopt;
  std::optional<Calibration> calibration = load_calibration(*flags.calibration);
  config.collectives = std::make_shared<const CollectiveTables>(calibration->collectives);
  config.collectives_gpu = calibration->gpu_id;
  return calibration;
}

std::string collectives_note(const DeploymentConfig& config, const GpuSpec& gpu, const std::string& file) {
  if (config.collectives_gpu != gpu.id) {
    return fmt::format("--calibration {} is for {}, not {}: its measured collectives are not used (ring model)", file,
                       config.collectives_gpu, gpu.id);
  }
  if (config.collectives->empty()) return fmt::format("--calibration {} holds no measured collectives", file);
  std::vector<std::string> tables;
  for (const CollectiveTable& t : config.collectives->tables)
    tables.push_back(fmt::format("{} x{}", name_of(t.op), t.ranks));
  return fmt::format(
      "TP all-reduces, the logits all-gather and PP transfers within the scale-up domain are charged from the measured "
      "collectives of {} ({}) where they cover the op and GPU count, the ring model elsewhere",
      file, fmt::join(tables, ", "));
}

nlohmann::json deployment_flags_json(const DeploymentFlags& flags) {
  return {{"reserve_gb", flags.reserve_gb},
          {"workspace_gb", flags.workspace_gb},
          {"scale_up_latency_us", flags.scale_up_latency_us},
          {"scale_out_gbps", flags.scale_out_gbps},
          {"scale_out_latency_us", flags.scale_out_latency_us},
          {"scale_up_domain", flags.scale_up_domain},
          {"efficiency", flags.efficiency},
          {"calibration", flags.calibration ? nlohmann::json(*flags.calibration) : nullptr}};
}

void apply_time_flags(const DeploymentFlags& flags, const std::optional<Calibration>& calibration, TimeOptions& time) {
  time.efficiency = parse_efficiency(flags.efficiency, "--efficiency");
  if (!calibration) return;
  if (flags.efficiency != DeploymentFlags{}.efficiency) {
    throw InputError("--efficiency and --calibration both set the expected time: give one of them");
  }
  time.calibration = &*calibration;
}

std::string calibration_note(const Calibration& calibration) {
  std::vector<std::string> sources;
  for (const CalibrationSource& s : calibration.sources) sources.push_back(s.file);
  return fmt::format(
      "expected times calibrated with {} (learnt on {} from {}): each op's roofline time divided by the efficiency "
      "the best measured implementation of its table reached at that size (interpolated in log(size), clamped at the "
      "ends), the lookup of op --calibration; ops no table covers keep the roofline (see each op's calibration "
      "note)",
      calibration.file, calibration.gpu_id, fmt::join(sources, ", "));
}

Report run_llm(const LlmOptions& options, const HardwareRegistry& registry) {
  const ModelSpec model = resolve_model(options.model);
  const GpuSpec gpu = apply_overrides(registry.find(options.gpu), options.what_if);
  require_positive(options.context, "--context");
  const std::int64_t prompt = options.prompt.value_or(options.context);
  require_positive(prompt, "--prompt");
  const std::int64_t requested_batch = parse_batch(options.batch);

  DeploymentConfig config;
  config.tp = options.tp;
  config.pp = options.pp;
  config.activations = default_activation_dtype(gpu);
  const auto format = [&](const std::optional<std::string>& flag, std::string_view name) {
    return flag ? parse_storage_dtype(*flag, name) : config.activations;
  };
  config.weights = format(options.weights, "--weights");
  config.kv = format(options.kv, "--kv");
  config.embeddings = format(options.embeddings, "--embeddings");
  const std::optional<Calibration> calibration = apply_deployment_flags(options.deployment, config);
  TimeOptions time;
  apply_time_flags(options.deployment, calibration, time);

  const Sharding sharding = shard(model, options.tp, options.pp);
  const int group = options.tp * options.pp;
  const int gpus = options.gpus == 0 ? group : options.gpus;
  if (gpus < 1 || gpus % group != 0) {
    throw InputError(fmt::format("--gpus {} is not a multiple of --tp {} x --pp {}", gpus, options.tp, options.pp));
  }
  config.replicas = gpus / group;

  const MemoryPlan memory = plan_memory(model, gpu, sharding, config, options.context);
  const StageMemory& heaviest = memory.heaviest();
  const double cap_gb = memory.capacity_bytes / 1e9;
  if (!memory.weights_fit()) {
    throw InputError(fmt::format(
        "{} does not fit on {} x {} with TP {} PP {}: {:.1f} GB of {} weights per GPU + {:.1f} GB reserve and "
        "workspace > {:.0f} GB; raise --tp/--pp or use lower-bit --weights",
        model.id, group, gpu.id, options.tp, options.pp, heaviest.weights.total() / 1e9, name_of(config.weights),
        (config.reserve_bytes + config.workspace_bytes) / 1e9, cap_gb));
  }
  const std::int64_t max_requests = memory.max_requests();
  if (max_requests < 1) {
    throw InputError(fmt::format(
        "not one request of {} tokens fits: {:.2f} GB of KV cache per request per GPU, {:.2f} GB free; lower "
        "--context, use --kv fp8, or more GPUs",
        memory.cached_tokens, heaviest.kv_bytes_per_request / 1e9, heaviest.free_bytes / 1e9));
  }
  if (requested_batch > max_requests) {
    throw InputError(
        fmt::format("--batch {}: only {} requests of {} tokens fit ({:.3f} GB of KV per request per GPU, "
                    "{:.2f} GB free); lower --batch or --context, or use --kv fp8",
                    requested_batch, max_requests, memory.cached_tokens, heaviest.kv_bytes_per_request / 1e9,
                    heaviest.free_bytes / 1e9));
  }
  const std::int64_t batch = requested_batch == 0 ? max_requests : requested_batch;

  const StepTime decode = decode_step(model, gpu, sharding, config, batch, options.context, time);
  const StepTime first = prefill(model, gpu, sharding, config, prompt, time);
  const double tokens_per_s = static_cast<double>(config.replicas * batch) / decode.time_s;
  const double tokens_per_s_roofline = static_cast<double>(config.replicas * batch) / decode.roofline_s;

  Report report;
  report.kind = "llm";
  report.inputs = {{"model", model_summary(model)},
                   {"gpu", gpu.id},
                   {"gpus", gpus},
                   {"tp", options.tp},
                   {"pp", options.pp},
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
  report.hardware.push_back({gpu.id, gpu.origin});

  const double kv_token_gpu =
      kv_bytes_per_token_layer_gpu(model, sharding, config.kv) * static_cast<double>(model.layers);
  const std::string replication =
      sharding.kv_replication > 1 ? fmt::format(", each KV head kept on {:g} GPUs", sharding.kv_replication) : "";
  const std::string per_gpu_kv =
      model.attention.kind == AttentionKind::mla
          ? fmt::format("the latent is shared by all heads: every one of the {} TP GPUs keeps all of it", options.tp)
          : fmt::format("{} KV head(s) per GPU of TP {}{}", sharding.kv_heads, options.tp, replication);
  const std::string window =
      model.attention.sliding_window
          ? fmt::format(" (sliding window {} of --context {})", *model.attention.sliding_window, options.context)
          : "";
  std::vector<SummaryRow> rows{
      {"weights_per_gpu_gb", "weights per GPU", heaviest.weights.total() / 1e9, "GB",
       fmt::format("{:.2f} matrices ({}) + {:.2f} embedding/head ({}) + {:.3f} norms, biases, routers",
                   heaviest.weights.linear / 1e9, name_of(config.weights),
                   (heaviest.weights.embedding + heaviest.weights.head) / 1e9, name_of(config.embeddings),
                   heaviest.weights.small / 1e9)},
      {"weights_model_gb", "weights, whole model", memory.weight_bytes_model / 1e9, "GB",
       fmt::format("{:.4g} parameters", count_parameters(model).total)},
      {"kv_per_token_model_kb", "KV cache per token, model", memory.kv_bytes_per_token_model / 1e3, "kB",
       kv_formula(model, config.kv)},
      {"kv_per_token_gpu_kb", "KV cache per token per GPU", kv_token_gpu / 1e3, "kB", per_gpu_kv},
      {"kv_per_request_model_gb", "KV cache per request, model", memory.kv_bytes_per_request_model / 1e9, "GB",
       fmt::format("x {} tokens{}", memory.cached_tokens, window)},
      {"kv_per_request_gpu_gb", "KV cache per request per GPU", heaviest.kv_bytes_per_request / 1e9, "GB",
       fmt::format("x {} tokens, {} layers on this stage", memory.cached_tokens, heaviest.layers.layers())},
      {"free_for_kv_gb", "memory left for KV per GPU", heaviest.free_bytes / 1e9, "GB",
       fmt::format("{:.0f} capacity - weights - {:.1f} reserve - {:.1f} workspace", cap_gb, config.reserve_bytes / 1e9,
                   config.workspace_bytes / 1e9)},
      {"max_requests", "max concurrent requests", max_requests, "requests",
       "floor(memory left / KV per request per GPU)"},
      {"batch", "batch (concurrent requests)", batch, "requests", options.batch == "max" ? "--batch max" : "--batch"},
      {"tpot_ms", "time per output token", decode.time_s * 1e3, "ms",
       fmt::format("one decode step, all {} layers{}", model.layers,
                   options.pp > 1 ? fmt::format(" through {} stages", options.pp) : "")},
      {"ttft_ms", "time to first token", first.time_s * 1e3, "ms",
       fmt::format("prefill of {} tokens, no queueing", prompt)},
      {"tokens_per_s", "tokens/s, deployment", tokens_per_s, "tokens/s",
       fmt::format("{} replica(s) x batch {} / TPOT", config.replicas, batch)},
      {"tokens_per_s_per_gpu", "tokens/s per GPU", tokens_per_s / gpus, "tokens/s", fmt::format("/ {} GPUs", gpus)},
      {"decode_bottleneck", "decode bottleneck", std::string(decode.bottleneck()), "",
       fmt::format("{:.0f}% of the step", 100.0 * decode.bottleneck_share())},
      {"prefill_bottleneck", "prefill bottleneck", std::string(first.bottleneck()), "",
       fmt::format("{:.0f}% of the prefill", 100.0 * first.bottleneck_share())},
  };
  if (calibration) {
    // The calibrated figures replace the roofline's above; the roofline's stay beside them.
    const auto row = [&rows](std::string_view key) {
      return std::find_if(rows.begin(), rows.end(), [key](const SummaryRow& r) { return r.key == key; });
    };
    row("tpot_ms")->derivation +=
        fmt::format(", calibrated ({} of {} decode ops)", calibrated_ops(decode), op_count(decode));
    row("ttft_ms")->derivation +=
        fmt::format(", calibrated ({} of {} prefill ops)", calibrated_ops(first), op_count(first));
    rows.insert(row("decode_bottleneck"), {{"tpot_roofline_ms", "time per output token, roofline",
                                            decode.roofline_s * 1e3, "ms", "the same step at the roofline bound"},
                                           {"ttft_roofline_ms", "time to first token, roofline", first.roofline_s * 1e3,
                                            "ms", "the same prefill at the roofline bound"},
                                           {"tokens_per_s_roofline", "tokens/s, deployment, roofline",
                                            tokens_per_s_roofline, "tokens/s", "at the roofline TPOT"},
                                           {"calibration", "calibration", calibration->file, "",
                                            fmt::format("learnt on {}", calibration->gpu_id)}});
  }
  report.tables.push_back(Table::from_rows<SummaryRow>(
      "summary",
      fmt::format("{} on {} x {} (TP {}, PP {}, {} replica(s)), weights {}, KV {}, context {}", model.id, gpus, gpu.id,
                  options.tp, options.pp, config.replicas, name_of(config.weights), name_of(config.kv),
                  options.context),
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
               fmt::format("One decode step on one GPU: batch {}, {} tokens cached per request ({})", batch,
                           memory.cached_tokens, timing),
               decode));
  report.tables.push_back(
      op_table("prefill", fmt::format("Prefill of one {}-token prompt on one GPU ({})", prompt, timing), first));

  const auto layers = static_cast<double>(model.layers);
  const AllReduceCompare ar_decode = tp_allreduce(model, gpu, sharding, config, batch);
  const AllReduceCompare ar_prefill = tp_allreduce(model, gpu, sharding, config, prompt);
  const LinkSpec up = scale_up_link(gpu, config.scale_up_latency_s);
  std::vector<AllReduceRow> ar_rows{
      {"decode", up.name, ar_decode.message_bytes, ar_decode.scale_up_s, layers, decode.time_s},
      {"decode", config.scale_out.name, ar_decode.message_bytes, ar_decode.scale_out_s, layers, decode.time_s},
      {"prefill", up.name, ar_prefill.message_bytes, ar_prefill.scale_up_s, layers, first.time_s},
      {"prefill", config.scale_out.name, ar_prefill.message_bytes, ar_prefill.scale_out_s, layers, first.time_s},
  };
  report.tables.push_back(Table::from_rows<AllReduceRow>(
      "tp_allreduce",
      fmt::format("TP all-reduce (ring over {} GPUs, 2 per layer): scale-up link vs scale-out network",
                  std::max(options.tp, 2)),
      allreduce_columns, ar_rows));

  if (options.levers) {
    std::vector<LeverRow> levers;
    for (DType w : {config.activations, DType::fp8_e4m3, DType::int8, DType::int4_g128, DType::nvfp4}) {
      for (DType kv : {config.activations, DType::fp8_e4m3}) {
        DeploymentConfig other = config;
        other.weights = w;
        other.kv = kv;
        const MemoryPlan m = plan_memory(model, gpu, sharding, other, options.context);
        LeverRow row{w, kv, m.heaviest().weights.total() / 1e9, m.max_requests(), {}, {}, {}, ""};
        if (!m.weights_fit() || m.max_requests() < 1) {
          row.bottleneck = m.weights_fit() ? "no request fits" : "weights do not fit";
        } else {
          const std::int64_t b = requested_batch == 0 ? m.max_requests() : std::min(requested_batch, m.max_requests());
          const StepTime step = decode_step(model, gpu, sharding, other, b, options.context, time);
          row.batch = b;
          row.tpot_ms = step.time_s * 1e3;
          row.tokens_per_s_per_gpu = static_cast<double>(config.replicas * b) / step.time_s / gpus;
          row.bottleneck = std::string(step.bottleneck());
          if (matmul_dtype(gpu, w, config.activations) != w && w != config.activations) {
            row.bottleneck += fmt::format(" ({} math)", name_of(config.activations));
          }
        }
        levers.push_back(row);
      }
    }
    report.tables.push_back(Table::from_rows<LeverRow>(
        "levers",
        fmt::format("What each format buys at the same deployment ({}; batch {})", "weights x KV cache",
                    requested_batch == 0 ? "max that fits" : fmt::format("{} or what fits", requested_batch)),
        lever_columns, levers));
  }

  report.extra_results = {{"weights_per_gpu_bytes", heaviest.weights.total()},
                          {"kv_per_token_model_bytes", memory.kv_bytes_per_token_model},
                          {"kv_per_token_gpu_bytes", kv_token_gpu},
                          {"kv_per_request_model_bytes", memory.kv_bytes_per_request_model},
                          {"kv_per_request_gpu_bytes", heaviest.kv_bytes_per_request},
                          {"kv_replication", sharding.kv_replication},
                          {"free_for_kv_bytes", heaviest.free_bytes},
                          {"max_requests", max_requests},
                          {"batch", batch},
                          {"tpot_ms", decode.time_s * 1e3},
                          {"ttft_ms", first.time_s * 1e3},
                          {"tokens_per_s", tokens_per_s},
                          {"tokens_per_s_per_gpu", tokens_per_s / gpus},
                          {"decode_bottleneck", decode.bottleneck()},
                          {"prefill_bottleneck", first.bottleneck()},
                          {"tp_allreduce_decode_scale_up_us", ar_decode.scale_up_s * 1e6},
                          {"tp_allreduce_decode_scale_out_us", ar_decode.scale_out_s * 1e6}};
  if (calibration) {
    report.extra_results["tpot_roofline_ms"] = decode.roofline_s * 1e3;
    report.extra_results["ttft_roofline_ms"] = first.roofline_s * 1e3;
    report.extra_results["tokens_per_s_roofline"] = tokens_per_s_roofline;
    report.extra_results["calibration"] = {
        {"file", calibration->file},      {"gpu", calibration->gpu_id},
        {"decode_ops", op_count(decode)}, {"decode_ops_calibrated", calibrated_ops(decode)},
        {"prefill_ops", op_count(first)}, {"prefill_ops_calibrated", calibrated_ops(first)}};
  }

  if (config.collectives) report.notes.push_back(collectives_note(config, gpu, *options.deployment.calibration));
  if (calibration) {
    report.notes.push_back(calibration_note(*calibration));
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
  if (model.moe) {
    report.notes.push_back(fmt::format(
        "mixture of experts: {} of {} experts per token; a step reads only the experts its tokens reach (expected "
        "E (1 - (1 - k/E)^tokens) with uniform routing); experts are split over TP like dense layers",
        model.moe->experts_per_token, model.moe->experts));
  }
  if (model.attention.sliding_window && prompt > *model.attention.sliding_window) {
    report.notes.push_back(
        "the prefill's attention counts every causal pair: the sliding window's savings beyond "
        "the window are not modelled");
  }
  report.notes.push_back(fmt::format(
      "TP all-reduce: ring, 2 (n - 1) steps of {:g} us + 2 (n - 1) / n x message / link bandwidth per direction; "
      "scale-out {:g} GB/s per GPU and direction (--scale-out-gbps)",
      options.deployment.scale_up_latency_us, options.deployment.scale_out_gbps));
  return report;
}

void setup_llm_command(CLI::App& app) {
  auto options = std::make_shared<LlmOptions>();
  CLI::App* command = app.add_subcommand(
      "llm", "One LLM deployment: weights and KV cache per GPU, max batch, decode and prefill op by op, TPOT, TTFT");
  add_model_options(*command, options->model);
  command->add_option("--gpu", options->gpu, "GPU id or alias")->required();
  command->add_option("--gpus", options->gpus, "GPUs in all (a multiple of TP x PP; default TP x PP)");
  command->add_option("--tp", options->tp, "Tensor-parallel GPUs per layer")->capture_default_str();
  command->add_option("--pp", options->pp, "Pipeline stages")->capture_default_str();
  command->add_option("--weights", options->weights,
                      "Format of the linear layers' weights: bf16, fp8, int8, int4_g128, nvfp4, ... (default: bf16, "
                      "fp16 on a GPU without bf16)");
  command->add_option("--kv", options->kv, "Format of the KV cache (default: as for --weights)");
  command->add_option("--embeddings", options->embeddings,
                      "Format of the embedding table and output head (default: as for --weights)");
  command->add_option("--context", options->context, "Tokens per request in the KV cache")->required();
  command->add_option("--prompt", options->prompt, "Prompt tokens for time to first token (default: --context)");
  command->add_option("--batch", options->batch, "Concurrent requests, or 'max' for as many as fit")
      ->capture_default_str();
  command->add_flag("!--no-levers", options->levers, "Leave out the table of weight/KV formats");
  add_deployment_flags(*command, options->deployment);
  add_what_if_option(*command, options->what_if);
  add_common_options(*command, options->common);
  command->callback([options] { emit(run_llm(*options, load_registry(options->common)), options->common); });
}

}  // namespace roofline::cli
