#include "roofline/llm/deployment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "roofline/core/error.hpp"

namespace roofline {
namespace {

double bytes_of(DType type) {
  return bytes_per_element(type);
}

}  // namespace

Sharding shard(const ModelSpec& model, int tp, int pp) {
  if (tp < 1) throw InputError(fmt::format("--tp {}: must be at least 1", tp));
  if (pp < 1) throw InputError(fmt::format("--pp {}: must be at least 1", pp));
  const AttentionSpec& a = model.attention;
  Sharding s;
  s.tp = tp;
  s.pp = pp;
  if (a.heads % tp != 0) {
    throw InputError(fmt::format("--tp {} does not divide the {} attention heads of {}", tp, a.heads, model.id));
  }
  s.q_heads = a.heads / tp;
  if (a.kind == AttentionKind::gqa) {
    if (a.kv_heads >= tp) {
      if (a.kv_heads % tp != 0) {
        throw InputError(fmt::format("--tp {} does not divide the {} KV heads of {}", tp, a.kv_heads, model.id));
      }
      s.kv_heads = a.kv_heads / tp;
    } else {
      // Fewer KV heads than ranks: each rank keeps the one KV head its query heads read.
      if (tp % a.kv_heads != 0) {
        throw InputError(fmt::format("--tp {} is not a multiple of the {} KV heads of {}", tp, a.kv_heads, model.id));
      }
      s.kv_heads = 1;
      s.kv_replication = static_cast<double>(tp) / static_cast<double>(a.kv_heads);
    }
  } else {
    // The latent is shared by all heads, so every rank caches all of it.
    s.kv_heads = 0;
    s.kv_replication = tp;
  }
  if (model.dense_layers() > 0) {
    if (model.ffn.intermediate % tp != 0) {
      throw InputError(
          fmt::format("--tp {} does not divide the feed-forward width {} of {}", tp, model.ffn.intermediate, model.id));
    }
    s.ffn = model.ffn.intermediate / tp;
  }
  if (model.moe) {
    if (model.moe->expert_intermediate % tp != 0) {
      throw InputError(fmt::format("--tp {} does not divide the expert width {} of {}", tp,
                                   model.moe->expert_intermediate, model.id));
    }
    s.expert_ffn = model.moe->expert_intermediate / tp;
    s.local_experts = model.moe->experts;
    s.shared_expert_ffn = s.expert_ffn;
  }
  s.vocab = (model.vocab + tp - 1) / tp;
  if (pp > model.layers) {
    throw InputError(fmt::format("--pp {} is more than the {} layers of {}", pp, model.layers, model.id));
  }
  return s;
}

std::vector<StageLayers> stage_layers(const ModelSpec& model, int pp) {
  std::vector<StageLayers> stages;
  const std::int64_t base = model.layers / pp;
  const std::int64_t extra = model.layers % pp;
  std::int64_t first = 0;
  for (int i = 0; i < pp; ++i) {
    const std::int64_t count = base + (i < extra ? 1 : 0);
    StageLayers stage;
    stage.first_layer = first;
    // --- models (issue 19): each layer as the model orders them (Llama 4 Maverick interleaves).
    for (std::int64_t layer = first; layer < first + count; ++layer) stage.moe += model.moe_layer(layer) ? 1 : 0;
    stage.dense = count - stage.moe;
    stage.holds_embedding = i == 0;
    stage.holds_head = i == pp - 1;
    stages.push_back(stage);
    first += count;
  }
  return stages;
}

LayerElements layer_elements(const ModelSpec& model, const Sharding& s, bool moe_layer) {
  const AttentionSpec& a = model.attention;
  const auto h = static_cast<double>(model.hidden);
  const auto hq = static_cast<double>(s.q_heads);
  const double norm_width = model.norm == NormKind::layernorm ? 2.0 : 1.0;
  LayerElements e;
  e.small = 2.0 * norm_width * h;
  if (a.kind == AttentionKind::gqa) {
    const auto d = static_cast<double>(a.head_dim);
    const auto hkv = static_cast<double>(s.kv_heads);
    e.attention = h * hq * d + 2.0 * h * hkv * d + hq * d * h;
    if (a.qkv_bias) e.small += (hq + 2.0 * hkv) * d;
    if (a.sinks) e.small += hq;  // --- models (issue 19): one sink logit per head (gpt-oss)
  } else {
    // The down-projections (W_DQ, W_DKV + W_KR) are replicated on every rank (their outputs are
    // shared by all heads); the per-head up-projections and W_O are split.
    const auto qk = static_cast<double>(a.qk_head_dim());
    const auto q_rank = static_cast<double>(a.q_lora_rank);
    const auto kv_rank = static_cast<double>(a.kv_lora_rank);
    e.attention = (a.q_lora_rank > 0 ? h * q_rank + q_rank * hq * qk : h * hq * qk) +
                  h * (kv_rank + static_cast<double>(a.qk_rope_head_dim)) +
                  kv_rank * hq * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim) +
                  hq * static_cast<double>(a.v_head_dim) * h;
    e.small += kv_rank + q_rank;  // the latents' norms (q_rank is 0 without query compression)
  }
  const double matrices = model.ffn.kind == FfnKind::gated ? 3.0 : 2.0;
  if (moe_layer) {
    const MoeSpec& m = *model.moe;
    // Expert parallelism (expert_parallel.hpp): this GPU's routed experts, and the shared ones.
    e.routed = static_cast<double>(s.local_experts * s.expert_ffn) * matrices * h;
    e.ffn = e.routed + static_cast<double>(m.shared_experts * s.shared_expert_ffn) * matrices * h;
    e.small += h * static_cast<double>(m.experts);  // router, replicated
  } else {
    e.ffn = matrices * h * static_cast<double>(s.ffn);
  }
  return e;
}

WeightBytes stage_weight_elements(const ModelSpec& model, const Sharding& s, const StageLayers& stage) {
  WeightBytes w;
  const LayerElements dense = layer_elements(model, s, false);
  w.linear = static_cast<double>(stage.dense) * (dense.attention + dense.ffn);
  w.small = static_cast<double>(stage.dense) * dense.small;
  if (stage.moe > 0) {
    const LayerElements moe = layer_elements(model, s, true);
    w.linear += static_cast<double>(stage.moe) * (moe.attention + moe.ffn);
    w.routed = static_cast<double>(stage.moe) * moe.routed;
    w.small += static_cast<double>(stage.moe) * moe.small;
  }
  const double table = static_cast<double>(s.vocab) * static_cast<double>(model.hidden);
  if (stage.holds_embedding) w.embedding = table;
  if (stage.holds_head) {
    // A tied head reuses the embedding table when the same GPU holds both.
    if (!(model.tied_embeddings && stage.holds_embedding)) w.head = table;
    const double norm_width = model.norm == NormKind::layernorm ? 2.0 : 1.0;
    w.small += norm_width * static_cast<double>(model.hidden);
  }
  return w;
}

WeightBytes stage_weight_bytes(const ModelSpec& model, const Sharding& s, const StageLayers& stage,
                               const DeploymentConfig& config) {
  WeightBytes w = stage_weight_elements(model, s, stage);
  w.linear = (w.linear - w.routed) * bytes_of(config.weights) + w.routed * bytes_of(config.expert_format());
  w.routed *= bytes_of(config.expert_format());
  w.small *= bytes_of(config.activations);
  w.embedding *= bytes_of(config.embeddings);
  w.head *= bytes_of(config.embeddings);
  return w;
}

double kv_bytes_per_token_layer(const ModelSpec& model, DType kv) {
  const AttentionSpec& a = model.attention;
  if (a.kind == AttentionKind::mla) return static_cast<double>(a.kv_lora_rank + a.qk_rope_head_dim) * bytes_of(kv);
  return 2.0 * static_cast<double>(a.kv_heads * a.head_dim) * bytes_of(kv);
}

double kv_bytes_per_token_layer_gpu(const ModelSpec& model, const Sharding& s, DType kv) {
  const AttentionSpec& a = model.attention;
  if (a.kind == AttentionKind::mla) return kv_bytes_per_token_layer(model, kv);
  return 2.0 * static_cast<double>(s.kv_heads * a.head_dim) * bytes_of(kv);
}

const StageMemory& MemoryPlan::heaviest() const {
  const auto it = std::min_element(stages.begin(), stages.end(), [](const StageMemory& a, const StageMemory& b) {
    if (a.max_requests != b.max_requests) return a.max_requests < b.max_requests;
    return a.weights.total() > b.weights.total();
  });
  return *it;
}

std::int64_t MemoryPlan::max_requests() const {
  return heaviest().max_requests;
}

bool MemoryPlan::weights_fit() const {
  return std::all_of(stages.begin(), stages.end(), [](const StageMemory& s) { return s.free_bytes > 0; });
}

MemoryPlan plan_memory(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                       const DeploymentConfig& config, std::int64_t context) {
  MemoryPlan plan;
  plan.capacity_bytes = gpu.memory_capacity_bytes();
  plan.cached_tokens = model.cached_tokens(context);
  const Sharding whole = shard(model, 1, 1);
  plan.weight_bytes_model = stage_weight_bytes(model, whole, stage_layers(model, 1).front(), config).total();
  plan.kv_bytes_per_token_model = kv_bytes_per_token_layer(model, config.kv) * static_cast<double>(model.layers);
  plan.cached_token_layers = model.cached_token_layers(context);
  plan.kv_bytes_per_request_model = kv_bytes_per_token_layer(model, config.kv) * plan.cached_token_layers;
  const double kv_layer_gpu = kv_bytes_per_token_layer_gpu(model, sharding, config.kv);
  for (const StageLayers& layers : stage_layers(model, sharding.pp)) {
    StageMemory stage;
    stage.layers = layers;
    stage.weights = stage_weight_bytes(model, sharding, layers, config);
    stage.kv_bytes_per_token = kv_layer_gpu * static_cast<double>(layers.layers());
    stage.kv_bytes_per_request = kv_layer_gpu * model.cached_token_layers(context, layers.first_layer, layers.layers());
    stage.free_bytes = plan.capacity_bytes - stage.weights.total() - config.reserve_bytes - config.workspace_bytes;
    if (stage.free_bytes > 0) {
      // With attention DP each GPU caches only its own requests: the group holds attention_dp times as many.
      stage.max_requests =
          static_cast<std::int64_t>(std::floor(stage.free_bytes / stage.kv_bytes_per_request)) * sharding.attention_dp;
    }
    plan.stages.push_back(stage);
  }
  return plan;
}

DType matmul_dtype(const GpuSpec& gpu, DType weights, DType activations) {
  switch (weights) {
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
    case DType::int8:
    case DType::fp4:
    case DType::nvfp4:
    case DType::mxfp8:
    case DType::mxfp6:
    case DType::mxfp4: return gpu.matrix_peak_class(weights) ? weights : activations;
    case DType::int4:
    case DType::int4_g128: return activations;  // AWQ/GPTQ kernels widen to 16 bits (W4A16)
    default: return weights;
  }
}

DType default_activation_dtype(const GpuSpec& gpu) {
  return gpu.peak_flops(PeakClass::bf16) ? DType::bf16 : DType::fp16;
}

}  // namespace roofline
