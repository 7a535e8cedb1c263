// Benchmark (not a test): how long `roofline plan` takes over the whole bundled GPU set, for every
// bundled model. Runs the same run_plan the CLI calls (enumeration, op model, report tables), a few
// times per model, and prints the median, minimum and maximum wall time. docs/results/plan-speed.md
// records it.
//
//   build/<preset>/bench/plan_bench [REPETITIONS]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "commands/plan.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/model_presets.hpp"

namespace {

using Clock = std::chrono::steady_clock;

roofline::cli::PlanOptions workload(const std::string& model) {
  roofline::cli::PlanOptions o;
  o.model.model = model;
  o.gpus = "all";
  o.rps = 10;
  o.prompt = 2048;
  o.output = 256;
  o.tpot_ms = 50;
  o.ttft_ms = 2000;
  o.prices = {"all=2"};
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const auto hardware = roofline::HardwareRegistry::bundled_only();
  const auto models = roofline::ModelRegistry::bundled_only();
  fmt::print("plan over all {} bundled GPUs: rps 10, prompt 2048, output 256, TPOT <= 50 ms, TTFT <= 2 s; {} runs\n",
             hardware.all().size(), repetitions);
  fmt::print("{:<16} {:>8} {:>9} {:>9} {:>11} {:>11} {:>11}\n", "model", "configs", "feasible", "decodes",
             "median [ms]", "min [ms]", "max [ms]");
  double worst = 0;
  for (const roofline::ModelSpec& model : models.all()) {
    std::vector<double> times;
    std::int64_t configs = 0;
    std::int64_t feasible = 0;
    std::int64_t decodes = 0;
    for (int i = 0; i < repetitions; ++i) {
      const auto start = Clock::now();
      try {
        const roofline::Report report = roofline::cli::run_plan(workload(model.id), hardware);
        const auto& counts = report.extra_results.at("counts");
        configs = counts.at("configurations").get<std::int64_t>();
        feasible = counts.at("feasible").get<std::int64_t>();
        decodes = counts.at("decode_evaluations").get<std::int64_t>();
      } catch (const roofline::InputError& e) {
        fmt::print("{}: {}\n", model.id, e.what());  // no feasible configuration: still timed
      }
      times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    const double median = times[times.size() / 2];
    worst = std::max(worst, times.back());
    fmt::print("{:<16} {:>8} {:>9} {:>9} {:>11.1f} {:>11.1f} {:>11.1f}\n", model.id, configs, feasible, decodes, median,
               times.front(), times.back());
  }
  // Reported, not judged: the exit code does not depend on the time (tests run this once to keep it working).
  fmt::print("slowest single run: {:.1f} ms (target: under 1000 ms)\n", worst);
  return 0;
}
