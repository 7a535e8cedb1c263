// The planner's candidates ranked by simulation (roofline/serve/plan_simulation.hpp).
#include "roofline/serve/plan_simulation.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "roofline/core/error.hpp"

namespace roofline {
namespace {

const GpuSpec& gpu_of(const PlanSpace& space, const std::string& id) {
  const auto it = std::find_if(space.gpus.begin(), space.gpus.end(), [&](const GpuSpec& g) { return g.id == id; });
  if (it == space.gpus.end()) throw InputError(fmt::format("plan: candidate GPU {} is not in the plan's space", id));
  return *it;
}

SimulatedCandidate simulate_one(const ModelSpec& model, const Workload& w, const PlanSpace& space,
                                const PlanCandidate& c, const PlanSimulationOptions& o) {
  SimulatedCandidate out;
  out.candidate = c;
  const GpuSpec& gpu = gpu_of(space, c.gpu);
  const CandidateDeployment deployment = candidate_deployment(space, gpu, c);
  EngineConfig engine = o.engine;
  engine.max_batch = std::min(engine.max_batch, space.max_batch);
  SyntheticWorkload load;
  load.requests = o.requests;
  load.prompt.a = static_cast<double>(w.prompt);
  load.output.a = static_cast<double>(w.output);
  load.arrivals = {Arrivals::Kind::poisson,
                   w.requests_per_s / static_cast<double>(std::max<std::int64_t>(1, c.replicas))};
  load.seed = o.seed;
  try {
    engine.kv_blocks = kv_cache(model, gpu, deployment.config, engine.block_size, o.kv_memory_fraction).blocks;
    StepCoster coster(model, gpu, deployment.config, deployment.time,
                      std::max(engine.max_num_tokens, engine.max_batch));
    SyntheticSource source(load);
    MetricsRecorder recorder;
    EngineRun run =
        simulate(source, engine, coster, model, [&](std::size_t, const RequestRecord& r) { recorder.add(r); });
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

}  // namespace

PlanSimulation simulate_candidates(const ModelSpec& model, const Workload& workload, const PlanSpace& space,
                                   const PlanResult& plan, const PlanSimulationOptions& options) {
  if (!(options.percentile > 0 && options.percentile <= 100)) {
    throw InputError(fmt::format("--percentile {}: must be in (0, 100]", options.percentile));
  }
  if (options.requests < 1) throw InputError(fmt::format("--sim-requests {}: must be at least 1", options.requests));
  PlanSimulation out;
  // plan.ranked is in order of cost already: the first `wanted` that meet are the cheapest that do.
  for (const PlanCandidate& c : plan.ranked) {
    if (out.meeting.size() >= options.wanted) break;
    if (out.simulated >= options.most) {
      out.stopped_at_most = true;
      break;
    }
    SimulatedCandidate s = simulate_one(model, workload, space, c, options);
    ++out.simulated;
    (s.meets ? out.meeting : out.missing).push_back(std::move(s));
  }
  return out;
}

}  // namespace roofline
