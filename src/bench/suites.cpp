// The registry of benchmark suites: the one place that lists them. A new suite (GEMM,
// attention) adds its SuiteInfo here and its runner to src/bench/cuda/runner.cpp.
#include "roofline/bench.hpp"
#include "roofline/memory_suite.hpp"

namespace roofline::bench {

std::span<const SuiteInfo> suites() {
  static const std::array<SuiteInfo, 1> all{memory::suite()};
  return all;
}

}  // namespace roofline::bench
