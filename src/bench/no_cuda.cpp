// The benchmark runner of a build without CUDA: every run ends with exit code 3.
#include <fmt/format.h>

#include <algorithm>

#include "roofline/bench/bench_runner.hpp"
#include "roofline/core/error.hpp"

namespace roofline::bench {

bool cuda_benchmarks_built() {
  return false;
}

BenchRun run_benchmarks(const RunOptions& options, const HardwareRegistry& /*registry*/) {
  const bool collectives = std::any_of(options.suites.begin(), options.suites.end(),
                                       [](const SuiteInfo* s) { return s->name == "collectives"; });
  throw NoDeviceError(
      fmt::format("this roofline was built without CUDA (no nvcc at configure time), so it cannot run benchmarks{}; "
                  "rebuild where the CUDA toolkit is installed (cmake -DROOFLINE_CUDA=ON)",
                  collectives ? " (the collectives suite needs CUDA and NCCL)" : ""));
}

}  // namespace roofline::bench
