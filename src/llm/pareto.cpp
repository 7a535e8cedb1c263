// The Pareto front of deployments (roofline/llm/pareto.hpp): the sweep, its pruning and the front.
#include "roofline/llm/pareto.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "roofline/core/error.hpp"

namespace roofline {
namespace {

// Infeasible points by reason, the first of each kept as its example (formatted only then).
class PointTally {
 public:
  template <typename Example>
  void add(Rejection reason, std::int64_t points, const Example& example) {
    if (points <= 0) return;
    RejectionCount& entry = by_reason_[std::string(name_of(reason))];
    if (entry.count == 0) {
      entry.reason = name_of(reason);
      entry.example = example();
    }
    entry.count += points;
  }
  [[nodiscard]] std::vector<RejectionCount> counts() const {
    std::vector<RejectionCount> out;
    for (const auto& [reason, entry] : by_reason_) out.push_back(entry);
    return out;
  }

 private:
  std::map<std::string, RejectionCount, std::less<>> by_reason_;
};

std::string ms(double seconds) {
  return fmt::format("{:.2f} ms", seconds * 1e3);
}

// Indices of the non-dominated points, tokens/s per user descending (per GPU ascending along it).
std::vector<std::size_t> front_indices(const std::vector<ParetoPoint>& points) {
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const ParetoPoint& p = points[a];
    const ParetoPoint& q = points[b];
    if (p.tokens_per_s_per_user != q.tokens_per_s_per_user) return p.tokens_per_s_per_user > q.tokens_per_s_per_user;
    return p.tokens_per_s_per_gpu > q.tokens_per_s_per_gpu;
  });
  // Walking down in per-user speed, a point is on the front when it is faster per GPU than every
  // point before it (which are all at least as fast per user), or exactly equal to the last one kept.
  std::vector<std::size_t> front;
  for (std::size_t i : order) {
    const ParetoPoint& p = points[i];
    if (front.empty() || p.tokens_per_s_per_gpu > points[front.back()].tokens_per_s_per_gpu) {
      front.push_back(i);
    } else if (p.tokens_per_s_per_gpu == points[front.back()].tokens_per_s_per_gpu &&
               p.tokens_per_s_per_user == points[front.back()].tokens_per_s_per_user) {
      front.push_back(i);
    }
  }
  return front;
}

// A layout that can serve as the prefill pool of a disaggregated point: its prefill of one prompt
// and its KV transfer (default_kv_link, the rule serve --disaggregate uses).
struct PrefillPool {
  ReplicaLayout layout;
  double prefill_s = 0;
  double transfer_s = 0;
};

// Pruning (exact): a pool at least as slow to prefill, on at least as many GPUs, with a transfer at
// least as slow as another's is never the better pairing: for every ratio the other serves as many
// requests/s on no more GPUs, and reaches the first token no later (best_pool_ratio finds the best
// ratio of the grid for each, so the other's best is at least this one's). Of equal ones the first
// stays.
std::vector<PrefillPool> prune_prefill_pools(const std::vector<PrefillPool>& pools) {
  const auto covers = [](const PrefillPool& a, const PrefillPool& b) {
    return a.prefill_s <= b.prefill_s && a.layout.gpus() <= b.layout.gpus() && a.transfer_s <= b.transfer_s;
  };
  std::vector<PrefillPool> kept;
  for (std::size_t i = 0; i < pools.size(); ++i) {
    bool beaten = false;
    for (std::size_t j = 0; j < pools.size() && !beaten; ++j) {
      if (j == i || !covers(pools[j], pools[i])) continue;
      // Equal in all three: the earlier one stays.
      beaten = !covers(pools[i], pools[j]) || j < i;
    }
    if (!beaten) kept.push_back(pools[i]);
  }
  return kept;
}

struct Sweep {
  const ModelSpec& model;
  std::int64_t prompt;
  std::int64_t output;
  const ParetoSpace& space;
  std::vector<std::int64_t> batches;  // ascending
  std::vector<ParetoPoint> points;    // feasible
  PointTally tally;
  ParetoResult& result;
  // Disaggregated: the kept prefill pools of the GPU being swept, by weight and KV format.
  std::map<std::pair<DType, DType>, std::vector<PrefillPool>> prefill_pools;

  void find_prefill_pools(const GpuSpec& gpu);
  void configuration(const GpuSpec& gpu, std::optional<double> price, ParetoDeployment d,
                     const Speculation* speculation);
  // The disaggregated point of decode point `p` (its step, tokens per step and TPOT set), if a
  // prefill pool meets the TTFT target with it.
  [[nodiscard]] std::optional<ParetoPoint> disaggregated(const ParetoPoint& p, const std::vector<PrefillPool>& pools,
                                                         std::optional<double> price);
};

void Sweep::find_prefill_pools(const GpuSpec& gpu) {
  prefill_pools.clear();
  const PlanSpace& plan = space.plan;
  for (DType weights : plan.weights) {
    for (DType kv : plan.kv) {
      std::vector<PrefillPool> found;
      for_each_layout(model, plan, [&](const ReplicaLayout& layout) {
        const PlanCandidate candidate = candidate_of(gpu, layout, weights, kv);
        const CandidateDeployment deployment = candidate_deployment(plan, gpu, candidate);
        const DeploymentConfig& config = deployment.config;
        if (layout.tp > config.scale_up_domain || !format_supported(gpu, weights, config.activations)) return;
        Sharding sharding;
        try {
          sharding = shard(model, config);
        } catch (const InputError&) {
          return;
        }
        // The prefill pool holds a prompt's cache until its transfer: it must fit one.
        const MemoryPlan memory = plan_memory(model, gpu, sharding, config, prompt);
        if (!memory.weights_fit() || memory.max_requests() < 1) return;
        PrefillPool pool;
        pool.layout = layout;
        pool.prefill_s = prefill(model, gpu, sharding, config, prompt, deployment.time).time_s;
        pool.transfer_s = default_kv_link(model, gpu, config).transfer_s(prompt);
        // Before the decode pool's first step the first token is this late already.
        if (space.ttft_s && pool.prefill_s + pool.transfer_s > *space.ttft_s) return;
        found.push_back(pool);
      });
      result.prefill_pools += static_cast<std::int64_t>(found.size());
      std::vector<PrefillPool> kept = prune_prefill_pools(found);
      result.prefill_pools_kept += static_cast<std::int64_t>(kept.size());
      prefill_pools[{weights, kv}] = std::move(kept);
    }
  }
}

std::optional<ParetoPoint> Sweep::disaggregated(const ParetoPoint& decode, const std::vector<PrefillPool>& pools,
                                                std::optional<double> price) {
  const ParetoDeployment& d = decode.deployment;
  const double step_per_token = decode.step_s / decode.tokens_per_step;
  std::optional<ParetoPoint> best;
  PoolsThroughput best_throughput;
  for (const PrefillPool& pool : pools) {
    // docs/serve.md section 7: TTFT = prefill + transfer + the decode pool's first step (queues
    // aside: the closed form has none).
    const double ttft = pool.prefill_s + pool.transfer_s + decode.step_s;
    if (space.ttft_s && ttft > *space.ttft_s) continue;
    PoolRates rates;
    rates.prefill_requests_per_s = 1 / pool.prefill_s;
    // A decode replica at this batch finishes a request every output x step per token / batch.
    rates.decode_requests_per_s = static_cast<double>(d.batch) / (static_cast<double>(output) * step_per_token);
    rates.prefill_gpus = pool.layout.gpus();
    rates.decode_gpus = d.gpus();
    PoolRatio ratio;
    if (space.pool_ratios.empty()) {
      ratio = best_pool_ratio(rates, output, space.max_pool_replicas, &result.pool_pairings);
    } else {
      ratio = best_pool_ratio(rates, output, space.pool_ratios);
      result.pool_pairings += static_cast<std::int64_t>(space.pool_ratios.size());
    }
    const PoolsThroughput throughput = pools_throughput(rates, ratio, output);
    // The most tokens/s per GPU; ties: fewer GPUs, then the earlier pool (sweep order).
    if (best && (throughput.output_tokens_per_s_per_gpu < best_throughput.output_tokens_per_s_per_gpu ||
                 (throughput.output_tokens_per_s_per_gpu == best_throughput.output_tokens_per_s_per_gpu &&
                  throughput.gpus >= best_throughput.gpus))) {
      continue;
    }
    ParetoPoint p = decode;
    p.deployment.pools = ParetoDeployment::Pools{pool.layout, ratio};
    p.ttft_s = ttft;
    p.prefill_s = pool.prefill_s;
    p.kv_transfer_s = pool.transfer_s;
    p.pool_balance = rates.balance();
    p.tpot_s = step_per_token;
    p.tokens_per_s_per_user = 1 / p.tpot_s;
    p.tokens_per_s_per_gpu = throughput.output_tokens_per_s_per_gpu;
    p.usd_per_million_output_tokens.reset();
    if (price) p.usd_per_million_output_tokens = *price / (p.tokens_per_s_per_gpu * 3600.0) * 1e6;
    best = std::move(p);
    best_throughput = throughput;
  }
  return best;
}

void Sweep::configuration(const GpuSpec& gpu, std::optional<double> price, ParetoDeployment d,
                          const Speculation* speculation) {
  const auto all = static_cast<std::int64_t>(batches.size());
  const std::int64_t modes = result.modes;
  const auto example = [&](const std::string& why) {
    return [&d, why] { return fmt::format("{}: {}", describe(d), why); };
  };
  PlanCandidate candidate;
  candidate.gpu = gpu.id;
  candidate.tp = d.tp;
  candidate.pp = d.pp;
  candidate.weights = d.weights;
  candidate.kv = d.kv;
  CandidateDeployment deployment = candidate_deployment(space.plan, gpu, candidate);
  DeploymentConfig& config = deployment.config;
  config.experts.ep = d.ep;
  config.experts.attention_dp = d.attention_dp;
  d.batch = batches.front();

  // What rules out the layout rules out both modes' points.
  if (d.tp > config.scale_up_domain) {
    tally.add(
        Rejection::sharding, all * modes,
        example(fmt::format("TP {} spans more than the scale-up domain of {} GPUs", d.tp, config.scale_up_domain)));
    return;
  }
  Sharding sharding;
  try {
    sharding = shard(model, config);
  } catch (const InputError& e) {
    tally.add(Rejection::sharding, all * modes, example(e.what()));
    return;
  }
  if (!format_supported(gpu, d.weights, config.activations)) {
    tally.add(Rejection::format, all * modes,
              example(fmt::format("{} has no {} tensor rate", gpu.id, name_of(d.weights))));
    return;
  }
  const std::int64_t context = prompt + output;
  const MemoryPlan memory = plan_memory(model, gpu, sharding, config, context);
  if (!memory.weights_fit() || memory.max_requests() < 1) {
    tally.add(Rejection::memory, all * modes,
              example(fmt::format("{:.1f} GB of weights per GPU leave no room for one request of {} tokens",
                                  memory.heaviest().weights.total() / 1e9, context)));
    return;
  }
  // Aggregated, this replica prefills; disaggregated, a prefill pool does (the GPU's, in these formats).
  const StepTime first = prefill(model, gpu, sharding, config, prompt, deployment.time);
  bool aggregated = true;
  if (space.ttft_s && first.time_s > *space.ttft_s) {
    tally.add(Rejection::ttft, all, example(fmt::format("TTFT {} > target {}", ms(first.time_s), ms(*space.ttft_s))));
    aggregated = false;
  }
  const std::vector<PrefillPool>* pools = nullptr;
  bool disaggregated_alive = space.disaggregate;
  if (space.disaggregate) {
    pools = &prefill_pools.at({d.weights, d.kv});
    if (pools->empty()) {
      tally.add(Rejection::ttft, all,
                example(space.ttft_s ? fmt::format("disaggregated: no prefill pool on {} in these formats reaches the "
                                                   "decode pool within the TTFT target {}",
                                                   gpu.id, ms(*space.ttft_s))
                                     : fmt::format("disaggregated: no layout on {} in these formats holds the weights "
                                                   "and one prompt's cache as a prefill pool",
                                                   gpu.id)));
      disaggregated_alive = false;
    }
  }
  // The points of each mode still to come at batch index i (for the tallies of an early end).
  const auto left_in = [&](std::size_t i) {
    const auto left = static_cast<std::int64_t>(batches.size() - i);
    return left * ((aggregated ? 1 : 0) + (disaggregated_alive ? 1 : 0));
  };

  std::int64_t fit = memory.max_requests();
  bool drafter_checked = speculation == nullptr;
  const auto out = static_cast<double>(output);
  for (std::size_t i = 0; i < batches.size() && (aggregated || disaggregated_alive); ++i) {
    const std::int64_t batch = batches[i];
    const auto left = static_cast<std::int64_t>(batches.size() - i);
    d.batch = batch;
    ParetoPoint p;
    if (speculation != nullptr) {
      if (drafter_checked && batch > fit) {
        tally.add(Rejection::memory, left_in(i),
                  example(fmt::format("{} requests fit beside the drafter, not {}", fit, batch)));
        return;
      }
      std::optional<SpeculativeDecode> described;
      try {
        described = speculative_decode(model, gpu, sharding, config, batch, context, *speculation, deployment.time);
      } catch (const InputError& e) {
        // A draft model that does not split over this TP group (plan --rps rejects it alike): its
        // points are infeasible, the sweep goes on.
        tally.add(Rejection::sharding, left_in(i), example(e.what()));
        return;
      }
      const SpeculativeDecode& cycle = *described;
      ++result.decode_evaluations;
      if (!drafter_checked) {
        // The drafter's weights and KV are known once it is described: the first cycle sets the fit.
        drafter_checked = true;
        fit = max_requests_with_draft(memory, sharding, cycle);
        if (batch > fit) {
          tally.add(Rejection::memory, left_in(i),
                    example(fmt::format("{} requests fit beside the drafter, not {}", fit, batch)));
          return;
        }
      }
      p.step_s = cycle.cycle_s;
      p.tokens_per_step = cycle.tokens_per_verify;
      p.bottleneck = cycle.verify.bottleneck();
    } else {
      if (batch > fit) {
        tally.add(Rejection::memory, left_in(i), example(fmt::format("{} requests fit, not {}", fit, batch)));
        return;
      }
      const StepTime step = decode_step(model, gpu, sharding, config, batch, context, deployment.time);
      ++result.decode_evaluations;
      p.step_s = step.time_s;
      p.bottleneck = step.bottleneck();
    }
    const auto b = static_cast<double>(batch);
    p.deployment = d;
    p.max_batch = fit;
    if (aggregated) {
      ParetoPoint a = p;
      // Plan's closed form (docs/llm.md section 9): a replica at batch B spends output x (step per
      // token) + B x TTFT on B requests, so each sees TPOT = step per token + B x TTFT / output.
      a.tpot_s = p.step_s / p.tokens_per_step + b * first.time_s / out;
      if (space.tpot_s && a.tpot_s > *space.tpot_s) {
        // A larger batch only lengthens the step: the rest miss too.
        tally.add(Rejection::tpot, left, example(fmt::format("TPOT {} > target {}", ms(a.tpot_s), ms(*space.tpot_s))));
        aggregated = false;
      } else {
        a.ttft_s = first.time_s;
        a.tokens_per_s_per_user = 1 / a.tpot_s;
        a.tokens_per_s_per_gpu = b / a.tpot_s / d.gpus();
        if (price) a.usd_per_million_output_tokens = *price / (a.tokens_per_s_per_gpu * 3600.0) * 1e6;
        points.push_back(std::move(a));
      }
    }
    if (disaggregated_alive) {
      // The decode pool never prefills: TPOT is its step per token alone.
      const double tpot = p.step_s / p.tokens_per_step;
      if (space.tpot_s && tpot > *space.tpot_s) {
        tally.add(Rejection::tpot, left,
                  example(fmt::format("disaggregated: TPOT {} > target {}", ms(tpot), ms(*space.tpot_s))));
        disaggregated_alive = false;
        continue;
      }
      std::optional<ParetoPoint> pair = disaggregated(p, *pools, price);
      if (!pair) {
        // TTFT ends with the decode pool's step, which a larger batch only lengthens.
        tally.add(Rejection::ttft, left,
                  example(fmt::format("disaggregated: no prefill pool reaches the first token within {} beside a "
                                      "decode step of {}",
                                      ms(*space.ttft_s), ms(p.step_s))));
        disaggregated_alive = false;
        continue;
      }
      points.push_back(std::move(*pair));
    }
  }
}

template <typename T>
void require_entries(const std::vector<T>& list, std::string_view flag) {
  if (list.empty()) throw InputError(fmt::format("{}: the sweep needs at least one value", flag));
}

}  // namespace

std::vector<ParetoPoint> pareto_front(std::vector<ParetoPoint> points) {
  const std::vector<std::size_t> indices = front_indices(points);
  std::vector<ParetoPoint> front;
  front.reserve(indices.size());
  for (auto it = indices.rbegin(); it != indices.rend(); ++it) front.push_back(std::move(points[*it]));
  return front;
}

std::size_t pick_chosen(const std::vector<ParetoPoint>& front, bool tpot_target) {
  if (front.empty()) throw std::logic_error("pick_chosen: an empty front");
  if (tpot_target) return 0;  // the slowest per user is the fastest per GPU
  const double x0 = std::log(front.front().tokens_per_s_per_user);
  const double x1 = std::log(front.back().tokens_per_s_per_user);
  const double y0 = std::log(front.back().tokens_per_s_per_gpu);
  const double y1 = std::log(front.front().tokens_per_s_per_gpu);
  const auto normalised = [](double v, double lo, double hi) { return hi > lo ? (v - lo) / (hi - lo) : 0.0; };
  std::size_t best = 0;
  double best_sum = -1;
  for (std::size_t i = 0; i < front.size(); ++i) {
    const double sum = normalised(std::log(front[i].tokens_per_s_per_user), x0, x1) +
                       normalised(std::log(front[i].tokens_per_s_per_gpu), y0, y1);
    if (sum > best_sum) {
      best_sum = sum;
      best = i;
    }
  }
  return best;
}

std::int64_t ParetoDeployment::deployment_gpus() const {
  if (!pools) return gpus();
  return pools->ratio.prefill * pools->prefill.gpus() + pools->ratio.decode * gpus();
}

std::string describe(const ParetoDeployment& d) {
  const std::string layout =
      fmt::format("TP {} PP {} EP {}{}", d.tp, d.pp, d.ep, d.attention_dp ? " attention-DP" : "");
  const std::string formats =
      fmt::format("{}/{}{} batch {}", name_of(d.weights), name_of(d.kv),
                  d.draft_tokens > 0 ? fmt::format(" speculate {}", d.draft_tokens) : std::string(), d.batch);
  if (!d.pools) return fmt::format("{} {} {}", d.gpu, layout, formats);
  const ReplicaLayout& p = d.pools->prefill;
  return fmt::format("{} prefill {} x TP {} PP {} EP {}{} : decode {} x {} {}", d.gpu, d.pools->ratio.prefill, p.tp,
                     p.pp, p.ep, p.attention_dp ? " attention-DP" : "", d.pools->ratio.decode, layout, formats);
}

ParetoResult sweep_pareto(const ModelSpec& model, std::int64_t prompt, std::int64_t output, const ParetoSpace& space) {
  if (prompt < 1 || prompt > max_tokens) {
    throw InputError(fmt::format("--prompt-tokens {}: must be 1 to {} tokens", prompt, max_tokens));
  }
  if (output < 1 || output > max_tokens) {
    throw InputError(fmt::format("--output-tokens {}: must be 1 to {} tokens", output, max_tokens));
  }
  const PlanSpace& plan = space.plan;
  require_entries(plan.gpus, "--gpus");
  require_entries(plan.tp, "--tp");
  require_entries(plan.pp, "--pp");
  require_entries(plan.weights, "--weights");
  require_entries(plan.kv, "--kv");
  require_entries(space.batches, "--batches");
  for (std::int64_t b : space.batches) {
    if (b < 1 || b > max_batch) throw InputError(fmt::format("--batches {}: must be 1 to {}", b, max_batch));
  }
  if (space.tpot_s && !(*space.tpot_s > 0 && std::isfinite(*space.tpot_s))) {
    throw InputError("--tpot-ms: must be a positive number");
  }
  if (space.ttft_s && !(*space.ttft_s > 0 && std::isfinite(*space.ttft_s))) {
    throw InputError("--ttft-ms: must be a positive number");
  }
  for (const Speculation& s : space.plan.speculation) check_speculation(s);
  if (space.max_pool_replicas < 1 || space.max_pool_replicas > pool_replicas_limit) {
    throw InputError(
        fmt::format("--max-pool-replicas {}: must be 1 to {}", space.max_pool_replicas, pool_replicas_limit));
  }
  for (const PoolRatio& r : space.pool_ratios) {
    if (r.prefill < 1 || r.decode < 1 || r.prefill > pool_replicas_limit || r.decode > pool_replicas_limit) {
      throw InputError(fmt::format("--pool-ratios {}:{}: each pool needs 1 to {} replicas", r.prefill, r.decode,
                                   pool_replicas_limit));
    }
  }

  ParetoResult result;
  result.modes = space.disaggregate ? 2 : 1;
  Sweep sweep{model, prompt, output, space, space.batches, {}, {}, result, {}};
  std::sort(sweep.batches.begin(), sweep.batches.end());
  sweep.batches.erase(std::unique(sweep.batches.begin(), sweep.batches.end()), sweep.batches.end());
  const bool priced = !plan.usd_per_gpu_hour.empty();
  std::vector<const Speculation*> drafts{nullptr};
  for (const Speculation& s : space.plan.speculation) drafts.push_back(&s);

  for (const GpuSpec& gpu : plan.gpus) {
    std::optional<double> price;
    if (priced) {
      const auto it = plan.usd_per_gpu_hour.find(gpu.id);
      if (it == plan.usd_per_gpu_hour.end()) {
        throw InputError(fmt::format("--price: no price for {} (give --price {}=USD_PER_HOUR)", gpu.id, gpu.id));
      }
      price = it->second;
    }
    if (space.disaggregate) sweep.find_prefill_pools(gpu);
    for_each_layout(model, plan, [&](const ReplicaLayout& layout) {
      for (DType weights : plan.weights) {
        for (DType kv : plan.kv) {
          for (const Speculation* draft : drafts) {
            ++result.configurations;
            result.swept += static_cast<std::int64_t>(sweep.batches.size()) * result.modes;
            ParetoDeployment d{.gpu = gpu.id,
                               .tp = layout.tp,
                               .pp = layout.pp,
                               .ep = layout.ep,
                               .attention_dp = layout.attention_dp,
                               .weights = weights,
                               .kv = kv,
                               .draft_tokens = draft != nullptr ? draft->draft_tokens : 0,
                               .pools = std::nullopt};  // aggregated; the batch is the sweep's
            sweep.configuration(gpu, price, std::move(d), draft);
          }
        }
      }
    });
  }
  result.rejections = sweep.tally.counts();
  result.feasible = static_cast<std::int64_t>(sweep.points.size());
  if (sweep.points.empty()) {
    std::vector<std::string> parts;
    std::string example;
    std::int64_t most = 0;
    for (const RejectionCount& r : result.rejections) {
      parts.push_back(fmt::format("{} {}", r.count, r.reason));
      if (r.count > most) {
        most = r.count;
        example = r.example;
      }
    }
    throw InputError(fmt::format("{}: none of the {} points swept is feasible ({}); e.g. {}", model.id, result.swept,
                                 fmt::join(parts, ", "), example));
  }

  const std::vector<std::size_t> on_front = front_indices(sweep.points);
  std::vector<bool> is_front(sweep.points.size(), false);
  for (std::size_t i : on_front) is_front[i] = true;
  const std::size_t dominated = sweep.points.size() - on_front.size();
  const std::size_t keep = std::min(space.keep_dominated, dominated);
  if (keep > 0) {
    // An even stride over the dominated points in sweep order: the k-th kept is the
    // floor(k x dominated / keep)-th.
    std::size_t seen = 0;
    std::size_t next = 0;
    for (std::size_t i = 0; i < sweep.points.size() && result.dominated.size() < keep; ++i) {
      if (is_front[i]) continue;
      if (seen == next) {
        result.dominated.push_back(sweep.points[i]);
        next = (result.dominated.size() * dominated) / keep;
      }
      ++seen;
    }
  }
  for (auto it = on_front.rbegin(); it != on_front.rend(); ++it) result.front.push_back(sweep.points[*it]);
  result.chosen = pick_chosen(result.front, space.tpot_s.has_value());
  return result;
}

}  // namespace roofline
