// Benchmark (not a test): how long `roofline plan --pareto` takes over spaces of 50,000 to 470,000
// deployments (the largest: DeepSeek-R1 aggregated and disaggregated). Runs the same run_plan the CLI calls (parse the
// flags, sweep, time every feasible point, the front, the report tables) a few times per space, and prints the points
// swept, the median, minimum and maximum wall time and the points per second. docs/results/plan-pareto-sweep.md records
// it.
//
//   build/<preset>/speed/pareto_bench [REPETITIONS]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "commands/plan.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Space {
  std::string label;
  roofline::cli::PlanOptions options;
};

// Every bundled GPU, the default TP (1, 2, 4, 8), PP (1, 2, 4), weight (4) and KV (2) formats and
// batches (1 to 1,024 by powers of two, 11), EP and attention DP by default where the model is MoE.
roofline::cli::PlanOptions all_gpus(const std::string& model, std::int64_t prompt, std::int64_t output) {
  roofline::cli::PlanOptions o;
  o.pareto = true;
  o.model.model = model;
  o.gpus = "all";
  o.prompt = prompt;
  o.output = output;
  return o;
}

std::vector<Space> spaces() {
  std::vector<Space> out;
  Space r1{"deepseek-r1, MTP K 1,2,3", all_gpus("deepseek-r1", 1024, 2048)};
  // The four weight formats named (else the checkpoint's fp8 alone is tried: a quarter of the space).
  r1.options.weights_given = true;
  r1.options.speculate = "1,2,3";
  r1.options.acceptance = "0.92,0.717,0.364";
  out.push_back(r1);
  // The same space with every point also a disaggregated pair of pools: twice the points, each decode
  // point paired with the GPU's kept prefill pools at 2 x 8 ratios (arithmetic, no step timed).
  Space r1_pools{"deepseek-r1, MTP K 1,2,3, disaggregated", r1.options};
  r1_pools.options.disaggregate = true;
  out.push_back(r1_pools);
  out.push_back({"mixtral-8x7b", all_gpus("mixtral-8x7b", 1024, 256)});
  Space llama{"llama-3.1-70b, draft llama-3.1-8b K 2,4", all_gpus("llama-3.1-70b", 2048, 256)};
  llama.options.speculate = "2,4";
  llama.options.acceptance = "0.8";
  llama.options.draft_model = "llama-3.1-8b";
  out.push_back(llama);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const auto hardware = roofline::HardwareRegistry::bundled_only();
  fmt::print("plan --pareto over all {} bundled GPUs; {} runs per space\n", hardware.all().size(), repetitions);
  fmt::print("{:<42} {:>8} {:>8} {:>6} {:>9} {:>9} {:>11} {:>9} {:>9} {:>10} {:>8} {:>14}\n", "space", "points",
             "feasible", "front", "steps", "pairings", "median [s]", "min [s]", "max [s]", "points/s", "CPU [s]",
             "points/CPU s");
  double worst = 0;
  for (const Space& space : spaces()) {
    std::vector<double> times;
    std::vector<double> cpu;  // this process's CPU time: on a shared machine, the wall time's lower bound
    std::int64_t swept = 0;
    std::int64_t feasible = 0;
    std::int64_t front = 0;
    std::int64_t steps = 0;
    std::int64_t pairings = 0;
    for (int i = 0; i < repetitions; ++i) {
      const auto start = Clock::now();
      const std::clock_t cpu_start = std::clock();
      const roofline::Report report = roofline::cli::run_plan(space.options, hardware);
      cpu.push_back(static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC);
      times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
      const auto& counts = report.extra_results.at("counts");
      swept = counts.at("swept").get<std::int64_t>();
      feasible = counts.at("feasible").get<std::int64_t>();
      front = counts.at("on_front").get<std::int64_t>();
      steps = counts.at("decode_evaluations").get<std::int64_t>();
      pairings = counts.at("pool_pairings").get<std::int64_t>();
    }
    std::sort(times.begin(), times.end());
    std::sort(cpu.begin(), cpu.end());
    const double median = times[times.size() / 2];
    const double cpu_median = cpu[cpu.size() / 2];
    worst = std::max(worst, times.back());
    fmt::print("{:<42} {:>8} {:>8} {:>6} {:>9} {:>9} {:>11.3f} {:>9.3f} {:>9.3f} {:>10.0f} {:>8.3f} {:>14.0f}\n",
               space.label, swept, feasible, front, steps, pairings, median, times.front(), times.back(),
               static_cast<double>(swept) / median, cpu_median, static_cast<double>(swept) / cpu_median);
  }
  // Reported, not judged: the exit code does not depend on the time (tests run this once to keep it working).
  fmt::print("slowest single run: {:.3f} s (target: 100,000 deployments in under 10 s on one core)\n", worst);
  return 0;
}
