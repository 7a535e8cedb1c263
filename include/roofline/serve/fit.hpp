#pragma once

// The engine's fixed per-step cost learnt from a run (the "calibratable from a run"): the
// --step-overhead-us at which the simulation of a workload reproduces a measured output
// throughput. Whatever a step spends outside the op model (scheduling, sampling, launch gaps,
// host synchronisation) is charged once per step.

#include <cstdint>
#include <vector>

#include "roofline/serve/engine.hpp"

namespace roofline {

struct OverheadFit {
  double step_overhead_s = 0;
  double output_tokens_per_s = 0;  // simulated at that overhead
  int iterations = 0;
};

// Starts from engine.step_overhead_s = 0 and moves the overhead by (the time the measured
// throughput implies - the simulated duration) / steps until the simulated throughput is within
// 1e-6 of `measured_tokens_per_s` (one move at rate inf, where the schedule does not depend on the
// overhead). InputError when the op model alone is already slower than the run (no overhead >= 0
// fits) or when 50 moves do not converge.
[[nodiscard]] OverheadFit fit_step_overhead(const std::vector<RequestSpec>& requests, const EngineConfig& engine,
                                            StepCoster& coster, const ModelSpec& model, double measured_tokens_per_s);

}  // namespace roofline
