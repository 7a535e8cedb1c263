#include "roofline/llm/train.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "roofline/core/error.hpp"

namespace roofline {
namespace {

// Bytes of a 16-bit activation, and of the fp32 statistics that attention and the loss keep.
constexpr double act_bytes = 2.0;
constexpr double stat_bytes = 4.0;

struct StageTrainMemory {
  TrainMemory memory;
  double total = 0;
};

TrainMemory stage_memory(const ModelSpec& model, const GpuSpec& gpu, const TrainConfig& config,
                         const Sharding& sharding, const StageLayers& stage, std::size_t stage_index) {
  TrainMemory m;
  m.data_parallel = config.data_parallel();
  m.capacity_bytes = gpu.memory_capacity_bytes();
  m.reserve_bytes = config.reserve_bytes;
  const auto nd = static_cast<double>(m.data_parallel);
  const double psi = stage_weight_elements(model, sharding, stage).total();
  m.parameters_per_gpu = psi;
  m.weights_bytes = psi * train_weight_bytes / (config.zero >= 3 ? nd : 1.0);
  m.gradients_bytes = psi * train_gradient_bytes / (config.zero >= 2 ? nd : 1.0);
  m.optimizer_bytes = psi * train_optimizer_bytes / (config.zero >= 1 ? nd : 1.0);
  if (config.zero >= 3) {
    // FSDP/ZeRO-3 gathers a layer's full (TP-shard) weights before using it and prefetches the next.
    const LayerElements largest = layer_elements(model, sharding, stage.moe > 0);
    m.gathered_bytes = 2.0 * (largest.attention + largest.ffn + largest.small) * train_weight_bytes;
  }

  // 1F1B: stage i keeps the activations of pp - i micro-batches in flight. Sequence parallelism
  // (with TP) splits every activation over the TP ranks.
  const auto in_flight = static_cast<double>(config.pp) - static_cast<double>(stage_index);
  const double tokens = static_cast<double>(config.seq * config.micro_batch) / static_cast<double>(config.tp);
  const double dense = activation_bytes_per_token_layer(model, false);
  const double moe = model.moe ? activation_bytes_per_token_layer(model, true) : 0.0;
  const double per_token = static_cast<double>(stage.dense) * dense + static_cast<double>(stage.moe) * moe;
  m.activations_full_bytes = per_token * tokens * in_flight;
  // Recomputation keeps each layer's input (hidden x 2 bytes) and rebuilds one layer at a time.
  const double checkpoints = static_cast<double>(stage.layers()) * static_cast<double>(model.hidden) * act_bytes;
  m.activations_recompute_bytes = checkpoints * tokens * in_flight + std::max(dense, moe) * tokens;
  m.activations_bytes = config.recompute ? m.activations_recompute_bytes : m.activations_full_bytes;
  // The logits are split over the vocabulary (each TP rank holds every token's slice), not the sequence.
  if (stage.holds_head) {
    m.logits_bytes =
        static_cast<double>(config.seq * config.micro_batch) * static_cast<double>(sharding.vocab) * stat_bytes;
  }
  return m;
}

std::string gb(double bytes) {
  return fmt::format("{:.1f} GB", bytes / 1e9);
}

}  // namespace

double activation_bytes_per_token_layer(const ModelSpec& model, bool moe_layer) {
  const AttentionSpec& a = model.attention;
  const auto h = static_cast<double>(model.hidden);
  const auto heads = static_cast<double>(a.heads);
  // Attention block: the norm's input, the projections' input, then per kind.
  double attention = 2.0 * h * act_bytes;
  if (a.kind == AttentionKind::gqa) {
    const double q = heads * static_cast<double>(a.head_dim);
    const auto kv = static_cast<double>(a.kv_heads * a.head_dim);
    attention += (q + 2.0 * kv) * act_bytes  // Q, K, V (flash attention's backward reads them)
                 + q * act_bytes;            // attention output = W_O's input
  } else {
    const auto q_rank = static_cast<double>(a.q_lora_rank);
    const auto kv_rank = static_cast<double>(a.kv_lora_rank);
    const auto qk = static_cast<double>(a.qk_head_dim());
    const auto v = static_cast<double>(a.v_head_dim);
    attention += 2.0 * q_rank * act_bytes     // query latent: its norm's input and W_UQ's input
                 + 2.0 * kv_rank * act_bytes  // KV latent: its norm's input and W_UKV's input
                 + static_cast<double>(a.qk_rope_head_dim) * act_bytes  // shared rotary key
                 + heads * (2.0 * qk + v) * act_bytes                   // Q, K, V per head
                 + heads * v * act_bytes;                               // W_O's input
  }
  attention += heads * stat_bytes;  // flash attention's log-sum-exp per query head

  const double gated_inputs = model.ffn.kind == FfnKind::gated ? 3.0 : 2.0;  // act inputs + W_down's input
  double ffn = 2.0 * h * act_bytes;  // the norm's input, and the first matmul's input
  if (moe_layer) {
    const MoeSpec& m = *model.moe;
    const auto k = static_cast<double>(m.experts_per_token);
    const auto f = static_cast<double>(m.expert_intermediate);
    ffn += static_cast<double>(m.experts) * stat_bytes  // router logits
           + k * h * act_bytes                          // each routed copy of the token
           + (k + static_cast<double>(m.shared_experts)) * gated_inputs * f * act_bytes;
  } else {
    ffn += gated_inputs * static_cast<double>(model.ffn.intermediate) * act_bytes;
  }
  return attention + ffn;
}

TrainMemory train_memory(const ModelSpec& model, const GpuSpec& gpu, const TrainConfig& config) {
  if (config.zero < 0 || config.zero > 3) throw InputError(fmt::format("--zero {}: must be 0, 1, 2 or 3", config.zero));
  if (config.gpus < 1) throw InputError(fmt::format("--gpus {}: must be at least 1", config.gpus));
  if (config.seq < 1 || config.seq > max_tokens) {
    throw InputError(fmt::format("--seq {}: must be 1 to {}", config.seq, max_tokens));
  }
  if (config.micro_batch < 1 || config.micro_batch > max_batch) {
    throw InputError(fmt::format("--micro-batch {}: must be 1 to {}", config.micro_batch, max_batch));
  }
  const Sharding sharding = shard(model, config.tp, config.pp);
  if (config.gpus % (config.tp * config.pp) != 0) {
    throw InputError(
        fmt::format("--gpus {} is not a multiple of --tp {} x --pp {}", config.gpus, config.tp, config.pp));
  }
  const std::vector<StageLayers> stages = stage_layers(model, config.pp);
  TrainMemory heaviest;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    TrainMemory m = stage_memory(model, gpu, config, sharding, stages[i], i);
    if (i == 0 || m.total() > heaviest.total()) heaviest = m;
  }
  return heaviest;
}

std::vector<std::string> train_suggestions(const ModelSpec& model, const GpuSpec& gpu, const TrainConfig& config) {
  std::vector<std::string> out;
  if (train_memory(model, gpu, config).fits()) return out;
  // Same GPUs, other ZeRO stage or recomputation: cheapest first (less communication, no
  // recomputation, lower stage).
  for (bool recompute : {false, true}) {
    for (int zero = 0; zero <= 3; ++zero) {
      TrainConfig other = config;
      other.zero = zero;
      other.recompute = recompute;
      if (other.zero == config.zero && other.recompute == config.recompute) continue;
      const TrainMemory m = train_memory(model, gpu, other);
      if (m.fits()) {
        out.push_back(fmt::format("--zero {}{}: {} per GPU of {}", zero, recompute ? " --recompute" : "", gb(m.total()),
                                  gb(m.capacity_bytes)));
      }
    }
  }
  if (!out.empty()) return out;
  // More data-parallel GPUs: ZeRO-3 divides the 16 bytes per parameter by the data-parallel size.
  TrainConfig best = config;
  best.zero = 3;
  best.recompute = true;
  const TrainMemory m = train_memory(model, gpu, best);
  const double state = m.weights_bytes + m.gradients_bytes + m.optimizer_bytes;
  const double fixed = m.total() - state;
  const double room = m.capacity_bytes - fixed;
  if (room > 0) {
    const double needed_dp = std::ceil(state * m.data_parallel / room);
    const double gpus = needed_dp * config.tp * config.pp;
    out.push_back(
        fmt::format("--zero 3 --recompute with --gpus {:.0f} (data-parallel {:.0f}): the {} of weights, "
                    "gradients and optimizer states per GPU shrink to fit beside {} of activations, "
                    "buffers and reserve",
                    gpus, needed_dp, gb(state), gb(fixed)));
  } else {
    out.push_back(
        fmt::format("even with --zero 3 --recompute, activations, buffers and reserve take {} of {} per "
                    "GPU: raise --tp (sequence parallelism splits activations) or lower --seq or "
                    "--micro-batch",
                    gb(fixed), gb(m.capacity_bytes)));
  }
  return out;
}

}  // namespace roofline
