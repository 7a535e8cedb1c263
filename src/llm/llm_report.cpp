#include "roofline/llm/llm_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "roofline/core/error.hpp"

namespace roofline {
namespace {

// Every weight format a deployment commonly picks, each with the KV cache in the activation
// format and in fp8.
std::vector<FormatLever> format_levers(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                                       const DeploymentConfig& config, const LlmQuery& query, const TimeOptions& time) {
  std::vector<FormatLever> levers;
  for (DType w : {config.activations, DType::fp8_e4m3, DType::int8, DType::int4_g128, DType::nvfp4}) {
    for (DType kv : {config.activations, DType::fp8_e4m3}) {
      DeploymentConfig other = config;
      other.weights = w;
      other.kv = kv;
      const MemoryPlan m = plan_memory(model, gpu, sharding, other, query.context);
      FormatLever lever{w, kv, m.heaviest().weights.total(), m.max_requests(), {}, {}, {}, ""};
      if (!m.weights_fit() || m.max_requests() < 1) {
        lever.bottleneck = m.weights_fit() ? "no request fits" : "weights do not fit";
      } else {
        const std::int64_t b = query.batch == 0 ? m.max_requests() : std::min(query.batch, m.max_requests());
        const StepTime step = decode_step(model, gpu, sharding, other, b, query.context, time);
        lever.batch = b;
        lever.tpot_s = step.time_s;
        lever.tokens_per_s_per_gpu = static_cast<double>(config.replicas * b) / step.time_s / config.gpus();
        lever.bottleneck = std::string(step.bottleneck());
        if (matmul_dtype(gpu, w, config.activations) != w && w != config.activations) {
          lever.bottleneck += fmt::format(" ({} math)", name_of(config.activations));
        }
      }
      levers.push_back(lever);
    }
  }
  return levers;
}

}  // namespace

LlmReport llm_report(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                     const DeploymentConfig& config, const LlmQuery& query, const TimeOptions& time) {
  LlmReport r;
  r.sharding = sharding;
  r.memory = plan_memory(model, gpu, sharding, config, query.context);
  const StageMemory& heaviest = r.memory.heaviest();
  if (!r.memory.weights_fit()) {
    throw InputError(fmt::format(
        "{} does not fit on {} x {} with TP {} PP {}: {:.1f} GB of {} weights per GPU + {:.1f} GB reserve and "
        "workspace > {:.0f} GB; raise --tp/--pp or use lower-bit --weights",
        model.id, config.tp * config.pp, gpu.id, config.tp, config.pp, heaviest.weights.total() / 1e9,
        name_of(config.weights), (config.reserve_bytes + config.workspace_bytes) / 1e9, r.memory.capacity_bytes / 1e9));
  }
  r.max_requests = r.memory.max_requests();
  if (r.max_requests < 1) {
    throw InputError(fmt::format(
        "not one request of {} tokens fits: {:.2f} GB of KV cache per request per GPU, {:.2f} GB free; lower "
        "--context, use --kv fp8, or more GPUs",
        r.memory.cached_tokens, heaviest.kv_bytes_per_request / 1e9, heaviest.free_bytes / 1e9));
  }
  if (query.batch > r.max_requests) {
    throw InputError(
        fmt::format("--batch {}: only {} requests of {} tokens fit ({:.3f} GB of KV per request per GPU, "
                    "{:.2f} GB free); lower --batch or --context, or use --kv fp8",
                    query.batch, r.max_requests, r.memory.cached_tokens, heaviest.kv_bytes_per_request / 1e9,
                    heaviest.free_bytes / 1e9));
  }
  r.batch = query.batch == 0 ? r.max_requests : query.batch;
  r.kv_bytes_per_token_gpu =
      kv_bytes_per_token_layer_gpu(model, sharding, config.kv) * static_cast<double>(model.layers);

  r.decode = decode_step(model, gpu, sharding, config, r.batch, query.context, time);
  r.prefill = prefill(model, gpu, sharding, config, query.prompt, time);
  r.tokens_per_s = static_cast<double>(config.replicas * r.batch) / r.decode.time_s;
  r.tokens_per_s_roofline = static_cast<double>(config.replicas * r.batch) / r.decode.roofline_s;

  r.scale_up = scale_up_link(gpu, config.scale_up_latency_s);
  r.allreduce_decode = tp_allreduce(model, gpu, sharding, config, r.batch);
  r.allreduce_prefill = tp_allreduce(model, gpu, sharding, config, query.prompt);
  if (query.levers) r.levers = format_levers(model, gpu, sharding, config, query, time);
  return r;
}

std::int64_t op_count(const StepTime& step) {
  std::int64_t n = 0;
  for (const LayerGroup& g : step.groups) n += static_cast<std::int64_t>(g.ops.size());
  return n;
}

std::int64_t calibrated_op_count(const StepTime& step) {
  std::int64_t n = 0;
  for (const LayerGroup& g : step.groups) {
    for (const StepOp& op : g.ops) n += op.calibration && op.calibration->applied ? 1 : 0;
  }
  return n;
}

}  // namespace roofline
