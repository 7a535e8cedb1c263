#pragma once

// One LLM deployment on GPUs, the memory side: how the model splits over tensor- and
// pipeline-parallel GPUs, where each GPU's memory goes (weights, KV cache, reserve, workspace)
// and how many requests fit. llm.hpp adds the time of a decode step and of a prefill.
// docs/llm.md derives every quantity.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "roofline/core/dtype.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/llm/model.hpp"
#include "roofline/model/collective_tables.hpp"
#include "roofline/model/comm.hpp"

namespace roofline {

// Defaults of the explicit memory and link flags; the CLI prints them with every report.
// Reserve: CUDA context, NCCL buffers, cuBLAS workspace and allocator slack. Workspace: the
// activations of the largest step in flight (prefill chunk, logits, CUDA graphs' buffers).
inline constexpr double default_reserve_gb = 3.0;
inline constexpr double default_workspace_gb = 2.0;
// One latency per message step of a collective (alpha of the alpha-beta model): assumptions, not
// measurements; calibrate them with NCCL tests' all_reduce_perf on the target system.
inline constexpr double default_scale_up_latency_us = 1.0;
inline constexpr double default_scale_out_latency_us = 5.0;
// Scale-out network per GPU and direction: one 400 Gb/s NIC per GPU (InfiniBand NDR / 400G
// Ethernet, the DGX H100 and HGX B200 reference designs) = 50 GB/s.
inline constexpr double default_scale_out_gbps = 50.0;
// GPUs one scale-up link connects (an HGX/DGX board of 8; GB200 NVL72 racks reach 72): TP and PP
// groups within it use the scale-up link, larger ones the scale-out network.
inline constexpr int default_scale_up_domain = 8;

// Expert parallelism and data-parallel attention within the TP group (expert_parallel.hpp,
// docs/deployment-modes.md).
struct ExpertLayout {
  int ep = 1;                 // GPUs of the TP group the routed experts are spread over (divides TP)
  bool attention_dp = false;  // attention, dense layers and the head whole on every GPU, over its own requests
  // The busiest EP rank's token-expert pairs over the mean; unset: the expectation under uniform
  // routing (uniform_routing_imbalance).
  std::optional<double> imbalance;
};

struct DeploymentConfig {
  int tp = 1;                   // tensor parallel: GPUs that split every layer
  int pp = 1;                   // pipeline parallel: stages that split the layers
  int replicas = 1;             // data-parallel copies of the model (GPUs = tp x pp x replicas)
  ExpertLayout experts;         // EP and attention DP within the TP group
  DType weights = DType::bf16;  // linear layers of the transformer blocks
  // The routed experts where the checkpoint stores them in another format than the other
  // projections (gpt-oss: mxfp4 experts, bf16 attention); unset: as weights.
  std::optional<DType> expert_weights;
  DType kv = DType::bf16;          // the KV cache
  DType embeddings = DType::bf16;  // embedding table and output head
  DType activations = DType::bf16;
  double reserve_bytes = default_reserve_gb * 1e9;
  double workspace_bytes = default_workspace_gb * 1e9;
  double scale_up_latency_s = default_scale_up_latency_us * 1e-6;
  int scale_up_domain = default_scale_up_domain;
  LinkSpec scale_out{"scale-out network", default_scale_out_gbps * 1e9, default_scale_out_latency_us * 1e-6};
  // Measured collectives (a calibration file's tables) of the GPU `collectives_gpu`: TP and PP
  // communication within the scale-up domain of that GPU is charged from them (collective_cost)
  // instead of the ring model. Shared: the planner copies configs by the thousand.
  std::shared_ptr<const CollectiveTables> collectives;
  std::string collectives_gpu;

  [[nodiscard]] int gpus() const { return tp * pp * replicas; }
  [[nodiscard]] DType expert_format() const { return expert_weights.value_or(weights); }
};

// How a model's dimensions split over the tensor-parallel group. Query heads, the feed-forward
// width and each expert's width split evenly (else InputError); KV heads split where there are
// at least as many as TP ranks, and are replicated (one per rank) where there are fewer.
struct Sharding {
  int tp = 1;
  int pp = 1;
  std::int64_t q_heads = 0;     // query heads per GPU
  std::int64_t kv_heads = 0;    // KV heads per GPU (GQA); 0 for MLA
  double kv_replication = 1;    // copies of each KV head (or MLA latent) in the TP group
  std::int64_t ffn = 0;         // dense feed-forward width per GPU
  std::int64_t expert_ffn = 0;  // expert width per GPU
  std::int64_t vocab = 0;       // vocabulary rows per GPU (ceil(vocab / tp))
  // Expert parallelism (expert_parallel.hpp): the routed experts spread over `ep` GPUs, each
  // expert's width split over tp / ep of them; with attention DP (attention_dp = tp), attention,
  // the dense layers, the shared experts and the head are whole on every GPU, each GPU serving
  // 1 / attention_dp of the requests.
  int ep = 1;
  int attention_dp = 1;
  std::int64_t local_experts = 0;          // routed experts per GPU
  std::int64_t shared_expert_ffn = 0;      // the shared experts' width per GPU (each)
  std::optional<double> expert_imbalance;  // ExpertLayout::imbalance
};
// Throws InputError naming --tp or --pp and the dimension that does not divide.
[[nodiscard]] Sharding shard(const ModelSpec& model, int tp, int pp);
// The same with the config's expert layout applied (apply_expert_layout); throws InputError naming
// --ep, --attention-dp or --expert-imbalance.
[[nodiscard]] Sharding shard(const ModelSpec& model, const DeploymentConfig& config);

// The layers of one pipeline stage (stages split the layers as evenly as possible, the first
// ones taking one more when they do not divide; a MoE model's dense layers come first).
struct StageLayers {
  std::int64_t first_layer = 0;
  std::int64_t dense = 0;
  std::int64_t moe = 0;
  bool holds_embedding = false;
  bool holds_head = false;  // output head and final norm
  [[nodiscard]] std::int64_t layers() const { return dense + moe; }
};
[[nodiscard]] std::vector<StageLayers> stage_layers(const ModelSpec& model, int pp);

// Weight bytes one GPU of a stage holds. `linear`: the projection and expert matrices in the
// weight format; `small`: norms, biases and routers, kept in the activation format.
struct WeightBytes {
  double linear = 0;
  double routed = 0;  // of linear, the routed experts (in DeploymentConfig::expert_format())
  double small = 0;
  double embedding = 0;
  double head = 0;
  [[nodiscard]] double total() const { return linear + small + embedding + head; }
};
// The same split counted in elements (parameters) rather than bytes.
[[nodiscard]] WeightBytes stage_weight_elements(const ModelSpec& model, const Sharding& sharding,
                                                const StageLayers& stage);
[[nodiscard]] WeightBytes stage_weight_bytes(const ModelSpec& model, const Sharding& sharding, const StageLayers& stage,
                                             const DeploymentConfig& config);

// Elements of one layer held by one GPU of the TP group (before bytes).
struct LayerElements {
  double attention = 0;  // projection matrices
  double ffn = 0;        // dense feed-forward, or all routed + shared experts
  double routed = 0;     // of ffn, the routed experts
  double small = 0;      // norms, biases, router
};
[[nodiscard]] LayerElements layer_elements(const ModelSpec& model, const Sharding& sharding, bool moe_layer);

// KV-cache bytes per token and layer: 2 x KV heads x head dim x bytes (K and V), or for MLA
// (kv_lora_rank + qk_rope_head_dim) x bytes. Whole model (no sharding) and per GPU.
[[nodiscard]] double kv_bytes_per_token_layer(const ModelSpec& model, DType kv);
[[nodiscard]] double kv_bytes_per_token_layer_gpu(const ModelSpec& model, const Sharding& sharding, DType kv);

struct StageMemory {
  StageLayers layers;
  WeightBytes weights;
  double kv_bytes_per_token = 0;    // this GPU, all its layers
  double kv_bytes_per_request = 0;  // at the context length
  double free_bytes = 0;            // capacity - weights - reserve - workspace
  std::int64_t max_requests = 0;    // floor(free / kv per request) x attention DP ranks, 0 when free <= 0
};

struct MemoryPlan {
  double capacity_bytes = 0;              // per GPU
  double weight_bytes_model = 0;          // every parameter once, in its format
  double kv_bytes_per_token_model = 0;    // whole model, unsharded
  double kv_bytes_per_request_model = 0;  // at the context length
  std::int64_t cached_tokens = 0;         // tokens per request in the fullest layer's cache (a window caps)
  double cached_token_layers = 0;         // tokens cached summed over the layers (per-layer windows)
  std::vector<StageMemory> stages;
  // The stage that bounds the deployment: most weights per GPU, fewest requests.
  [[nodiscard]] const StageMemory& heaviest() const;
  [[nodiscard]] std::int64_t max_requests() const;
  [[nodiscard]] bool weights_fit() const;
};
[[nodiscard]] MemoryPlan plan_memory(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                                     const DeploymentConfig& config, std::int64_t context);

// The format the projections multiply in on this GPU: the weight format itself where it is a
// compute format the GPU states a tensor rate for (fp8, int8, nvfp4/mxfp4 on Blackwell), else the
// activation format (weight-only formats such as int4_g128 are widened before the multiply).
[[nodiscard]] DType matmul_dtype(const GpuSpec& gpu, DType weights, DType activations);
// bf16, or fp16 on a GPU without a bf16 rate (V100).
[[nodiscard]] DType default_activation_dtype(const GpuSpec& gpu);

}  // namespace roofline
