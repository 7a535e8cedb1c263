#pragma once

// One decoder step on one GPU of the tensor-parallel group, as a list of operations with their
// shapes: what `llm` times (roofline, calibrated, collectives), what the layer benchmark runs
// stage by stage on the GPU, and what `validate` predicts for that benchmark. One list, so that
// what is measured is what is predicted.
//
// Each op says what it is (kind), how the model counts it (the model's own cost functions: gemv_cost,
// norm_cost, flash_attention_cost, ...), in which formats (weights, activations, KV), on which math
// unit, and what its time is spent on. Transfers between GPUs (the TP all-reduces, the logits
// gather, pipeline sends) are ops too: they carry their message, their time comes from the link.
//
// What engines run (vLLM, TensorRT-LLM, SGLang), and so what the list says:
//   - the residual add is fused into the next norm (fused add + RMSNorm): attn_norm and ffn_norm
//     read the sub-layer output and the residual stream and write both the new stream and the
//     normalised rows; a layer leaves its FFN output for the next layer's attn_norm to add;
//   - rotary embedding is its own kernel on the new queries and keys (after qkv_proj), then the
//     new keys and values are appended to the cache (kv_append), then attention;
//   - attention kernels read token-major Q/K/V and write token-major outputs. A kernel that needs
//     head-major tensors (StepKernels::head_major_prefill) makes rope write the queries head-major
//     (the same bytes) and adds attn_merge, the move of the outputs back to token-major;
//   - where the projections multiply in a narrower format than the activations (StepFormats::matmul:
//     FP8 weights on a GPU with an FP8 tensor rate), a prefill projection is an FP8 x FP8 GEMM (W8A8,
//     static per-tensor scales: NVIDIA's FP8 checkpoints as TensorRT-LLM and vLLM run them) whose
//     input the op before it writes in that format: the norm (fused add + RMSNorm + quantise), the
//     activation (SwiGLU + quantise), and after attention, whose kernels write the activation format,
//     a quantize op (or attn_merge, which quantises as it moves). Decode projections stay GEMVs on
//     the narrow weights with 16-bit activations (W8A16: the weight bytes dominate at small batches)
//     up to w8a16_gemv_max_batch tokens, and are W8A8 GEMMs above it (as serving engines run FP8
//     checkpoints at large batches) or wherever StepKernels::quantized_decode_linears says the kernels
//     that run them need quantised inputs. MLA layers and routed experts keep 16-bit activations.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "roofline/basis/basis.hpp"
#include "roofline/llm/deployment.hpp"
#include "roofline/llm/model.hpp"
#include "roofline/model/attention.hpp"
#include "roofline/model/comm.hpp"
#include "roofline/model/ops.hpp"

namespace roofline {

// What an op's time is spent on, for the bottleneck.
enum class OpRole : std::uint8_t { weights, kv_cache, activations, tp_comm, pp_comm, ep_comm };
[[nodiscard]] std::string_view name_of(OpRole role);

// What an op is, for whoever runs it (the layer benchmark maps each kind to its kernel).
enum class OpKind : std::uint8_t {
  norm,              // RMSNorm / LayerNorm with the residual add fused
  linear,            // x W: a GEMV per weight matrix at decode, a GEMM at prefill (per head: MLA's absorb)
  routed_linear,     // the routed experts' GEMVs/GEMMs over the experts reached
  rope,              // rotary embedding of the new queries and keys
  kv_append,         // the new keys and values (or latents) into the cache
  attention,         // flash attention over the cache (decode) or causal over the prompt (prefill)
  latent_attention,  // multi-head latent attention's core (MLA)
  activation,        // SwiGLU, GELU, ReLU, SiLU between the FFN's matrices
  softmax,           // the router's softmax over the experts
  embedding,         // the token embedding lookup
  attn_merge,        // head-major attention outputs back to token-major (head-major kernels only)
  quantize,          // activations into the format an FP8 GEMM reads (after attention)
  all_reduce,        // TP all-reduce of a sub-layer's output
  all_gather,        // the vocabulary-split logits gathered
  send,              // activations to the next pipeline stage
  all_to_all,        // tokens to the GPUs of their experts and back (EP with attention DP)
};
[[nodiscard]] std::string_view name_of(OpKind kind);

// The roof an op's FLOPs run into: the matrix units in the format of weights x activations, the
// vector units in the activation format, or none (a transfer over a link).
enum class MathUnit : std::uint8_t { matrix, vector, link };

// The new keys and values (or MLA latents) read in the activation format and written into the
// cache in the KV format.
struct KvAppendShape {
  std::int64_t elements = 0;
  DType from = DType::bf16;
  DType to = DType::bf16;
};
[[nodiscard]] OpCost kv_append_cost(const KvAppendShape& shape);

// Activations read in their format and written in the format of the GEMM that reads them, scaled by
// one per-tensor factor (its FLOPs are not counted: one multiply and a rounding per element).
struct QuantizeShape {
  std::int64_t elements = 0;
  DType from = DType::bf16;
  DType to = DType::fp8_e4m3;
};
[[nodiscard]] OpCost quantize_cost(const QuantizeShape& shape);

// LatentAttentionShape and latent_attention_cost: roofline/model/attention.hpp.

// The routed experts: `touched` of the experts receive at least one of `pairs` token-expert
// pairs, each a [k x n] matrix.
struct RoutedShape {
  double touched = 0;
  double pairs = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  DType weights = DType::bf16;
  DType act = DType::bf16;
  bool decode = true;
};

// A transfer between GPUs: `bytes` is the collective's message (all-reduce, all-gather) or what
// one GPU sends (send, all-to-all); `group_gpus` the GPUs the group spans (for the link it takes).
struct TransferShape {
  double bytes = 0;
  int ranks = 1;
  int group_gpus = 1;
};

using OpShape = std::variant<GemvShape, GemmShape, NormShape, ElementwiseShape, SoftmaxShape, AttentionShape,
                             LatentAttentionShape, KvAppendShape, QuantizeShape, RoutedShape, TransferShape>;

struct DecoderOp {
  std::string_view name;  // attn_norm, qkv_proj, rope, kv_append, attention, ..., ffn_allreduce
  OpKind kind = OpKind::linear;
  std::string_view model;  // the op model it is counted by, as llm reports it: gemv, gemm, norm, elementwise, ...
  std::string shape_text;  // its shape, for people (empty unless asked for; transfers: without the link)
  OpShape shape;
  DType weights = DType::bf16;      // the matrices' format (matrix ops), else the activations'
  DType activations = DType::bf16;  // the activations the op reads (a W8A8 GEMM: its quantised input)
  // The format of the op's result: the activations', or the format of the GEMM that reads it where the
  // op quantises for it (a norm, an activation, attn_merge or quantize ahead of a W8A8 GEMM).
  DType writes = DType::bf16;
  MathUnit unit = MathUnit::vector;
  OpCost cost;  // one GPU (HBM traffic; zero for transfers between GPUs)
  OpRole role = OpRole::weights;
};

// How the model counts an op for a calibration (its tables, roofs and series), or why no
// benchmark measures it (routed experts, latent attention, transfers).
[[nodiscard]] BasisOrReason basis_of(const DecoderOp& op);

enum class StepPhase : std::uint8_t { decode, prefill };

// What the step processes: decode, `tokens` requests with `context` tokens each in the cache
// (the new one included); prefill, one prompt of `tokens` tokens (context = tokens).
struct StepShape {
  StepPhase phase = StepPhase::decode;
  std::int64_t tokens = 1;
  std::int64_t context = 1;
  // Decode: the tokens of each sequence (speculative.hpp: a verify step's accepted token and K
  // drafts, K + 1), so `tokens` / `queries` sequences whose attention has `queries` queries each.
  std::int64_t queries = 1;
  // --- serve (issue 18): attention DP seen from one rank, as serve simulates it: `tokens` are this
  // GPU's own rows in either phase, and every rank runs a step like it, so the MoE layers see
  // attention_dp x tokens (llm's view, false: a decode batch spread over the ranks, a prefill on one).
  bool ranks_alike = false;
  // --- serve (issue 18, lockstep): with ranks_alike, the rows of every rank's step that the MoE
  // layers see when the ranks' batches differ (0: attention_dp x tokens, every rank alike).
  std::int64_t group_tokens = 0;
  [[nodiscard]] bool decode() const { return phase == StepPhase::decode; }
};

// The formats of the step's tensors.
struct StepFormats {
  DType weights = DType::bf16;     // linear layers of the transformer blocks
  DType embeddings = DType::bf16;  // embedding table and output head
  DType activations = DType::bf16;
  DType kv = DType::bf16;
  // The format the projections multiply in (matmul_dtype); where it is not the activations' (FP8
  // weights on a GPU with an FP8 tensor rate), prefill projections are W8A8 GEMMs in it.
  DType matmul = DType::bf16;
  // The routed experts' weights where the checkpoint stores them apart (gpt-oss: mxfp4 experts);
  // unset: as weights.
  std::optional<DType> experts;
  // The format prefill attention multiplies in (Q, K and V): an FP8 KV cache's where the GPU has
  // its tensor rate, since engines then quantise Q and run FP8 attention over the cache (vLLM's
  // FlashAttention-3 path, TensorRT-LLM's FP8 context FMHA); else the activations'. Decode attention
  // reads the cache in its format and multiplies in the activations'.
  DType prefill_attention = DType::bf16;
  [[nodiscard]] DType expert_weights() const { return experts.value_or(weights); }
  [[nodiscard]] static StepFormats of(const DeploymentConfig& config, const GpuSpec& gpu);
};

// The largest decode batch whose projections are W8A16 GEMVs in an FP8 step: the project's FP8
// GEMV kernels (kernels/gemv.hpp) serve batches up to 16; above it a GEMV re-reads its weights per
// tile of rows, and engines (and this description) switch to the W8A8 GEMM.
inline constexpr std::int64_t w8a16_gemv_max_batch = 16;

// What the kernels that run attention decide of the counts: their tiles (the K/V re-reads of flash
// attention), and whether prefill attention needs head-major tensors.
struct StepKernels {
  // Tiles of flash attention at decode and at prefill; unset: the tiles that fit the GPU's shared
  // memory (`smem_per_unit_bytes`, default_flash_tiling), or the default tiles without it.
  std::optional<FlashTiling> decode_tiles;
  std::optional<FlashTiling> prefill_tiles;
  double smem_per_unit_bytes = 0;
  bool head_major_prefill = false;
  // Decode projections run as GEMMs on inputs quantised to StepFormats::matmul (cuBLASLt's FP8 path,
  // an FP8 GEMM at batches beyond a GEMV's) rather than as W8A16 GEMVs.
  bool quantized_decode_linears = false;
};

struct DecoderLayer {
  std::string_view name;   // layer, dense layer, moe layer, embedding + head, pipeline
  std::int64_t count = 0;  // instances per step on the path through all stages
  std::vector<DecoderOp> ops;
  // The attention of these layers (ModelSpec::layer_attention): layers of one kind whose windows
  // differ are separate groups, so that a simulator costing a request's attention sees each.
  LayerAttention attention;
};

struct DescribeOptions {
  bool text = true;  // format each op's shape_text (the planner skips it)
  StepKernels kernels;
};

// The step: the dense layers, the MoE layers (one group per attention of the model's per-layer
// pattern), embedding + head, and the pipeline sends, each with its count. Throws InputError on a step too large to
// model.
[[nodiscard]] std::vector<DecoderLayer> describe_step(const ModelSpec& model, const Sharding& sharding,
                                                      const StepFormats& formats, const StepShape& step,
                                                      const DescribeOptions& options = {});
// One transformer layer's ops (dense feed-forward, or mixture of experts), with the attention of
// the first layer of that kind.
[[nodiscard]] std::vector<DecoderOp> describe_layer(const ModelSpec& model, const Sharding& sharding,
                                                    const StepFormats& formats, const StepShape& step, bool moe_layer,
                                                    const DescribeOptions& options = {});

}  // namespace roofline
