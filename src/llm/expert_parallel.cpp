// Expert parallelism and data-parallel attention (roofline/llm/expert_parallel.hpp).
#include "roofline/llm/expert_parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <numbers>

#include "roofline/core/error.hpp"

namespace roofline {

void apply_expert_layout(const ModelSpec& model, const ExpertLayout& layout, Sharding& s) {
  const int ep = layout.ep;
  if (ep < 1) throw InputError(fmt::format("--ep {}: must be at least 1", ep));
  if ((ep > 1 || layout.attention_dp) && !model.moe) {
    throw InputError(fmt::format("{} {} has no experts to spread: --ep and --attention-dp need a mixture of experts",
                                 ep > 1 ? fmt::format("--ep {}:", ep) : std::string("--attention-dp:"), model.id));
  }
  if (s.tp % ep != 0) {
    throw InputError(
        fmt::format("--ep {} does not divide --tp {}: the experts are spread over the TP group's GPUs", ep, s.tp));
  }
  if (model.moe && model.moe->experts % ep != 0) {
    throw InputError(
        fmt::format("--ep {} does not divide the {} routed experts of {}", ep, model.moe->experts, model.id));
  }
  if (layout.attention_dp && ep != s.tp) {
    throw InputError(fmt::format(
        "--attention-dp needs --ep equal to --tp ({}): each GPU's tokens go to whole experts on the others", s.tp));
  }
  if (layout.imbalance && (!(*layout.imbalance >= 1) || *layout.imbalance > ep)) {
    throw InputError(fmt::format("--expert-imbalance {}: must be from 1 (uniform) to --ep {} (every pair on one GPU)",
                                 *layout.imbalance, ep));
  }
  s.ep = ep;
  s.expert_imbalance = layout.imbalance;
  if (!model.moe) return;
  s.local_experts = model.moe->experts / ep;
  s.expert_ffn = model.moe->expert_intermediate / (s.tp / ep);
  if (!layout.attention_dp) return;
  const AttentionSpec& a = model.attention;
  s.attention_dp = s.tp;
  s.q_heads = a.heads;
  s.kv_heads = a.kind == AttentionKind::gqa ? a.kv_heads : 0;
  s.kv_replication = 1;
  s.ffn = model.ffn.intermediate;
  s.shared_expert_ffn = model.moe->expert_intermediate;
  s.vocab = model.vocab;
}

Sharding shard(const ModelSpec& model, const DeploymentConfig& config) {
  Sharding s = shard(model, config.tp, config.pp);
  apply_expert_layout(model, config.experts, s);
  return s;
}

namespace {

double integrate_expected_max_standard_normal(int n) {
  // E[max] = integral of x n phi(x) Phi(x)^(n-1): the trapezoid rule on [-8, 8], where the tails
  // hold less than 1e-14 of the mass.
  constexpr double step = 1e-3;
  constexpr double bound = 8.0;
  const double inv_sqrt_2pi = std::numbers::inv_sqrtpi / std::numbers::sqrt2;
  double sum = 0;
  for (double x = -bound; x <= bound; x += step) {
    const double density = inv_sqrt_2pi * std::exp(-0.5 * x * x);
    const double below = 0.5 * std::erfc(-x / std::sqrt(2.0));
    sum += x * static_cast<double>(n) * density * std::pow(below, n - 1);
  }
  return sum * step;
}

// The integral costs 16,000 evaluations of pow, erfc and exp, and a step asks for it per MoE op:
// remembered per n (the same bits every time, so a race between threads only repeats the work).
constexpr int remembered_ranks = 1024;
// 0: not yet computed (E[max] > 0 for n >= 2).
std::array<std::atomic<double>, remembered_ranks + 1> remembered_max{};

}  // namespace

double expected_max_standard_normal(int n) {
  if (n <= 1) return 0;
  if (n > remembered_ranks) return integrate_expected_max_standard_normal(n);
  std::atomic<double>& slot = remembered_max[static_cast<std::size_t>(n)];
  double value = slot.load(std::memory_order_relaxed);
  if (value == 0) {
    value = integrate_expected_max_standard_normal(n);
    slot.store(value, std::memory_order_relaxed);
  }
  return value;
}

double uniform_routing_imbalance(const MoeSpec& moe, int ep, double tokens) {
  if (ep <= 1 || tokens <= 0) return 1;
  const auto E = static_cast<double>(moe.experts);
  const auto k = static_cast<double>(moe.experts_per_token);
  const auto n = static_cast<double>(ep);
  const double mean = tokens * k / n;
  const double variance = tokens * k * (1.0 / n) * (1.0 - 1.0 / n) * (E - k) / std::max(E - 1.0, 1.0);
  const double ratio = 1.0 + expected_max_standard_normal(ep) * std::sqrt(variance) / mean;
  const double cap = n * std::min(k, E / n) / k;
  return std::min(ratio, cap);
}

ExpertLoad busiest_rank_load(const MoeSpec& moe, const Sharding& s, std::int64_t tokens) {
  ExpertLoad load;
  const auto T = static_cast<double>(tokens);
  const auto E = static_cast<double>(moe.experts);
  const auto k = static_cast<double>(moe.experts_per_token);
  load.imbalance = s.expert_imbalance.value_or(uniform_routing_imbalance(moe, s.ep, T));
  load.pairs = load.imbalance * T * k / static_cast<double>(s.ep);
  load.touched = static_cast<double>(s.local_experts) * (1.0 - std::pow(1.0 - k / E, load.imbalance * T));
  return load;
}

double remote_ranks_per_token(const MoeSpec& moe, int ep) {
  if (ep <= 1) return 0;
  const std::int64_t E = moe.experts;
  const std::int64_t others = E - E / ep;  // experts not on a given rank
  // P(none of the token's k distinct experts on that rank) = C(others, k) / C(E, k).
  double none = 1;
  for (std::int64_t i = 0; i < moe.experts_per_token; ++i) {
    none *= static_cast<double>(std::max<std::int64_t>(others - i, 0)) / static_cast<double>(E - i);
  }
  return static_cast<double>(ep - 1) * (1.0 - none);
}

double all_to_all_bytes(const ModelSpec& model, const Sharding& s, std::int64_t local_tokens, DType act,
                        double imbalance) {
  if (!model.moe || s.ep <= 1) return 0;
  return imbalance * static_cast<double>(local_tokens) * remote_ranks_per_token(*model.moe, s.ep) *
         static_cast<double>(model.hidden) * bytes_per_element(act);
}

double all_to_all_time(double bytes, int ranks, const LinkSpec& link) {
  if (ranks <= 1) return 0;
  return link.latency_s + bytes / link.bandwidth_bytes_per_s;
}

}  // namespace roofline
