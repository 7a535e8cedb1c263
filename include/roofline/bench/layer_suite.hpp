#pragma once

// The decoder-layer suite: one LLaMA-3-70B transformer layer (the bundled preset llama-3.1-70b:
// hidden 8192, 64 query heads, 8 KV heads, head dim 128, SwiGLU FFN 28672, RMSNorm; one GPU, no
// tensor parallelism) timed end to end and stage by stage, at decode (batch 1..64 against a KV
// cache) and prefill (one sequence of 512..8192 tokens, causal), in bf16 and as an FP8 deployment
// runs it (e4m3 weights with per-tensor scales, bf16 activations, an e4m3 KV cache; prefill
// projections W8A8, their inputs quantised by the op before them). The stages are the ops of the
// layer's description (roofline/decoder_step.hpp), which `llm` times for the same model: the
// same names, shapes, FLOPs and bytes, so that the report puts the model's count next to every
// measured stage time. Host code; the CUDA runner is src/bench/cuda/layer_runner.cpp, which runs
// each op by its kind through the table layer_kernel_of() below.
//
// The stages, in order (decode / prefill):
//   attn_norm (residual add + RMSNorm), qkv_proj (GEMV / GEMM), rope, kv_append (into the cache;
//   prefill: the head-major K and V flash attention reads), attention (flash-decoding over the
//   cache / causal flash), [attn_merge: prefill only, back to token-major], o_proj, ffn_norm
//   (residual add + RMSNorm), ffn_gate_up, ffn_act (SwiGLU), ffn_down. The FFN output is left for
//   the next layer's attn_norm to add to the residual stream, as engines run it. FP8 cases whose
//   projections run W8A8 quantise in attn_norm, ffn_norm and ffn_act (and attn_merge at prefill);
//   at decode an attn_quant stage quantises the attention output for o_proj.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/basis/basis.hpp"
#include "roofline/bench/bench.hpp"
#include "roofline/bench/memory_suite.hpp"
#include "roofline/core/dtype.hpp"
#include "roofline/llm/decoder_step.hpp"

namespace roofline::bench::layer {

// The model the suite runs: the bundled preset llama-3.1-70b.
[[nodiscard]] const ModelSpec& layer_model();
// What the kernels need of that model beyond the shapes ModelSpec holds: its config.json's
// rms_norm_eps and rope_theta (neither changes a stage's FLOPs or bytes, so the description has
// neither).
struct LayerNumerics {
  float rms_eps;
  float rope_theta;
};
[[nodiscard]] const LayerNumerics& layer_numerics();

enum class Phase : std::uint8_t { decode, prefill };
// Who runs the matrix products: this project's kernels (GEMV up to batch 16 at decode, the wgmma
// GEMM at prefill; bf16: cuBLAS for decode batches above 16, FP8: the wgmma FP8 GEMM) or the
// library throughout (bf16: cuBLAS; FP8: cuBLASLt's FP8 GEMM). The other stages are the same
// kernels in both.
enum class Linear : std::uint8_t { roofline, cublas };

// The formats of the deployment a case runs: its weights (the projections'), its KV cache and its
// activations. The embeddings and norms stay in the activation format.
struct LayerFormats {
  DType weights = DType::bf16;
  DType kv = DType::bf16;
  DType activations = DType::bf16;
  [[nodiscard]] bool fp8() const { return weights == DType::fp8_e4m3; }
};
inline constexpr LayerFormats bf16_layer{};
// An FP8 deployment (NVIDIA's FP8 checkpoints, FP8 KV cache). Its prefill cases keep the prompt's
// K and V in bf16: the project's prefill attention kernel reads 16-bit K/V (docs/bench.md).
inline constexpr LayerFormats fp8_decode_layer{DType::fp8_e4m3, DType::fp8_e4m3, DType::bf16};
inline constexpr LayerFormats fp8_prefill_layer{DType::fp8_e4m3, DType::bf16, DType::bf16};

struct Case {
  Phase phase = Phase::decode;
  std::int64_t batch = 1;    // sequences (prefill: 1)
  std::int64_t seq = 1;      // new tokens per sequence (decode: 1)
  std::int64_t context = 1;  // KV positions attended (decode: the cache, the new token's included; prefill: seq)
  Linear linear = Linear::roofline;
  bool quick = false;
  LayerFormats formats;
};

inline constexpr std::array<std::int64_t, 7> decode_batches{1, 2, 4, 8, 16, 32, 64};
inline constexpr std::array<std::int64_t, 4> prefill_lengths{512, 1024, 2048, 4096};
inline constexpr std::array<std::int64_t, 4> fp8_decode_batches{1, 4, 16, 64};
inline constexpr std::array<std::int64_t, 2> fp8_decode_contexts{1024, 4096};
inline constexpr std::array<std::int64_t, 5> fp8_prefill_lengths{512, 1024, 2048, 4096, 8192};
// Decode batches up to this run on the project's GEMV; larger ones on a GEMM.
inline constexpr std::int64_t roofline_gemv_max_batch = w8a16_gemv_max_batch;
// The project's GEMV the decode layer runs: the memory suite's `stag`, the fastest of its GEMVs
// launched plainly. (`pdl` gains by overlapping a GEMV's tail with the next GEMV's start, back
// to back; in the layer its neighbours are norms and adds that do not trigger early.) The layer
// check predicts these stages from this variant's own calibration table.
inline constexpr memory::Variant roofline_gemv = memory::Variant::stag;

template <typename F>
constexpr void for_each_case(F&& f) {
  for (Linear linear : {Linear::roofline, Linear::cublas}) {
    for (std::int64_t b : decode_batches) {
      const bool quick = b == 1 || (b == 16 && linear == Linear::roofline);
      f(Case{Phase::decode, b, 1, 4096, linear, quick, bf16_layer});
    }
  }
  for (Linear linear : {Linear::roofline, Linear::cublas}) {
    for (std::int64_t b : {1, 16}) f(Case{Phase::decode, b, 1, 32768, linear, false, bf16_layer});
  }
  for (Linear linear : {Linear::roofline, Linear::cublas}) {
    for (std::int64_t n : prefill_lengths) f(Case{Phase::prefill, 1, n, n, linear, n == 512, bf16_layer});
  }
  for (Linear linear : {Linear::roofline, Linear::cublas}) {
    for (std::int64_t context : fp8_decode_contexts) {
      for (std::int64_t b : fp8_decode_batches) {
        // Quick: the FP8 GEMV at batch 1, cuBLASLt at batch 16, the smaller cache.
        const bool quick = context == 1024 && (linear == Linear::roofline ? b == 1 : b == 16);
        f(Case{.phase = Phase::decode,
               .batch = b,
               .seq = 1,
               .context = context,
               .linear = linear,
               .quick = quick,
               .formats = fp8_decode_layer});
      }
    }
  }
  for (Linear linear : {Linear::roofline, Linear::cublas}) {
    for (std::int64_t n : fp8_prefill_lengths) {
      f(Case{.phase = Phase::prefill,
             .batch = 1,
             .seq = n,
             .context = n,
             .linear = linear,
             .quick = n == 512,
             .formats = fp8_prefill_layer});
    }
  }
}

constexpr std::size_t case_count() {
  std::size_t n = 0;
  for_each_case([&n](const Case&) { ++n; });
  return n;
}

inline constexpr auto cases = [] {
  std::array<Case, case_count()> table{};
  std::size_t i = 0;
  for_each_case([&](const Case& c) { table[i++] = c; });
  return table;
}();

// A stage: an op of the layer's description, with the name of the model function that counts it
// and the operation as validate and calibration see it (its best table).
struct StagePlan {
  DecoderOp op;
  std::string_view name;   // the op's name: "qkv_proj"
  std::string_view model;  // the model function that counts it: "gemv_cost"
  OpCost cost;             // = op.cost = basis.cost
  Basis basis;
};

// Which kernel the CUDA runner launches for an op of the layer, by the op's kind. A table, so
// that a host test sees that every op the description puts in the layer has a kernel.
enum class LayerKernel : std::uint8_t { add_rmsnorm, linear, rope, kv_append, attention, swiglu, attn_merge, quantize };
inline constexpr std::size_t layer_kernel_count = 8;
struct KernelOfKind {
  OpKind kind;
  LayerKernel kernel;
};
inline constexpr std::array<KernelOfKind, layer_kernel_count> layer_kernels{{
    {OpKind::norm, LayerKernel::add_rmsnorm},
    {OpKind::linear, LayerKernel::linear},
    {OpKind::rope, LayerKernel::rope},
    {OpKind::kv_append, LayerKernel::kv_append},
    {OpKind::attention, LayerKernel::attention},
    {OpKind::activation, LayerKernel::swiglu},
    {OpKind::attn_merge, LayerKernel::attn_merge},
    {OpKind::quantize, LayerKernel::quantize},
}};
[[nodiscard]] constexpr std::optional<LayerKernel> layer_kernel_of(OpKind kind) {
  for (const KernelOfKind& k : layer_kernels) {
    if (k.kind == kind) return k.kernel;
  }
  return std::nullopt;
}

[[nodiscard]] std::int64_t tokens(const Case& c);
// Whether a case's projections run W8A8 (e4m3 inputs quantised by the op before them): FP8 prefill,
// and FP8 decode where a GEMM runs them (cuBLASLt throughout, the FP8 GEMM beyond the GEMV's batches).
[[nodiscard]] bool quantized_linears(const Case& c);
// The attention stage as the model counts it: its shape (decode: one query row per sequence
// against `context` cached positions; prefill: causal over the sequence), the tiles of the kernel
// that runs it (flash-decoding's 64-key tiles, the Hopper flash kernel's 128 x 128 at head dim 128), and the
// minimum HBM traffic with those tiles. The memory suite's decode-attention benchmark counts its
// cases with the same functions.
[[nodiscard]] AttentionShape attention_shape(const Case& c);
[[nodiscard]] FlashTiling attention_tiling(Phase phase);
[[nodiscard]] OpCost attention_cost(const Case& c);
// The layer's description for a case: llama-3.1-70b on one GPU in the case's formats, at its
// phase, tokens and context, with the tiles of the kernels that run attention, their head-major
// prefill layout, and W8A8 projections where quantized_linears says.
[[nodiscard]] std::vector<DecoderOp> layer_ops(const Case& c);
// The stages of one layer step: the description's ops, in order, with the model's count of each.
[[nodiscard]] std::vector<StagePlan> stages(const Case& c);
// The model's count of the whole layer: the sum of the stages.
[[nodiscard]] OpCost layer_cost(const Case& c);

[[nodiscard]] std::string_view name_of(Phase phase);
[[nodiscard]] std::string_view name_of(Linear linear);
// layer.decode.b1.ctx4096.roofline, layer.prefill.n4096.cublas; FP8: layer.decode.fp8.b1.ctx4096.roofline
[[nodiscard]] std::string case_id(const Case& c);
// The last word of a stage's id: the op's name without '_', or the word runs have recorded for it
// since the first run (qkv_proj "qkv", kv_append "kvwrite", ffn_gate_up "gateup", ffn_act
// "swiglu", ffn_down "down").
[[nodiscard]] std::string stage_word(std::string_view op_name);
[[nodiscard]] std::string stage_id(const Case& c, std::string_view op_name);  // <case id>.<stage word>: ....kvwrite
// The case a layer id names (case_id's inverse), or null.
[[nodiscard]] const Case* find_case(std::string_view id);
// The stage word of a stage id: its last word ("kvwrite").
[[nodiscard]] std::string stage_word_of(std::string_view stage_id);

// What a recorded stage ran: the op of this build's description with that stage word, or, for a
// stage that earlier runs recorded and the description no longer has (RMSNorm and the residual
// adds apart, the prefill's Q/K/V split), its basis as those runs counted it.
struct StageOperation {
  std::string name;
  Basis basis;
};
[[nodiscard]] std::optional<StageOperation> stage_operation(const Case& c, std::string_view word);

// What runs a stage: a description of the kernel, and where a microbenchmark times that same
// kernel, the word that names its implementation in the calibration ("stag", "cublas", "wgmma",
// "flashwgmma"; empty for the layer's own small kernels and decode attention, whose tables are
// the operation's best table).
struct StageKernel {
  std::string name;
  std::string implementation;
};

// The calibration table of the implementation that ran a stage ("gemv.bf16.stag",
// "gemm.bf16.cublas", "attention.flashwgmma.bf16.d128.causal"), or "" when it names none.
[[nodiscard]] std::string implementation_table(const Case& c, const StagePlan& plan, std::string_view implementation);

// Not-yet-run results: the layer (group "layer") followed by its stages (group "layer_stages").
// `kernels` says, per stage in order, what the runner uses (may be empty); a stage with an
// implementation records its table (parameter "table").
[[nodiscard]] std::vector<BenchmarkResult> make_results(const Case& c, std::span<const StageKernel> kernels = {});

[[nodiscard]] const SuiteInfo& suite();

}  // namespace roofline::bench::layer
