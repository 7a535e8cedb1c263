#include "roofline/llm/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

#include "roofline/basis/calibration.hpp"
#include "roofline/core/error.hpp"

namespace roofline {
namespace {

std::string gb(double bytes) {
  return fmt::format("{:.1f} GB", bytes / 1e9);
}

std::string ms(double seconds) {
  return fmt::format("{:.1f} ms", seconds * 1e3);
}

// Batches tried: powers of two up to the limit, and the limit itself.
std::vector<std::int64_t> batch_ladder(std::int64_t limit) {
  std::vector<std::int64_t> out;
  for (std::int64_t b = 1; b < limit; b *= 2) out.push_back(b);
  out.push_back(limit);
  return out;
}

void evaluate(const ModelSpec& model, const Workload& w, const PlanSpace& space, const GpuSpec& gpu, double price,
              PlanCandidate& c, PlanResult& result) {
  const CandidateDeployment deployment = candidate_deployment(space, gpu, c);
  const DeploymentConfig& config = deployment.config;
  const TimeOptions& time = deployment.time;

  if (c.tp > config.scale_up_domain) {
    c.rejection = Rejection::sharding;
    c.reason = fmt::format("TP {} spans more than the scale-up domain of {} GPUs", c.tp, config.scale_up_domain);
    return;
  }
  Sharding sharding;
  try {
    sharding = shard(model, config);
  } catch (const InputError& e) {
    c.rejection = Rejection::sharding;
    c.reason = e.what();
    return;
  }
  if (!format_supported(gpu, c.weights, config.activations)) {
    c.rejection = Rejection::format;
    c.reason = fmt::format("{} has no {} tensor rate", gpu.id, name_of(c.weights));
    return;
  }

  const std::int64_t context = w.prompt + w.output;
  const MemoryPlan memory = plan_memory(model, gpu, sharding, config, context);
  const StageMemory& stage = memory.heaviest();
  c.weight_bytes_per_gpu = stage.weights.total();
  c.kv_bytes_per_request_per_gpu = stage.kv_bytes_per_request;
  c.max_batch = memory.max_requests();
  if (!memory.weights_fit()) {
    c.rejection = Rejection::memory;
    c.reason = fmt::format("weights {} per GPU + {} reserve and workspace exceed {}", gb(stage.weights.total()),
                           gb(config.reserve_bytes + config.workspace_bytes), gb(memory.capacity_bytes));
    return;
  }
  if (c.max_batch < 1) {
    c.rejection = Rejection::memory;
    c.reason = fmt::format("one request of {} tokens needs {} of KV cache per GPU; {} is free", memory.cached_tokens,
                           gb(stage.kv_bytes_per_request), gb(stage.free_bytes));
    return;
  }

  const StepTime first = prefill(model, gpu, sharding, config, w.prompt, time);
  c.ttft_s = first.time_s;
  c.ttft_roofline_s = first.roofline_s;
  if (c.ttft_s > w.ttft_s) {
    c.rejection = Rejection::ttft;
    c.reason = fmt::format("TTFT {} > target {} (prefill of {} tokens, {} bound)", ms(c.ttft_s), ms(w.ttft_s), w.prompt,
                           first.bottleneck());
    return;
  }

  // With speculation every decode step is a verify cycle that yields tokens_per_verify tokens per
  // sequence; the drafter's weights and KV cache come off the memory (their figures do not depend on
  // the batch, so the cycle at batch 1 sets the fit).
  const Speculation* speculation = speculation_of(space, c.draft_tokens);
  std::optional<SpeculativeDecode> cycle;
  if (speculation != nullptr) {
    try {
      cycle = speculative_decode(model, gpu, sharding, config, 1, context, *speculation, time);
    } catch (const InputError& e) {
      // A draft model that does not split over this TP group.
      c.rejection = Rejection::sharding;
      c.reason = e.what();
      return;
    }
    ++result.decode_evaluations;
    c.max_batch = max_requests_with_draft(memory, sharding, *cycle);
    if (c.max_batch < 1) {
      c.rejection = Rejection::memory;
      c.reason = fmt::format("the drafter's {} of weights per GPU leave no room for one request of {} tokens",
                             gb(cycle->draft_weight_bytes), memory.cached_tokens);
      return;
    }
  }
  struct Step {
    double time_s = 0;
    double roofline_s = 0;
    double tokens = 1;  // per sequence
    std::string_view bottleneck;
  };
  const auto step_at = [&](std::int64_t batch) {
    if (speculation == nullptr) {
      const StepTime step = decode_step(model, gpu, sharding, config, batch, context, time);
      ++result.decode_evaluations;
      return Step{step.time_s, step.roofline_s, 1, step.bottleneck()};
    }
    if (batch > 1) {  // the cycle at batch 1 is the one that set the fit
      cycle = speculative_decode(model, gpu, sharding, config, batch, context, *speculation, time);
      ++result.decode_evaluations;
    }
    return Step{cycle->cycle_s, cycle->verify.roofline_s + cycle->draft_passes * cycle->draft.roofline_s,
                cycle->tokens_per_verify, cycle->verify.bottleneck()};
  };

  const auto output = static_cast<double>(w.output);
  bool found = false;
  double first_tpot = 0;
  double first_step = 0;
  for (std::int64_t batch : batch_ladder(std::min(c.max_batch, space.max_batch))) {
    const Step step = step_at(batch);
    const double per_token = step.time_s / step.tokens;
    const auto b = static_cast<double>(batch);
    // A replica running `batch` requests at a time also prefills each newcomer: per request it
    // spends output x (step per token) on decode steps shared by the batch and ttft on its own prefill.
    const double tpot = per_token + b * c.ttft_s / output;
    if (batch == 1) {
      first_tpot = tpot;
      first_step = per_token;
    }
    if (tpot > w.tpot_s) break;  // longer with every larger batch
    const double per_replica = b / (output * per_token + b * c.ttft_s);
    // At least one replica, however light the load (a rate of 1e-8 requests/s still needs one).
    const double needed = std::max(1.0, std::ceil(w.requests_per_s / per_replica - 1e-9));
    if (!(needed < 1e15)) continue;  // more replicas than any deployment: not a candidate
    const auto replicas = static_cast<std::int64_t>(needed);
    const std::int64_t gpus = replicas * c.tp * c.pp;
    const double usd_per_hour = static_cast<double>(gpus) * price;
    const double usd_per_million = usd_per_hour / (w.requests_per_s * output * 3600.0) * 1e6;
    if (!found || usd_per_million < c.usd_per_million_output_tokens - 1e-12 ||
        (std::abs(usd_per_million - c.usd_per_million_output_tokens) <= 1e-12 && tpot < c.tpot_s)) {
      found = true;
      c.batch = batch;
      c.step_s = step.time_s;
      c.tokens_per_step = step.tokens;
      c.tpot_s = tpot;
      c.step_roofline_s = step.roofline_s;
      c.tpot_roofline_s = step.roofline_s / step.tokens + b * c.ttft_roofline_s / output;
      c.requests_per_s_per_replica = per_replica;
      c.replicas = replicas;
      c.gpus_total = gpus;
      c.usd_per_hour = usd_per_hour;
      c.usd_per_million_output_tokens = usd_per_million;
      c.utilization = w.requests_per_s / (static_cast<double>(replicas) * per_replica);
      c.bottleneck = std::string(step.bottleneck);
    }
  }
  if (!found) {
    c.rejection = Rejection::tpot;
    c.reason = fmt::format("TPOT {} at batch 1 > target {} ({} {} + prefill share {})", ms(first_tpot), ms(w.tpot_s),
                           speculation ? "verify cycle per token" : "decode step", ms(first_step),
                           ms(first_tpot - first_step));
  }
}

bool cheaper(const PlanCandidate& a, const PlanCandidate& b) {
  if (a.usd_per_million_output_tokens != b.usd_per_million_output_tokens)
    return a.usd_per_million_output_tokens < b.usd_per_million_output_tokens;
  if (a.gpus_total != b.gpus_total) return a.gpus_total < b.gpus_total;
  return a.tpot_s < b.tpot_s;
}

// Keeps the `keep` cheapest of each speculation setting (enumeration order among equals): sorted
// and cut each time the list doubles, so that memory stays within twice what is kept however many
// are feasible. Without speculation, the `keep` cheapest.
void keep_cheapest(std::vector<PlanCandidate>& ranked, std::size_t keep) {
  std::stable_sort(ranked.begin(), ranked.end(), cheaper);
  std::map<int, std::size_t> kept;
  std::erase_if(ranked, [&](const PlanCandidate& c) { return ++kept[c.draft_tokens] > keep; });
}

}  // namespace

bool format_supported(const GpuSpec& gpu, DType weights, DType activations) {
  if (weights == DType::int4 || weights == DType::int4_g128) return true;
  if (weights == DType::bf16 || weights == DType::fp16) return gpu.matrix_peak_flops(weights).has_value();
  return matmul_dtype(gpu, weights, activations) == weights;
}

std::vector<int> expert_parallel_degrees(const ModelSpec& model, int tp) {
  if (!model.moe) return {1};
  std::vector<int> out;
  for (int e = 1; e <= tp; ++e) {
    if (tp % e == 0 && model.moe->experts % e == 0) out.push_back(e);
  }
  return out;
}

std::vector<int> expert_parallel_degrees(const ModelSpec& model, const PlanSpace& space, int tp) {
  return space.ep.empty() ? expert_parallel_degrees(model, tp) : space.ep;
}

bool attention_dp_applies(const ModelSpec& model, const PlanSpace& space, int tp, int ep) {
  return space.attention_dp && model.moe && ep == tp && tp > 1;
}

PlanCandidate candidate_of(const GpuSpec& gpu, const ReplicaLayout& layout, DType weights, DType kv) {
  PlanCandidate c;
  c.gpu = gpu.id;
  c.tp = layout.tp;
  c.pp = layout.pp;
  c.ep = layout.ep;
  c.attention_dp = layout.attention_dp;
  c.weights = weights;
  c.kv = kv;
  return c;
}

void for_each_layout(const ModelSpec& model, const PlanSpace& space,
                     const std::function<void(const ReplicaLayout&)>& visit) {
  for (int tp : space.tp) {
    for (int pp : space.pp) {
      for (int ep : expert_parallel_degrees(model, space, tp)) {
        visit({tp, pp, ep, false});
        if (attention_dp_applies(model, space, tp, ep)) visit({tp, pp, ep, true});
      }
    }
  }
}

const Speculation* speculation_of(const PlanSpace& space, int draft_tokens) {
  if (draft_tokens == 0) return nullptr;
  for (const Speculation& s : space.speculation) {
    if (s.draft_tokens == draft_tokens) return &s;
  }
  throw std::logic_error(fmt::format("plan: no speculation of {} drafts in the space", draft_tokens));
}

CandidateDeployment candidate_deployment(const PlanSpace& space, const GpuSpec& gpu, const PlanCandidate& c) {
  CandidateDeployment out{space.base, space.time};
  DeploymentConfig& config = out.config;
  config.tp = c.tp;
  config.pp = c.pp;
  config.experts.ep = c.ep;
  config.experts.attention_dp = c.attention_dp;
  config.weights = c.weights;
  config.kv = c.kv;
  config.embeddings = default_activation_dtype(gpu);
  config.activations = default_activation_dtype(gpu);
  if (const auto it = space.calibration_by_gpu.find(gpu.id); it != space.calibration_by_gpu.end()) {
    out.time.calibration = it->second;
    // Not owned: the calibration outlives the search.
    config.collectives =
        std::shared_ptr<const CollectiveTables>(std::shared_ptr<const CollectiveTables>(), &it->second->collectives);
    config.collectives_gpu = gpu.id;
  }
  return out;
}

std::string_view name_of(Rejection reason) {
  switch (reason) {
    case Rejection::none: return "none";
    case Rejection::sharding: return "sharding";
    case Rejection::format: return "format";
    case Rejection::memory: return "memory";
    case Rejection::ttft: return "ttft";
    case Rejection::tpot: return "tpot";
  }
  return "none";
}

PlanResult plan_deployment(const ModelSpec& model, const Workload& w, const PlanSpace& space) {
  if (!(w.requests_per_s > 0) || !(w.requests_per_s <= 1e9)) {
    throw InputError(fmt::format("--rps {}: must be a positive number up to 1e9", w.requests_per_s));
  }
  if (w.prompt < 1 || w.prompt > max_tokens) {
    throw InputError(fmt::format("--prompt-tokens {}: must be 1 to {} tokens", w.prompt, max_tokens));
  }
  if (w.output < 1 || w.output > max_tokens) {
    throw InputError(fmt::format("--output-tokens {}: must be 1 to {} tokens", w.output, max_tokens));
  }
  if (!(w.tpot_s > 0) || !std::isfinite(w.tpot_s)) throw InputError("--tpot-ms: must be a positive number");
  if (!(w.ttft_s > 0) || !std::isfinite(w.ttft_s)) throw InputError("--ttft-ms: must be a positive number");
  if (space.max_batch < 1 || space.max_batch > max_batch) {
    throw InputError(fmt::format("--max-batch {}: must be 1 to {}", space.max_batch, max_batch));
  }

  std::vector<int> drafts{0};  // no speculation, then each K of the space
  for (const Speculation& s : space.speculation) {
    check_speculation(s);
    if (std::find(drafts.begin(), drafts.end(), s.draft_tokens) != drafts.end()) {
      throw InputError(fmt::format("--speculate {}: given twice", s.draft_tokens));
    }
    drafts.push_back(s.draft_tokens);
  }

  PlanResult result;
  RejectionTally tally;
  const std::size_t keep = std::max<std::size_t>(space.keep_ranked, 1);
  for (const GpuSpec& gpu : space.gpus) {
    const auto price = space.usd_per_gpu_hour.find(gpu.id);
    if (price == space.usd_per_gpu_hour.end()) {
      throw InputError(fmt::format("--price: no price for {} (give --price {}=USD_PER_HOUR)", gpu.id, gpu.id));
    }
    for_each_layout(model, space, [&](const ReplicaLayout& layout) {
      for (DType weights : space.weights) {
        for (DType kv : space.kv) {
          for (int draft_tokens : drafts) {
            ++result.configurations;
            PlanCandidate c = candidate_of(gpu, layout, weights, kv);
            c.draft_tokens = draft_tokens;
            evaluate(model, w, space, gpu, price->second, c, result);
            if (c.rejection == Rejection::none) {
              ++result.feasible;
              result.ranked.push_back(std::move(c));
              if (result.ranked.size() >= 2 * keep * drafts.size()) keep_cheapest(result.ranked, keep);
            } else {
              ++result.rejected_total;
              tally.add(c);
              if (result.rejected.size() < space.keep_rejected) result.rejected.push_back(std::move(c));
            }
          }
        }
      }
    });
  }
  keep_cheapest(result.ranked, keep);
  result.rejections = tally.counts();
  return result;
}

void RejectionTally::add(const PlanCandidate& c) {
  RejectionCount& entry = by_reason_[std::string(name_of(c.rejection))];
  if (entry.count++ == 0) {
    entry.reason = name_of(c.rejection);
    entry.example = fmt::format(
        "{} TP {} PP {}{}{} {}/{}{}: {}", c.gpu, c.tp, c.pp, c.ep > 1 ? fmt::format(" EP {}", c.ep) : std::string(),
        c.attention_dp ? " attention-DP" : "", name_of(c.weights), name_of(c.kv),
        c.draft_tokens > 0 ? fmt::format(" speculate {}", c.draft_tokens) : std::string(), c.reason);
  }
}

std::vector<RejectionCount> RejectionTally::counts() const {
  std::vector<RejectionCount> out;
  out.reserve(by_reason_.size());
  for (const auto& [reason, entry] : by_reason_) out.push_back(entry);
  return out;
}

std::vector<RejectionCount> rejection_summary(const PlanResult& result) {
  RejectionTally tally;
  for (const PlanCandidate& c : result.rejected) tally.add(c);
  return tally.counts();
}

}  // namespace roofline
