#pragma once

#include <optional>
#include <string>
#include <vector>

#include "../common.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/profile/ncu.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli {

struct ProfileOptions {
  std::vector<std::string> program;     // CMD ARGS... (after --)
  std::optional<std::string> from_csv;  // read a saved `ncu --page raw --csv` instead of running ncu
  std::optional<std::string> ncu;       // the ncu executable (default: PATH, then /usr/local/cuda/bin)
  std::optional<std::string> gpu;       // the hardware file, when the device name matches none
  std::optional<std::string> kernel;    // ncu --kernel-name regex:...
  std::optional<int> launch_count;      // ncu --launch-count
  std::optional<int> launch_skip;       // ncu --launch-skip
  std::optional<std::string> chart;     // also draw the kernels on a roofline chart (SVG)
  std::optional<std::string> save_csv;  // also keep ncu's raw output (for --from-csv later)
  CommonOptions common;
};

// The ncu command line `profile` runs (without the program).
[[nodiscard]] std::vector<std::string> ncu_arguments(const ProfileOptions& options);

// The report of parsed kernels (kind "profile"); `source` says where the table came from.
[[nodiscard]] Report profile_report(const ProfileOptions& options, const std::vector<ncu::Kernel>& kernels,
                                    const GpuSpec& gpu, const std::string& source);

// The kernels' roofline chart on `gpu` (SVG).
[[nodiscard]] std::string profile_chart(const std::vector<ncu::Kernel>& kernels, const GpuSpec& gpu);

}  // namespace roofline::cli
