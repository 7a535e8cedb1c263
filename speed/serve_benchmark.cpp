// Benchmark (not a test): how long `roofline serve` takes on the two workloads: 10,000
// requests of 2048/2048 for Llama 3.1 70B, FP8, TP 8 on H100 at rate inf, and a 100,000-request
// trace (Poisson at 20 requests/s, lognormal prompts and outputs, written here from a fixed seed),
// and the same trace at 10 requests/s, below the deployment's capacity.
// Runs the same run_serve the CLI calls (workload, simulation, report tables), a few times each,
// and prints the median, minimum and maximum wall time; then runs each once more in a child process
// and prints that process's peak resident set (getrusage of the child: the memory of one run alone),
// beside the most requests it held in flight. docs/results/serve-speed.md records it.
//
//   build/<preset>/speed/serve_bench [REPETITIONS] [SCALE]   (SCALE: a fraction of the requests)
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "commands/serve.hpp"
#include "roofline/serve/workload.hpp"

namespace {

using Clock = std::chrono::steady_clock;

roofline::cli::ServeOptions deployment() {
  roofline::cli::ServeOptions o;
  o.model.model = "llama-3.1-70b";
  o.parallelism.gpu = "h100-sxm";
  o.parallelism.tp = 8;
  o.formats.weights = "fp8";
  o.formats.kv = "fp8";
  return o;
}

std::string write_trace(std::int64_t requests, double rate) {
  roofline::SyntheticWorkload w;
  w.requests = requests;
  w.prompt = roofline::parse_length_distribution("lognormal:2048,1024", "prompt");
  w.output = roofline::parse_length_distribution("lognormal:512,256", "output");
  w.arrivals = {roofline::Arrivals::Kind::poisson, rate};
  w.seed = 1;
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / fmt::format("roofline-serve-bench-{}-{:g}.csv", requests, rate);
  std::ofstream out(path);
  out << "arrival_s,prompt,output\n";
  for (const roofline::RequestSpec& r : roofline::synthetic_requests(w)) {
    out << fmt::format("{},{},{}\n", r.arrival_s, r.prompt, r.output);
  }
  return path.string();
}

struct Case {
  std::string name;
  roofline::cli::ServeOptions options;
};

// The peak resident set of one run in a child process, in MB (ru_maxrss is in KiB on Linux).
double peak_rss_mb(const Case& c, const roofline::HardwareRegistry& hardware) {
  const pid_t child = fork();
  if (child == 0) {
    (void)roofline::cli::run_serve(c.options, hardware);
    _exit(0);
  }
  int status = 0;
  rusage usage{};
  if (child < 0 || wait4(child, &status, 0, &usage) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return -1;
  }
  return static_cast<double>(usage.ru_maxrss) * 1024.0 / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const double scale = argc > 2 ? std::clamp(std::atof(argv[2]), 1e-4, 1.0) : 1.0;
  const auto hardware = roofline::HardwareRegistry::bundled_only();
  const auto count = [&](double n) { return std::max<std::int64_t>(1, static_cast<std::int64_t>(n * scale)); };

  Case offline{fmt::format("{} x 2048/2048, rate inf", count(10000)), deployment()};
  offline.options.prompt = 2048;
  offline.options.output = 2048;
  offline.options.requests = count(10000);
  offline.options.rate = "inf";
  Case trace{fmt::format("trace of {}, Poisson 20/s", count(100000)), deployment()};
  trace.options.trace = write_trace(count(100000), 20.0);
  // Below the deployment's capacity (about 14 requests/s): few in flight however long the trace.
  Case steady{fmt::format("trace of {}, Poisson 10/s", count(100000)), deployment()};
  steady.options.trace = write_trace(count(100000), 10.0);

  fmt::print("serve: llama-3.1-70b, fp8 weights and KV, TP 8 on h100-sxm; {} runs each\n", repetitions);
  fmt::print("{:<32} {:>8} {:>12} {:>11} {:>9} {:>9} {:>10} {:>13}\n", "workload", "steps", "output tok/s",
             "median [s]", "min [s]", "max [s]", "in flight", "peak RSS [MB]");
  for (const Case& c : {offline, trace, steady}) {
    std::vector<double> times;
    std::int64_t steps = 0;
    std::int64_t in_flight = 0;
    double tokens_per_s = 0;
    for (int i = 0; i < repetitions; ++i) {
      const auto start = Clock::now();
      const roofline::Report report = roofline::cli::run_serve(c.options, hardware);
      times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
      steps = report.extra_results.at("engine").at("steps").get<std::int64_t>();
      tokens_per_s = report.extra_results.at("output_tokens_per_s").get<double>();
      in_flight = report.extra_results.at("engine").at("requests_in_flight_peak").get<std::int64_t>();
    }
    std::sort(times.begin(), times.end());
    fmt::print("{:<32} {:>8} {:>12.0f} {:>11.3f} {:>9.3f} {:>9.3f} {:>10} {:>13.1f}\n", c.name, steps, tokens_per_s,
               times[times.size() / 2], times.front(), times.back(), in_flight, peak_rss_mb(c, hardware));
  }
  std::filesystem::remove(*trace.options.trace);
  std::filesystem::remove(*steady.options.trace);
  return 0;
}
