#pragma once

// Expert parallelism (EP) and data-parallel attention (attention DP) within a TP group: where the
// experts and the requests go, the busiest GPU's share of the routed tokens, and the all-to-all
// that moves tokens to their experts and back. docs/deployment-modes.md derives each quantity.
//
// The layout follows TensorRT-LLM's mapping: --ep E of the --tp T GPUs hold disjoint sets of the
// routed experts, each expert's width split over T / E of them (moe_tp x moe_ep = tp). Without
// attention DP the MoE input is the TP group's all-reduced hidden state, on every GPU: each
// computes its own experts' pairs and the feed-forward all-reduce sums them. With attention DP
// (E = T) every GPU runs attention, the dense layers, the shared experts and the head whole on its
// own requests; a dispatch all-to-all sends each token to the GPUs of its experts, a combine
// all-to-all brings the expert outputs back.

#include <cstdint>

#include "roofline/core/dtype.hpp"
#include "roofline/llm/deployment.hpp"
#include "roofline/llm/model.hpp"
#include "roofline/model/comm.hpp"

namespace roofline {

// Applies the layout to a TP sharding. Throws InputError naming the flag: --ep that is not a
// divisor of --tp or of the routed experts, or on a model without experts; --attention-dp without
// experts or with --ep other than --tp; --expert-imbalance outside [1, ep].
void apply_expert_layout(const ModelSpec& model, const ExpertLayout& layout, Sharding& sharding);

// E[max of n independent standard normal variables] (0 for n = 1; 1/sqrt(pi) for n = 2).
[[nodiscard]] double expected_max_standard_normal(int n);

// The max/mean of the token-expert pairs over `ep` ranks of E / ep experts each, when each of
// `tokens` tokens picks k distinct experts uniformly: a rank's count is a sum of independent
// hypergeometric draws (mean T k / ep, variance T k (1/ep)(1 - 1/ep)(E - k)/(E - 1)), the
// busiest rank about mean + E[max of ep normals] x sigma; capped where one rank would take more
// than a token can send it (min(k, E/ep) of its k pairs). 1 for ep = 1.
[[nodiscard]] double uniform_routing_imbalance(const MoeSpec& moe, int ep, double tokens);

// The routed work of the busiest EP rank in one MoE layer, over `tokens` tokens of the TP group.
struct ExpertLoad {
  double imbalance = 1;  // the sharding's, or the uniform-routing expectation
  double pairs = 0;      // token-expert pairs it computes: imbalance x tokens x k / ep
  double touched = 0;    // its experts that receive at least one: local (1 - (1 - k/E)^(imbalance x tokens))
};
[[nodiscard]] ExpertLoad busiest_rank_load(const MoeSpec& moe, const Sharding& sharding, std::int64_t tokens);

// The other ranks one token is sent to: once to each rank holding at least one of its k experts,
// (ep - 1) (1 - C(E - E/ep, k) / C(E, k)) in expectation.
[[nodiscard]] double remote_ranks_per_token(const MoeSpec& moe, int ep);

// What the busiest GPU sends in the dispatch (and receives back in the combine) of one MoE layer:
// imbalance x local tokens x remote ranks per token x hidden x bytes of `act`.
[[nodiscard]] double all_to_all_bytes(const ModelSpec& model, const Sharding& sharding, std::int64_t local_tokens,
                                      DType act, double imbalance);

// One all-to-all over `ranks` GPUs: every GPU sends to all the others at once, so one message step
// (the link latency) and its bytes over its link's bandwidth per direction. 0 for one rank.
[[nodiscard]] double all_to_all_time(double bytes, int ranks, const LinkSpec& link);

}  // namespace roofline
