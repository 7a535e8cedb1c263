#pragma once

// The time of one engine step: a mixed batch of decode tokens and prefill chunks, costed by the
// op model of `llm` (decoder_step.hpp, op_timer.hpp). Every op that is not attention runs at the
// step's real token count (the projections, norms, rotary, KV append and the TP all-reduces over
// all its tokens; the output head over one row per scheduled request); attention runs per
// request at its own KV length: the decode tokens as one flash-decoding op over their caches,
// each prefill chunk as a causal op of its new tokens over its cached prefix and itself.
//
// Fast because a step's cost decomposes: the non-attention part depends only on the token count
// and the head's rows (each computed once through the full op model, then kept), and decode
// attention is affine in the requests and in the sum of their cached tokens (its coefficients
// taken from the model's own description; tests/unit/test_serve.cpp checks the sum against the
// full model).

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "roofline/llm/decoder_step.hpp"
#include "roofline/llm/op_timer.hpp"

namespace roofline {

// New tokens of one request's prefill (or recompute) and the tokens already in its cache.
struct PrefillChunk {
  std::int64_t tokens = 1;
  std::int64_t cached = 0;
};

// What one step processes.
struct MixedBatch {
  std::int64_t decode_requests = 0;
  // Sum over the decode requests of the tokens attention reads from each cache: cached_tokens of
  // its context, the new token included (the sliding window caps each).
  std::int64_t decode_kv_tokens = 0;
  std::span<const PrefillChunk> chunks;
  [[nodiscard]] std::int64_t tokens() const;
  [[nodiscard]] std::int64_t rows() const { return decode_requests + static_cast<std::int64_t>(chunks.size()); }
};

// Which FP8 op families are costed as their 16-bit kernels (serve --fp8-kernels).
struct Fp8AsSixteenBit {
  bool gemm = false;       // FP8 GEMMs, dense and grouped (W8A8)
  bool attention = false;  // attention over an FP8 cache: decode, and causal flash for prefill
};

// The tables that cost a deployment's FP8 ops as its 16-bit kernels' (for
// TimeOptions::table_in_place_of): the chosen families looked up in the activation format's tables.
// Each op keeps its own cost and roofs (its FP8 bytes and FP8 peak): only the efficiency is the
// 16-bit kernel's, at the op's size. For where engines run FP8 kernels that reach the fraction of
// the roofline their 16-bit ones do while the calibration's FP8 tables hold kernels that do not
// (docs/serve.md). Empty where nothing is stored in FP8.
[[nodiscard]] std::map<std::string, std::string, std::less<>> fp8_tables_as_16_bit(const ModelSpec& model,
                                                                                   const DeploymentConfig& config,
                                                                                   Fp8AsSixteenBit families);

class StepCoster {
 public:
  // `max_step_tokens`: the most tokens a step can hold (the engine's token budget, or the batch).
  // References are kept: all four must outlive the coster.
  StepCoster(const ModelSpec& model, const GpuSpec& gpu, const DeploymentConfig& config, const TimeOptions& options,
             std::int64_t max_step_tokens);

  // Seconds of one step through every pipeline stage (the step overhead not included).
  [[nodiscard]] double time_s(const MixedBatch& batch);

  // The parts, for tests and reports: the ops over the step's tokens (everything but attention and
  // the head's rows) at `tokens` tokens, in the GEMV form of decode_step or the GEMM form of
  // prefill; the output head over `rows`; decode attention; one prefill chunk's attention.
  [[nodiscard]] double token_ops_s(std::int64_t tokens, StepPhase phase);
  [[nodiscard]] double head_s(std::int64_t rows);
  [[nodiscard]] double decode_attention_s(std::int64_t requests, std::int64_t kv_tokens) const;
  [[nodiscard]] double prefill_attention_s(const PrefillChunk& chunk) const;

 private:
  [[nodiscard]] std::vector<DecoderLayer> describe(const StepShape& shape) const;

  const ModelSpec& model_;
  Sharding sharding_;
  StepFormats formats_;
  DescribeOptions describe_;
  OpTimer timer_;
  std::int64_t max_tokens_;
  // --- models (issue 19): layer instances per step (all stages) of each attention of the model's
  // pattern: full, a sliding window, a chunk.
  std::vector<std::pair<LayerAttention, std::int64_t>> attention_groups_;
  DecoderOp decode_attention_;  // template: one request's decode attention
  OpCost decode_per_request_;   // decode attention cost = requests x this + kv tokens x per_kv_token
  OpCost decode_per_kv_token_;
  DecoderOp prefill_attention_;       // template: a prefill's attention (shape and formats)
  std::vector<double> token_ops_[2];  // by phase and token count; < 0 until computed
  std::vector<double> head_;          // by rows
};

}  // namespace roofline
