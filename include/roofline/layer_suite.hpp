#pragma once

// The decoder-layer suite: one LLaMA-3-70B-shaped transformer layer (hidden 8192, 64 query heads,
// 8 KV heads, head dim 128, SwiGLU FFN 28672, RMSNorm, bf16; one GPU, no tensor parallelism) timed
// end to end and stage by stage, at decode (batch 1..64 against a KV cache) and prefill (one
// sequence of 512..4096 tokens, causal). Each stage declares its FLOPs and bytes through the
// model's functions (norm_cost, gemv_cost/gemm_cost, elementwise_cost, flash_attention_cost), so
// that the report puts the model's count next to every measured stage time: the data the
// calibration of the layer model is built from. Host code; the CUDA runner is
// src/bench/cuda/layer_runner.cpp.
//
// The stages, in order (decode / prefill):
//   rmsnorm1, qkv (GEMV / GEMM), kv_write / qkv_split (the K/V cache write, and for prefill the
//   head-major Q, K, V flash attention reads), attention (flash-decoding over the cache / causal
//   flash), [attn_merge: prefill only, back to token-major], o_proj, residual1, rmsnorm2, gate_up,
//   swiglu, down, residual2.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/basis.hpp"
#include "roofline/bench.hpp"
#include "roofline/dtype.hpp"
#include "roofline/memory_suite.hpp"

namespace roofline::bench::layer {

struct ModelShape {
  std::string_view name;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t ffn = 0;  // the SwiGLU intermediate size (gate and up each)
  double rms_eps = 1e-5;
  DType dtype = DType::bf16;

  [[nodiscard]] constexpr std::int64_t q_width() const { return heads * head_dim; }
  [[nodiscard]] constexpr std::int64_t qkv_width() const { return (heads + 2 * kv_heads) * head_dim; }
};
inline constexpr ModelShape llama3_70b{"LLaMA-3-70B", 8192, 64, 8, 128, 28672, 1e-5, DType::bf16};

enum class Phase : std::uint8_t { decode, prefill };
// Who runs the matrix products: this project's kernels (GEMV up to batch 16 at decode, the wgmma
// GEMM at prefill; cuBLAS for decode batches above 16) or cuBLAS throughout. The other stages are
// the same kernels in both.
enum class Linear : std::uint8_t { roofline, cublas };

struct Case {
  Phase phase = Phase::decode;
  std::int64_t batch = 1;    // sequences (prefill: 1)
  std::int64_t seq = 1;      // new tokens per sequence (decode: 1)
  std::int64_t context = 1;  // KV positions attended (decode: the cache, the new token's included; prefill: seq)
  Linear linear = Linear::roofline;
  bool quick = false;
};

inline constexpr std::array<std::int64_t, 7> decode_batches{1, 2, 4, 8, 16, 32, 64};
inline constexpr std::array<std::int64_t, 4> prefill_lengths{512, 1024, 2048, 4096};
// Decode batches up to this run on the project's GEMV; larger ones on cuBLAS.
inline constexpr std::int64_t roofline_gemv_max_batch = 16;
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
      f(Case{Phase::decode, b, 1, 4096, linear, quick});
    }
  }
  for (Linear linear : {Linear::roofline, Linear::cublas}) {
    for (std::int64_t b : {1, 16}) f(Case{Phase::decode, b, 1, 32768, linear, false});
  }
  for (Linear linear : {Linear::roofline, Linear::cublas}) {
    for (std::int64_t n : prefill_lengths) f(Case{Phase::prefill, 1, n, n, linear, n == 512});
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

enum class Stage : std::uint8_t {
  rmsnorm1,
  qkv,
  kv_write,
  qkv_split,
  attention,
  attn_merge,
  o_proj,
  residual1,
  rmsnorm2,
  gate_up,
  swiglu,
  down,
  residual2,
};

struct StagePlan {
  Stage stage = Stage::rmsnorm1;
  std::string_view name;   // "qkv"
  std::string_view model;  // the model function that counts it: "gemv_cost"
  OpCost cost;             // = basis.cost
  Basis basis;             // the operation as validate and calibration see it (its best table)
};

[[nodiscard]] std::int64_t tokens(const Case& c);
// The attention stage as the model counts it: its shape (decode: one query row per sequence
// against `context` cached positions; prefill: causal over the sequence), the tiles of the kernel
// that runs it (flash-decoding's 64-key tiles, the Hopper flash kernel's 128 x 64), and the
// minimum HBM traffic with those tiles. The memory suite's decode-attention benchmark counts its
// cases with the same functions.
[[nodiscard]] AttentionShape attention_shape(const Case& c, const ModelShape& model = llama3_70b);
[[nodiscard]] FlashTiling attention_tiling(Phase phase);
[[nodiscard]] OpCost attention_cost(const Case& c, const ModelShape& model = llama3_70b);
// The stages of one layer step with the model's count of each.
[[nodiscard]] std::vector<StagePlan> stages(const Case& c, const ModelShape& model = llama3_70b);
// The model's count of the whole layer: the sum of the stages.
[[nodiscard]] OpCost layer_cost(const Case& c, const ModelShape& model = llama3_70b);

[[nodiscard]] std::string_view name_of(Phase phase);
[[nodiscard]] std::string_view name_of(Linear linear);
[[nodiscard]] std::string_view name_of(Stage stage);
[[nodiscard]] std::string case_id(const Case& c);  // layer.decode.b1.ctx4096.roofline, layer.prefill.n4096.cublas
[[nodiscard]] std::string stage_id(const Case& c, Stage stage);  // <case id>.<stage without '_'>: ....kvwrite

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
[[nodiscard]] std::string implementation_table(const Case& c, const StagePlan& plan, std::string_view implementation,
                                               const ModelShape& model = llama3_70b);

// Not-yet-run results: the layer (group "layer") followed by its stages (group "layer_stages").
// `kernels` says, per stage in order, what the runner uses (may be empty); a stage with an
// implementation records its table (parameter "table").
[[nodiscard]] std::vector<BenchmarkResult> make_results(const Case& c, std::span<const StageKernel> kernels = {});

[[nodiscard]] const SuiteInfo& suite();

}  // namespace roofline::bench::layer
