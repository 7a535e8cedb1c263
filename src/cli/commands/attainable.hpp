#pragma once

#include <string>
#include <vector>

#include "../common.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli {

struct AttainableOptions {
  std::string gpus;
  std::string intensities;  // --ai: one or more FLOP/byte values, comma-separated
  std::string dtype = "bf16";
  std::vector<std::string> what_if;
  CommonOptions common;
};

[[nodiscard]] Report run_attainable(const AttainableOptions& options, const HardwareRegistry& registry);

}  // namespace roofline::cli
