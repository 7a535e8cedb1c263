// The planner's candidates ranked by simulation (roofline/serve/plan_simulation.hpp).
#include "roofline/serve/plan_simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "roofline/core/error.hpp"

namespace roofline {
namespace {

// The engine of one rank of a candidate's replica, as serve runs it: under attention DP the
// replica's batch limit is shared by its ranks (each at most its share, rounded up).
EngineConfig rank_engine(const PlanSimulationOptions& o, const PlanSpace& space, const StepCoster& coster) {
  EngineConfig engine = o.engine;
  const std::int64_t ranks = coster.sharding().attention_dp;
  engine.max_batch = std::min(engine.max_batch, (space.max_batch + ranks - 1) / ranks);
  return engine;
}

const GpuSpec& gpu_of(const PlanSpace& space, const std::string& id) {
  const auto it = std::find_if(space.gpus.begin(), space.gpus.end(), [&](const GpuSpec& g) { return g.id == id; });
  if (it == space.gpus.end()) throw InputError(fmt::format("plan: candidate GPU {} is not in the plan's space", id));
  return *it;
}

// The steps a candidate's coster is built for: the engine's budget, or its batch limit where
// larger, each decode request with speculation running a verify step of K + 1 tokens (serve's rule).
std::int64_t step_tokens(const PlanSimulationOptions& o, const PlanSpace& space, int draft_tokens) {
  return std::max(o.engine.max_num_tokens, std::min(o.engine.max_batch, space.max_batch)) * (1 + draft_tokens);
}

// A candidate's engine as serve runs it; with `speculation` (null: plain decode) as serve --speculate
// does: verify steps that yield the expected accepted tokens, the drafter's weights off the KV cache.
EngineConfig candidate_engine(const PlanSimulationOptions& o, const PlanSpace& space, const StepCoster& coster,
                              const ModelSpec& model, const GpuSpec& gpu, const DeploymentConfig& config,
                              const Speculation* speculation) {
  EngineConfig engine = rank_engine(o, space, coster);
  const std::optional<Speculation> drafts =
      speculation != nullptr ? std::optional<Speculation>(*speculation) : std::nullopt;
  engine.kv_blocks = kv_cache(model, gpu, config, engine.block_size, o.kv_memory_fraction, drafts).blocks;
  if (speculation != nullptr) {
    engine.draft_tokens = speculation->draft_tokens;
    engine.accepted_per_verify = expected_tokens_per_verify(*speculation);
  }
  return engine;
}

std::optional<Speculation> speculation_copy(const PlanSpace& space, int draft_tokens) {
  const Speculation* s = speculation_of(space, draft_tokens);
  return s != nullptr ? std::optional<Speculation>(*s) : std::nullopt;
}

SimulatedCandidate simulate_one(const ModelSpec& model, const Workload& w, const PlanSpace& space,
                                const PlanCandidate& c, const PlanSimulationOptions& o) {
  SimulatedCandidate out;
  out.candidate = c;
  const GpuSpec& gpu = gpu_of(space, c.gpu);
  const CandidateDeployment deployment = candidate_deployment(space, gpu, c);
  SyntheticWorkload load;
  load.requests = o.requests;
  load.prompt.a = static_cast<double>(w.prompt);
  load.output.a = static_cast<double>(w.output);
  load.arrivals = {Arrivals::Kind::poisson,
                   w.requests_per_s / static_cast<double>(std::max<std::int64_t>(1, c.replicas))};
  load.seed = o.seed;
  try {
    StepCoster coster(model, gpu, deployment.config, deployment.time, step_tokens(o, space, c.draft_tokens),
                      speculation_copy(space, c.draft_tokens));
    const EngineConfig engine =
        candidate_engine(o, space, coster, model, gpu, deployment.config, speculation_of(space, c.draft_tokens));
    const std::int64_t ranks = coster.sharding().attention_dp;
    const SourceFactory source = [&] { return std::make_unique<SyntheticSource>(load); };
    MetricsRecorder recorder;
    PoolRun run = simulate_pool(source, {engine, &coster, &model, ranks, ranks},
                                [&](std::size_t, const RequestRecord& r) { recorder.add(r); });
    out.ttft_s = recorder.ttft_percentile(o.percentile);
    out.tpot_s = recorder.tpot_percentile(o.percentile);
    const ServeMetrics m = recorder.finish(run);
    out.ttft = m.ttft;
    out.tpot = m.tpot;
    out.output_tokens_per_s = m.output_tokens_per_s;
    out.preemptions = m.preemptions;
  } catch (const InputError& e) {
    out.reason = e.what();
    return out;
  }
  std::vector<std::string> missed;
  if (out.ttft_s > w.ttft_s) {
    missed.push_back(fmt::format("p{:g} TTFT {:.1f} ms > {:g} ms", o.percentile, out.ttft_s * 1e3, w.ttft_s * 1e3));
  }
  if (out.tpot_s > w.tpot_s) {
    missed.push_back(fmt::format("p{:g} TPOT {:.2f} ms > {:g} ms", o.percentile, out.tpot_s * 1e3, w.tpot_s * 1e3));
  }
  out.meets = missed.empty();
  out.reason = fmt::format("{}", fmt::join(missed, ", "));
  return out;
}

// The first (cheapest) feasible candidate of `gpu`, if any.
const PlanCandidate* cheapest_on(const PlanResult& plan, const std::string& gpu) {
  for (const PlanCandidate& c : plan.ranked) {
    if (c.gpu == gpu) return &c;
  }
  return nullptr;
}

// One ratio: both pools of `replica`'s layout under the whole load.
struct RatioRun {
  double ttft_s = 0, tpot_s = 0;
  LatencyStats ttft, tpot, transfer;
  double output_tokens_per_s = 0;
  double prefill_utilisation = 0, decode_utilisation = 0;
};

RatioRun run_ratio(const Workload& w, const PlanSimulationOptions& o, const PoolEngines& prefill,
                   const PoolEngines& decode, const KvLink& link) {
  SyntheticWorkload load;
  load.requests = o.requests;
  load.prompt.a = static_cast<double>(w.prompt);
  load.output.a = static_cast<double>(w.output);
  load.arrivals = {Arrivals::Kind::poisson, w.requests_per_s};
  load.seed = o.seed;
  const SourceFactory source = [&] { return std::make_unique<SyntheticSource>(load); };
  MetricsRecorder recorder;
  DisaggregatedRun run = simulate_disaggregated(source, prefill, decode, link,
                                                [&](std::size_t, const RequestRecord& r) { recorder.add(r); });
  RatioRun out;
  out.ttft_s = recorder.ttft_percentile(o.percentile);
  out.tpot_s = recorder.tpot_percentile(o.percentile);
  const ServeMetrics m = recorder.finish(run.overall);
  out.ttft = m.ttft;
  out.tpot = m.tpot;
  out.transfer = {run.transfer_s.count(),        run.transfer_s.mean(),         run.transfer_s.percentile(50),
                  run.transfer_s.percentile(90), run.transfer_s.percentile(99), run.transfer_s.max()};
  out.output_tokens_per_s = m.output_tokens_per_s;
  out.prefill_utilisation = run.prefill.utilisation();
  out.decode_utilisation = run.decode.utilisation();
  return out;
}

DisaggregatedCandidate disaggregate_one(const ModelSpec& model, const Workload& w, const PlanSpace& space,
                                        const GpuSpec& gpu, const PlanCandidate& c, const PlanSimulationOptions& o,
                                        std::int64_t most) {
  DisaggregatedCandidate out;
  out.replica = c;
  const CandidateDeployment deployment = candidate_deployment(space, gpu, c);
  try {
    // The prefill pool runs prompts only: speculation drafts in the decode pool (as serve --disaggregate).
    StepCoster prefill_coster(model, gpu, deployment.config, deployment.time, step_tokens(o, space, 0));
    StepCoster decode_coster(model, gpu, deployment.config, deployment.time, step_tokens(o, space, c.draft_tokens),
                             speculation_copy(space, c.draft_tokens));
    const EngineConfig prefill_engine =
        candidate_engine(o, space, prefill_coster, model, gpu, deployment.config, nullptr);
    const EngineConfig engine =
        candidate_engine(o, space, decode_coster, model, gpu, deployment.config, speculation_of(space, c.draft_tokens));
    const std::int64_t ranks = decode_coster.sharding().attention_dp;
    // serve's default link: each prefill GPU over its own scale-out NIC.
    const KvLink link = default_kv_link(model, gpu, deployment.config);
    std::int64_t np = 1;
    std::int64_t nd = 1;
    while (true) {
      const RatioRun r = run_ratio(w, o, {prefill_engine, &prefill_coster, &model, np * ranks, ranks},
                                   {engine, &decode_coster, &model, nd * ranks, ranks}, link);
      ++out.simulations;
      out.prefill_replicas = np;
      out.decode_replicas = nd;
      out.ttft_s = r.ttft_s;
      out.tpot_s = r.tpot_s;
      out.ttft = r.ttft;
      out.tpot = r.tpot;
      out.transfer = r.transfer;
      out.output_tokens_per_s = r.output_tokens_per_s;
      out.prefill_utilisation = r.prefill_utilisation;
      out.decode_utilisation = r.decode_utilisation;
      const bool ttft_missed = r.ttft_s > w.ttft_s;
      const bool tpot_missed = r.tpot_s > w.tpot_s;
      if (!ttft_missed && !tpot_missed) {
        out.meets = true;
        break;
      }
      if ((ttft_missed && np >= most) || (tpot_missed && nd >= most)) {
        std::vector<std::string> missed;
        if (ttft_missed) {
          missed.push_back(fmt::format("p{:g} TTFT {:.1f} ms > {:g} ms", o.percentile, r.ttft_s * 1e3, w.ttft_s * 1e3));
        }
        if (tpot_missed) {
          missed.push_back(fmt::format("p{:g} TPOT {:.2f} ms > {:g} ms", o.percentile, r.tpot_s * 1e3, w.tpot_s * 1e3));
        }
        out.reason = fmt::format("{} at {} prefill and {} decode replicas", fmt::join(missed, ", "), np, nd);
        break;
      }
      if (ttft_missed) ++np;
      if (tpot_missed) ++nd;
    }
  } catch (const InputError& e) {
    out.reason = e.what();
  }
  const std::int64_t per_replica = static_cast<std::int64_t>(c.tp) * c.pp;
  out.gpus_total = (out.prefill_replicas + out.decode_replicas) * per_replica;
  const auto price = space.usd_per_gpu_hour.find(gpu.id);
  if (price != space.usd_per_gpu_hour.end()) {
    out.usd_per_hour = price->second * static_cast<double>(out.gpus_total);
    // Output tokens of the load, not of the pools' capacity: the deployment serves --rps.
    const double tokens_per_hour = w.requests_per_s * static_cast<double>(w.output) * 3600.0;
    out.usd_per_million_output_tokens = out.usd_per_hour / tokens_per_hour * 1e6;
  }
  return out;
}

}  // namespace

std::vector<DisaggregatedCandidate> simulate_disaggregated_candidates(const ModelSpec& model, const Workload& workload,
                                                                      const PlanSpace& space, const PlanResult& plan,
                                                                      const PlanSimulationOptions& options,
                                                                      std::int64_t most_replicas) {
  std::vector<DisaggregatedCandidate> out;
  for (const GpuSpec& gpu : space.gpus) {
    const PlanCandidate* c = cheapest_on(plan, gpu.id);
    if (c) out.push_back(disaggregate_one(model, workload, space, gpu, *c, options, most_replicas));
  }
  return out;
}

PlanSimulation simulate_candidates(const ModelSpec& model, const Workload& workload, const PlanSpace& space,
                                   const PlanResult& plan, const PlanSimulationOptions& options) {
  if (!(options.percentile > 0 && options.percentile <= 100)) {
    throw InputError(fmt::format("--percentile {}: must be in (0, 100]", options.percentile));
  }
  if (options.requests < 1) throw InputError(fmt::format("--sim-requests {}: must be at least 1", options.requests));
  PlanSimulation out;
  // With speculation searched, the simulation goes on past `wanted` until a candidate with and one
  // without speculation meet (where the closed form found both), so that the report can say why the
  // chosen one does or does not speculate; past `wanted` only candidates of the kind still missing run.
  const auto speculates = [](const PlanCandidate& c) { return c.draft_tokens > 0; };
  bool wanted_with = false;
  bool wanted_without = false;
  if (!space.speculation.empty()) {
    wanted_with = std::any_of(plan.ranked.begin(), plan.ranked.end(), speculates);
    wanted_without = !std::all_of(plan.ranked.begin(), plan.ranked.end(), speculates);
  }
  bool met_with = false;
  bool met_without = false;
  // plan.ranked is in order of cost already: the first `wanted` that meet are the cheapest that do.
  for (const PlanCandidate& c : plan.ranked) {
    const bool covered = (!wanted_with || met_with) && (!wanted_without || met_without);
    if (out.meeting.size() >= options.wanted && covered) break;
    if (out.meeting.size() >= options.wanted && (speculates(c) ? met_with : met_without)) continue;
    if (out.simulated >= options.most) {
      out.stopped_at_most = true;
      break;
    }
    SimulatedCandidate s = simulate_one(model, workload, space, c, options);
    ++out.simulated;
    if (s.meets) (speculates(c) ? met_with : met_without) = true;
    (s.meets ? out.meeting : out.missing).push_back(std::move(s));
  }
  return out;
}

}  // namespace roofline
