#pragma once

// Runs benchmark suites on the GPU. The CUDA part of the build implements this
// (src/bench/cuda/); a build without CUDA links src/bench/no_cuda.cpp instead, whose
// run_benchmarks() throws NoDeviceError (exit code 3).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "roofline/bench/bench.hpp"
#include "roofline/bench/mpi.hpp"
#include "roofline/hardware/hardware.hpp"

namespace roofline::bench {

struct RunOptions {
  std::vector<const SuiteInfo*> suites;
  bool quick = false;
  std::vector<std::string> filters;   // run a case when its id contains one of these (none: all)
  TimingFlags timing;                 // --samples, --min-samples, --min-time, --max-noise, --keep-throttled
  std::optional<std::uint64_t> seed;  // default: drawn from the clock, recorded in the report
  int device = 0;
  double timeout_s = 60;
  bool check_only = false;            // verify every case, time nothing (see TimingPolicy)
  const GpuSpec* hardware = nullptr;  // --gpu: the spec file to report against (else matched by name)
  // Under MPI (collectives suite only): this rank uses GPU local_rank % devices and every rank
  // returns the same results.
  const mpi::Session* mpi = nullptr;
};

// Whether this binary was built with the CUDA benchmarks.
[[nodiscard]] bool cuda_benchmarks_built();

// Detects the device, runs the selected cases with progress on stderr, and returns every
// result. Throws NoDeviceError when there is no usable GPU or no CUDA build.
[[nodiscard]] BenchRun run_benchmarks(const RunOptions& options, const HardwareRegistry& registry);

// Whether a case id passes the --filter list.
[[nodiscard]] bool selected_by_filters(std::string_view id, const std::vector<std::string>& filters);

}  // namespace roofline::bench
