// The benchmark runner of a build without CUDA: every run ends with exit code 3.
#include "roofline/bench_runner.hpp"
#include "roofline/error.hpp"

namespace roofline::bench {

bool cuda_benchmarks_built() {
  return false;
}

BenchRun run_benchmarks(const RunOptions& /*options*/, const HardwareRegistry& /*registry*/) {
  throw NoDeviceError(
      "this roofline was built without CUDA (no nvcc at configure time), so it cannot run benchmarks; "
      "rebuild where the CUDA toolkit is installed (cmake -DROOFLINE_CUDA=ON)");
}

}  // namespace roofline::bench
