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
//
// Expert parallelism and attention DP (expert_parallel.hpp) are those of the config. Under
// attention DP the coster times one rank's step: its own requests' tokens and attention, the MoE
// layers over every rank's tokens (MixedBatch::group_tokens, or, unset, as if each rank ran a step
// like this one: StepShape::ranks_alike).
// With speculation each decode request runs a verify step of K + 1 tokens (attention: K + 1
// causal queries over its cache) and the drafter's K passes over the decode requests.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "roofline/llm/decoder_step.hpp"
#include "roofline/llm/op_timer.hpp"
#include "roofline/llm/speculative.hpp"

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
  // Tokens each decode request runs: 1, or with speculation a verify step's K + 1 (its last token
  // and the K drafts), each of which the head turns into logits.
  std::int64_t decode_queries = 1;
  // Under attention DP, the tokens of every rank's batch in this step (the ranks step in lockstep:
  // the MoE layers run over all of them); 0: every rank runs a batch like this one.
  std::int64_t group_tokens = 0;
  [[nodiscard]] std::int64_t tokens() const;
  [[nodiscard]] std::int64_t rows() const {
    return decode_requests * decode_queries + static_cast<std::int64_t>(chunks.size());
  }
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
  // References to the model, the GPU and the options' calibration are kept: they must outlive the
  // coster. `speculation`: decode steps are verify steps (checked by check_speculation).
  StepCoster(const ModelSpec& model, const GpuSpec& gpu, const DeploymentConfig& config, const TimeOptions& options,
             std::int64_t max_step_tokens, const std::optional<Speculation>& speculation = std::nullopt);
  StepCoster(StepCoster&&) noexcept;
  StepCoster& operator=(StepCoster&&) = delete;
  ~StepCoster();

  // Seconds of one step through every pipeline stage (the step overhead not included).
  [[nodiscard]] double time_s(const MixedBatch& batch);

  // The parts, for tests and reports: the ops over the step's tokens (everything but attention and
  // the head's rows) at `tokens` tokens, in the GEMV form of decode_step or the GEMM form of
  // prefill; the output head over `rows`; decode attention; one prefill chunk's attention.
  // `group_tokens`: MixedBatch's (0: every attention-DP rank alike).
  [[nodiscard]] double token_ops_s(std::int64_t tokens, StepPhase phase, std::int64_t group_tokens = 0);
  [[nodiscard]] double head_s(std::int64_t rows);
  // `queries`: 1, or a verify step's K + 1 (with speculation).
  [[nodiscard]] double decode_attention_s(std::int64_t requests, std::int64_t kv_tokens,
                                          std::int64_t queries = 1) const;
  [[nodiscard]] double prefill_attention_s(const PrefillChunk& chunk) const;
  // The drafter's K passes for `requests` decode requests holding `kv_tokens` in all (0 without
  // speculation): MTP passes (describe_mtp_pass), or K decode steps of the draft model.
  [[nodiscard]] double draft_s(std::int64_t requests, std::int64_t kv_tokens);
  // The sharding the steps are described on (EP and attention DP applied).
  [[nodiscard]] const Sharding& sharding() const { return sharding_; }

 private:
  // One layer's decode attention, affine in the requests and their cached tokens.
  struct DecodeAttention {
    DecoderOp op;  // template: one request
    OpCost per_request;
    OpCost per_kv_token;
    std::int64_t queries = 1;
  };
  [[nodiscard]] std::vector<DecoderLayer> describe(const StepShape& shape) const;
  [[nodiscard]] DecodeAttention decode_attention_of(std::int64_t queries) const;
  // One layer of `group`'s attention (a window or chunk caps each request's keys at its span).
  [[nodiscard]] double one_layer_s(const DecodeAttention& attention, const LayerAttention& group, std::int64_t requests,
                                   std::int64_t kv_tokens) const;
  [[nodiscard]] double mtp_pass_ops_s(std::int64_t requests);

  const ModelSpec& model_;
  Sharding sharding_;
  StepFormats formats_;
  DescribeOptions describe_;
  OpTimer timer_;
  std::int64_t max_tokens_;
  // --- models (issue 19): layer instances per step (all stages) of each attention of the model's
  // pattern: full, a sliding window, a chunk.
  std::vector<std::pair<LayerAttention, std::int64_t>> attention_groups_;
  DecodeAttention decode_;                 // one query per request
  std::optional<DecodeAttention> verify_;  // K + 1 queries per request (speculation)
  std::optional<Speculation> speculation_;
  std::vector<double> mtp_ops_;  // an MTP pass without its attention, by requests; < 0 until computed
  // A draft model's own coster (speculation with a draft model), and the model it keeps a reference to.
  std::unique_ptr<const ModelSpec> draft_model_;
  std::unique_ptr<StepCoster> draft_;
  DecoderOp prefill_attention_;       // template: a prefill's attention (shape and formats)
  std::vector<double> token_ops_[2];  // by phase and token count; < 0 until computed
  // Lockstep steps whose ranks' batches differ: by phase, this rank's tokens and the group's (at
  // most lockstep_cache_entries kept).
  std::map<std::tuple<StepPhase, std::int64_t, std::int64_t>, double> lockstep_token_ops_;
  std::vector<double> head_;  // by rows
};

}  // namespace roofline
