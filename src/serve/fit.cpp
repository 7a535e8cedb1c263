// The per-step overhead that reproduces a measured throughput (roofline/serve/fit.hpp).
#include "roofline/serve/fit.hpp"

#include <fmt/format.h>

#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/serve/metrics.hpp"

namespace roofline {

OverheadFit fit_step_overhead(const std::vector<RequestSpec>& requests, const EngineConfig& engine, StepCoster& coster,
                              const ModelSpec& model, double measured_tokens_per_s) {
  if (!(measured_tokens_per_s > 0) || !std::isfinite(measured_tokens_per_s)) {
    throw InputError(fmt::format("--fit-step-overhead {}: must be a throughput > 0 tokens/s", measured_tokens_per_s));
  }
  EngineConfig trial = engine;
  trial.step_overhead_s = 0;
  OverheadFit fit;
  for (fit.iterations = 1; fit.iterations <= 50; ++fit.iterations) {
    Simulation sim = simulate(requests, trial, coster, model);
    const ServeMetrics m = measure(sim);
    fit.step_overhead_s = trial.step_overhead_s;
    fit.output_tokens_per_s = m.output_tokens_per_s;
    if (fit.iterations == 1 && m.output_tokens_per_s < measured_tokens_per_s) {
      throw InputError(fmt::format(
          "--fit-step-overhead {:g}: the op model alone gives {:.0f} tokens/s, already slower than the run; no "
          "overhead >= 0 reproduces it",
          measured_tokens_per_s, m.output_tokens_per_s));
    }
    if (std::abs(m.output_tokens_per_s / measured_tokens_per_s - 1.0) <= 1e-6) return fit;
    // The duration the measured throughput implies, spread over this schedule's steps.
    const double implied = static_cast<double>(m.output_tokens) / measured_tokens_per_s;
    trial.step_overhead_s =
        std::max(0.0, trial.step_overhead_s + (implied - m.duration_s) / static_cast<double>(sim.engine.steps));
  }
  throw InputError(
      fmt::format("--fit-step-overhead {:g}: no overhead reproduces it within 50 simulations", measured_tokens_per_s));
}

}  // namespace roofline
