#pragma once

#include <optional>
#include <string>
#include <vector>

#include "../common.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli {

struct RidgeOptions {
  std::string gpus;                  // a list, or "all" for the memory-wall table
  std::optional<std::string> dtype;  // one format; unset: every format the GPU states
  std::vector<std::string> what_if;  // --set
  CommonOptions common;
};

[[nodiscard]] Report run_ridge(const RidgeOptions& options, const HardwareRegistry& registry);

}  // namespace roofline::cli
