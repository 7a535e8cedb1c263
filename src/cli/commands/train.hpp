#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../common.hpp"
#include "../deployment_options.hpp"
#include "../model_options.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli {

struct TrainOptions {
  ModelOptions model;
  ParallelismFlags parallelism;
  int zero = 0;
  bool recompute = false;
  std::int64_t seq = 4096;
  std::int64_t micro_batch = 1;
  double reserve_gb = default_reserve_gb;
  std::vector<std::string> what_if;
  CommonOptions common;
};

[[nodiscard]] Report run_train(const TrainOptions& options, const HardwareRegistry& registry);

}  // namespace roofline::cli
