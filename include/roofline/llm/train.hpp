#pragma once

// Training memory per GPU: parameters, gradients and Adam's optimizer states under mixed
// precision, split by tensor/pipeline parallelism and sharded by ZeRO stage 0-3 (FSDP) over the
// data-parallel GPUs; activations with and without full recomputation. docs/llm.md derives it.

#include <cstdint>
#include <string>
#include <vector>

#include "roofline/hardware/hardware.hpp"
#include "roofline/llm/deployment.hpp"
#include "roofline/llm/model.hpp"

namespace roofline {

// Mixed-precision Adam (Rajbhandari et al., ZeRO, SC'20, section 3.1): 2 bytes of 16-bit
// weights, 2 of 16-bit gradients, and K = 12 bytes of fp32 optimizer state (master weights,
// momentum, variance) per parameter.
inline constexpr double train_weight_bytes = 2.0;
inline constexpr double train_gradient_bytes = 2.0;
inline constexpr double train_optimizer_bytes = 12.0;

struct TrainConfig {
  int gpus = 1;
  int tp = 1;
  int pp = 1;
  int zero = 0;            // 0: nothing sharded; 1: optimizer states; 2: + gradients; 3 (FSDP): + weights
  bool recompute = false;  // full activation recomputation (checkpoint every layer's input)
  std::int64_t seq = 4096;
  std::int64_t micro_batch = 1;
  double reserve_bytes = default_reserve_gb * 1e9;

  [[nodiscard]] int data_parallel() const { return gpus / (tp * pp); }
};

// Activation bytes one token leaves for the backward pass in one layer, with 16-bit
// activations, flash attention (no score matrix stored) and no dropout: the inputs of every
// matmul and norm, the attention's Q, K, V and output, its fp32 log-sum-exp, the gated
// activation's inputs. The generalisation of Korthikanti et al. (MLSys 2023, s b h (34 + 5 a s / h)) to GQA,
// MLA, gated and expert feed-forward layers. Not divided by TP.
[[nodiscard]] double activation_bytes_per_token_layer(const ModelSpec& model, bool moe_layer);

struct TrainMemory {
  int data_parallel = 1;
  double parameters_per_gpu = 0;  // the heaviest pipeline stage's TP shard, before ZeRO
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double gathered_bytes = 0;  // ZeRO-3: two layers' weights gathered at a time (current + prefetch)
  double activations_bytes = 0;
  double activations_full_bytes = 0;       // without recomputation
  double activations_recompute_bytes = 0;  // with full recomputation
  double logits_bytes = 0;                 // fp32 logits kept for the loss (last stage)
  double reserve_bytes = 0;
  double capacity_bytes = 0;
  [[nodiscard]] double total() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + gathered_bytes + activations_bytes + logits_bytes +
           reserve_bytes;
  }
  [[nodiscard]] bool fits() const { return total() <= capacity_bytes; }
};

// Throws InputError when the GPU count is not a multiple of tp x pp, or the ZeRO stage is not 0-3.
[[nodiscard]] TrainMemory train_memory(const ModelSpec& model, const GpuSpec& gpu, const TrainConfig& config);

// Ways out when a configuration does not fit, as one line each ("--zero 3 --recompute: 61.2 GB").
[[nodiscard]] std::vector<std::string> train_suggestions(const ModelSpec& model, const GpuSpec& gpu,
                                                         const TrainConfig& config);

}  // namespace roofline
