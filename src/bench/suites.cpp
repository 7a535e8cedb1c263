// The registry of benchmark suites: the one place that lists them, in the order `--suite all`
// runs them. A new suite adds its SuiteInfo here and its runner to src/bench/cuda/runner.cpp.
#include "roofline/bench.hpp"
#include "roofline/collectives_suite.hpp"
#include "roofline/compute_suite.hpp"
#include "roofline/layer_suite.hpp"
#include "roofline/memory_suite.hpp"

namespace roofline::bench {

std::span<const SuiteInfo> suites() {
  static const std::array<SuiteInfo, 4> all{memory::suite(), compute::suite(), layer::suite(), collectives::suite()};
  return all;
}

}  // namespace roofline::bench
