#pragma once

#include <string>
#include <vector>

#include "../common.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli {

struct HwShowOptions {
  std::string gpu;
  std::vector<std::string> what_if;
  CommonOptions common;
};

struct HwCheckOptions {
  std::vector<std::string> files;  // none: every GPU the registry knows
  double tolerance_percent = 3.0;
  CommonOptions common;
};

[[nodiscard]] Report run_hw_list(const HardwareRegistry& registry);
[[nodiscard]] Report run_hw_show(const HwShowOptions& options, const HardwareRegistry& registry);
// The report, and whether any file was invalid (exit code 1).
struct HwCheckResult {
  Report report;
  bool any_invalid = false;
};
[[nodiscard]] HwCheckResult run_hw_check(const HwCheckOptions& options, const HardwareRegistry& registry);

}  // namespace roofline::cli
