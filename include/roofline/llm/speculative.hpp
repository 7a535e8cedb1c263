#pragma once

// Speculative decoding: a drafter proposes K tokens per sequence, the target model verifies them in
// one step of K + 1 tokens per sequence (the last accepted token and the K drafts), and keeps the
// drafts up to the first rejection plus the token its own logits give there. The drafter is the
// model's multi-token-prediction module run K times (DeepSeek-V3's MTP: one transformer layer shaped
// like the model's own, a 2h x h projection of the normalised embedding and hidden state, the shared
// embedding and output head; arXiv:2412.19437 section 2.2), or a separate draft model run K decode
// steps. docs/deployment-modes.md derives each quantity.

#include <cstdint>
#include <optional>
#include <vector>

#include "roofline/llm/decoder_step.hpp"
#include "roofline/llm/deployment.hpp"
#include "roofline/llm/llm.hpp"
#include "roofline/llm/model.hpp"

namespace roofline {

struct Speculation {
  int draft_tokens = 0;  // K
  // Acceptance of each draft position given that the ones before it were accepted; one value
  // applies to every position.
  std::vector<double> acceptance;
  std::optional<ModelSpec> draft_model;  // unset: the model's MTP module
};

// Throws InputError: K below 1 or above 16, an acceptance outside [0, 1], or more rates than K.
void check_speculation(const Speculation& speculation);

// Tokens one verify step yields per sequence: 1 + sum over i = 1..K of a_1 x ... x a_i (1 with
// every rate 0, K + 1 with every rate 1).
[[nodiscard]] double expected_tokens_per_verify(const Speculation& speculation);

// The attention ops of a decode step described over `queries` tokens per sequence become
// batch / queries sequences of `queries` queries each over the same cache (describe_step calls it
// for StepShape::queries > 1).
void spread_verify_queries(std::vector<DecoderLayer>& layers, std::int64_t queries);

// The ops of one MTP draft pass over `batch` sequences: the projection of the embedding and
// hidden state, one layer like the model's last, and the embedding lookup and output head.
[[nodiscard]] std::vector<DecoderLayer> describe_mtp_pass(const ModelSpec& model, const Sharding& sharding,
                                                          const StepFormats& formats, std::int64_t batch,
                                                          std::int64_t context, const DescribeOptions& options = {});

struct SpeculativeDecode {
  StepTime verify;  // the target model, K + 1 tokens per sequence
  StepTime draft;   // one draft pass (K per verify step)
  int draft_passes = 0;
  double cycle_s = 0;            // verify + K x draft
  double tokens_per_verify = 0;  // per sequence
  double tpot_s = 0;             // cycle / tokens per verify
  // What the drafter holds per GPU: its weights (MTP: the extra layer and projection; a draft
  // model: all of it on its TP split) and KV cache per request at the context.
  double draft_weight_bytes = 0;
  double draft_kv_bytes_per_request = 0;
};

// The requests that fit beside the drafter on the heaviest stage: floor((free - draft weights) /
// (KV + draft KV per request)) x attention DP GPUs; 0 when none does.
[[nodiscard]] std::int64_t max_requests_with_draft(const MemoryPlan& memory, const Sharding& sharding,
                                                   const SpeculativeDecode& draft);

// One verify cycle at `batch` sequences with `context` tokens cached. Throws InputError as
// check_speculation, and where the draft model does not split over the TP group.
[[nodiscard]] SpeculativeDecode speculative_decode(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                                                   const DeploymentConfig& config, std::int64_t batch,
                                                   std::int64_t context, const Speculation& speculation,
                                                   const TimeOptions& options = {});

}  // namespace roofline
