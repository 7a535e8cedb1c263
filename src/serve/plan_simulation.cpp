// The planner's cheapest candidates checked by simulation (roofline/serve/plan_simulation.hpp).
#include "roofline/serve/plan_simulation.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "roofline/core/error.hpp"
#include "roofline/serve/metrics.hpp"

namespace roofline {
namespace {

const GpuSpec& gpu_of(const PlanSpace& space, const std::string& id) {
  const auto it = std::find_if(space.gpus.begin(), space.gpus.end(), [&](const GpuSpec& g) { return g.id == id; });
  if (it == space.gpus.end()) throw InputError(fmt::format("plan: candidate GPU {} is not in the plan's space", id));
  return *it;
}

SimulatedCandidate simulate_one(const ModelSpec& model, const Workload& w, const PlanSpace& space,
                                const PlanCandidate& c, const PlanSimulationOptions& o) {
  SimulatedCandidate out{c, 0, 0, 0, 0, false, {}};
  const GpuSpec& gpu = gpu_of(space, c.gpu);
  const DeploymentConfig config = candidate_config(space, gpu, c);
  EngineConfig engine = o.engine;
  SyntheticWorkload load;
  load.requests = o.requests;
  load.prompt.a = static_cast<double>(w.prompt);
  load.output.a = static_cast<double>(w.output);
  load.arrivals = {Arrivals::Kind::poisson,
                   w.requests_per_s / static_cast<double>(std::max<std::int64_t>(1, c.replicas))};
  load.seed = o.seed;
  try {
    engine.kv_blocks = kv_cache(model, gpu, config, engine.block_size, o.kv_memory_fraction).blocks;
    StepCoster coster(model, gpu, config, space.time, std::max(engine.max_num_tokens, engine.max_batch));
    Simulation sim = simulate(synthetic_requests(load), engine, coster, model);
    Distribution ttft, tpot;
    for (const RequestRecord& r : sim.requests) {
      ttft.add(r.ttft_s());
      if (const std::optional<double> t = r.tpot_s()) tpot.add(*t);
    }
    out.ttft_s = ttft.percentile(o.percentile);
    out.tpot_s = tpot.percentile(o.percentile);
    out.output_tokens_per_s = measure(sim).output_tokens_per_s;
    out.preemptions = sim.engine.preemptions;
  } catch (const InputError& e) {
    out.reason = e.what();
    return out;
  }
  std::vector<std::string> missed;
  if (out.ttft_s > w.ttft_s)
    missed.push_back(fmt::format("p{:g} TTFT {:.1f} ms > {:g} ms", o.percentile, out.ttft_s * 1e3, w.ttft_s * 1e3));
  if (out.tpot_s > w.tpot_s)
    missed.push_back(fmt::format("p{:g} TPOT {:.2f} ms > {:g} ms", o.percentile, out.tpot_s * 1e3, w.tpot_s * 1e3));
  out.meets = missed.empty();
  out.reason = fmt::format("{}", fmt::join(missed, ", "));
  return out;
}

}  // namespace

std::vector<SimulatedCandidate> simulate_candidates(const ModelSpec& model, const Workload& workload,
                                                    const PlanSpace& space, const PlanResult& plan,
                                                    const PlanSimulationOptions& options) {
  if (!(options.percentile > 0 && options.percentile <= 100)) {
    throw InputError(fmt::format("--percentile {}: must be in (0, 100]", options.percentile));
  }
  if (options.requests < 1) throw InputError(fmt::format("--sim-requests {}: must be at least 1", options.requests));
  std::vector<SimulatedCandidate> out;
  const std::size_t count = std::min(options.candidates, plan.ranked.size());
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) out.push_back(simulate_one(model, workload, space, plan.ranked[i], options));
  // The planner ranked by cost already: a stable partition keeps its order on each side.
  std::stable_partition(out.begin(), out.end(), [](const SimulatedCandidate& s) { return s.meets; });
  return out;
}

}  // namespace roofline
