#pragma once

// The planner's candidates ranked by simulation (plan --rps R): the closed form of llm's plan
// prunes (what does not fit or misses a target even there); the feasible candidates then run, in
// the closed form's order of cost, as one replica of their deployment under Poisson arrivals at
// their share of the load (R / replicas), with the workload's fixed lengths, through the engine of
// engine.hpp. A candidate meets the targets when the chosen percentile of its simulated TTFT and
// of its TPOT does. The simulation does not change a candidate's cost (its replicas are the
// closed form's), so once `wanted` candidates meet, none simulated later could rank above them:
// the ranking of those reported is that of simulating every feasible candidate. A candidate that
// speculates runs as serve --speculate runs it (verify steps of K + 1 tokens per request that yield
// the expected accepted tokens, the drafter's weights and cache in memory); where the space tries
// speculation, the simulation goes on until one candidate with and one without speculation meet.

#include <cstdint>
#include <string>
#include <vector>

#include "roofline/llm/plan.hpp"
#include "roofline/serve/engine.hpp"
#include "roofline/serve/metrics.hpp"
#include "roofline/serve/pools.hpp"

namespace roofline {

struct PlanSimulationOptions {
  std::int64_t requests = 1000;  // per candidate
  double percentile = 90;        // of TTFT and TPOT, against the workload's targets
  std::size_t wanted = 6;        // stop once this many meet the targets (the chosen and runners-up)
                                 // (and, with speculation searched, one with and one without it)
  std::size_t most = 64;         // and after this many simulations in any case
  std::uint64_t seed = 0;        // the same arrivals (per replica rate aside) for every candidate
  EngineConfig engine;           // kv_blocks is set per candidate; max_batch capped at the space's
  double kv_memory_fraction = 0.9;
};

// A candidate's simulated latencies at the options' percentile, one replica.
struct SimulatedCandidate {
  PlanCandidate candidate;
  double ttft_s = 0;
  double tpot_s = 0;
  LatencyStats ttft, tpot;         // the whole distributions (mean, p50, p90, p99, max)
  double output_tokens_per_s = 0;  // one replica
  std::int64_t preemptions = 0;
  bool meets = false;
  std::string reason;  // the target missed, or why it could not run; empty when it meets both
};

struct PlanSimulation {
  std::vector<SimulatedCandidate> meeting;  // those that meet the targets, cheapest first
  std::vector<SimulatedCandidate> missing;  // the others simulated, in the closed form's order
  std::size_t simulated = 0;
  bool stopped_at_most = false;  // `most` simulations ran before `wanted` met the targets
};

// --- issue 18: disaggregated prefill/decode in plan --rps (docs/serve.md section 8). For each GPU,
// the cheapest feasible candidate of the closed form is the replica of both pools (its TP, PP and
// formats; its speculation drafts in the decode pool); the whole load (Poisson at --rps, the same requests for every
// ratio) runs through prefill and decode pools of Np and Nd such replicas (pools.hpp), from 1 and 1, raising the pool
// whose target is missed (Np for TTFT, Nd for TPOT; both when both are) until both percentiles
// meet or `most_replicas` of one pool do not: the ratio found is the fewest replicas in each pool
// that meet, where TTFT depends on the prefill pool and TPOT on the decode pool alone.
struct DisaggregatedCandidate {
  PlanCandidate replica;  // the layout of a replica of either pool (its closed-form figures)
  std::int64_t prefill_replicas = 0;
  std::int64_t decode_replicas = 0;
  std::int64_t gpus_total = 0;
  double usd_per_hour = 0;
  double usd_per_million_output_tokens = 0;
  double ttft_s = 0;  // at the percentile
  double tpot_s = 0;
  LatencyStats ttft, tpot, transfer;
  double output_tokens_per_s = 0;  // the whole deployment
  double prefill_utilisation = 0;
  double decode_utilisation = 0;
  std::size_t simulations = 0;
  bool meets = false;
  std::string reason;  // the target still missed at the largest ratio tried, or why it could not run
};

// One per GPU of the space with a feasible candidate, in the order of the space's GPUs.
[[nodiscard]] std::vector<DisaggregatedCandidate> simulate_disaggregated_candidates(
    const ModelSpec& model, const Workload& workload, const PlanSpace& space, const PlanResult& plan,
    const PlanSimulationOptions& options, std::int64_t most_replicas = 64);

// InputError on a percentile outside (0, 100] or fewer than one request.
[[nodiscard]] PlanSimulation simulate_candidates(const ModelSpec& model, const Workload& workload,
                                                 const PlanSpace& space, const PlanResult& plan,
                                                 const PlanSimulationOptions& options);

}  // namespace roofline
