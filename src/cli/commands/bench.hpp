#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../common.hpp"
#include "roofline/bench/bench.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli {

struct BenchOptions {
  std::string suite = "all";
  bool quick = false;
  bool list = false;
  bool check_only = false;
  std::vector<std::string> filters;
  bench::TimingFlags timing;
  std::optional<std::uint64_t> seed;
  int device = 0;
  double timeout_s = 60;
  std::optional<std::string> gpu;        // the hardware file to report against
  std::optional<std::string> json_path;  // also write the JSON report here
  bool mpi = false;                      // one rank per GPU (also on when started by mpirun with --suite collectives)
  bool mpi_selftest = false;             // only check that the MPI ranks talk
  CommonOptions common;
};

// The inputs section of bench reports (flags and the command line).
[[nodiscard]] nlohmann::json bench_inputs(const BenchOptions& options);

// --list: the cases that would run (no GPU needed).
[[nodiscard]] Report run_bench_list(const BenchOptions& options);

}  // namespace roofline::cli
