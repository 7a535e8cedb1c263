#pragma once

// The planner's candidates checked by simulation (plan --simulate): each of the cheapest feasible
// candidates of plan_deployment runs as one replica of its deployment under Poisson arrivals at
// its share of the load (rps / replicas), with the workload's fixed lengths, through the engine
// of engine.hpp; it meets the targets when the chosen percentile of TTFT and of TPOT does. The
// closed form prunes, the simulation decides: queueing, chunked prefill and preemptions count.

#include <cstdint>
#include <string>
#include <vector>

#include "roofline/llm/plan.hpp"
#include "roofline/serve/engine.hpp"

namespace roofline {

struct PlanSimulationOptions {
  std::int64_t requests = 1000;  // per candidate
  double percentile = 90;        // of TTFT and TPOT, against the workload's targets
  std::size_t candidates = 20;   // the cheapest feasible ones, in the planner's order
  std::uint64_t seed = 0;        // the same arrivals for every candidate
  EngineConfig engine;           // kv_blocks is set per candidate
  double kv_memory_fraction = 0.9;
};

struct SimulatedCandidate {
  PlanCandidate candidate;
  double ttft_s = 0;  // at the percentile
  double tpot_s = 0;
  double output_tokens_per_s = 0;  // one replica
  std::int64_t preemptions = 0;
  bool meets = false;
  std::string reason;  // the target missed, or why it could not run; empty when it meets both
};

// Those that meet the targets first, cheapest first (the planner's order among equals), then the
// others in the planner's order. Throws InputError on a percentile outside (0, 100] or no request.
[[nodiscard]] std::vector<SimulatedCandidate> simulate_candidates(const ModelSpec& model, const Workload& workload,
                                                                  const PlanSpace& space, const PlanResult& plan,
                                                                  const PlanSimulationOptions& options);

}  // namespace roofline
