#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "../common.hpp"
#include "roofline/basis/calibration.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/report/report.hpp"
#include "roofline/validate/measured.hpp"

namespace roofline::cli {

struct ValidateOptions {
  std::vector<std::string> measured;       // bench reports or compute selftest JSON lines
  std::optional<std::string> calibration;  // CAL.json
  std::optional<std::string> baseline;     // compare with this run instead of predicting
  std::string tolerance = "5%";
  bool tolerance_given = false;
  std::optional<std::string> gpu;       // the hardware file, when the run names none
  std::vector<std::string> filters;     // keep benchmarks whose id contains one of these
  std::string suite = "memory";         // what to run when no --measured is given
  bool quick = false;                   // ... and how
  std::optional<std::string> json_out;  // ... and where to keep that run's bench report
  CommonOptions common;
};

struct CalibrateOptions {
  std::vector<std::string> measured;
  std::string output;  // the calibration file
  std::optional<std::string> gpu;
  std::vector<std::string> filters;
  std::optional<std::string> layer_check;  // a layer-suite run: its out-of-sample error band goes into the file
  CommonOptions common;                    // --format of the summary on stdout (its -o is the calibration file)
};

// Measured runs from files, keeping the benchmarks whose id contains one of `filters` (all
// without filters); a filter that keeps nothing is bad input.
[[nodiscard]] std::vector<MeasuredRun> load_runs(const std::vector<std::string>& files,
                                                 const std::vector<std::string>& filters);
[[nodiscard]] std::vector<MeasuredRun> filter_runs(std::vector<MeasuredRun> runs,
                                                   const std::vector<std::string>& filters);

// Predicted vs measured for every benchmark of the runs (kind "validate").
[[nodiscard]] Report run_validate(const ValidateOptions& options, std::span<const MeasuredRun> runs,
                                  const HardwareRegistry& registry, const Calibration* calibration);

// Two runs benchmark by benchmark (kind "regression"); `regressed` is set when any benchmark got
// slower or failed.
[[nodiscard]] Report run_regression(const ValidateOptions& options, const MeasuredRun& baseline,
                                    const MeasuredRun& measured, bool& regressed);

// The calibration of the runs and its summary (kind "calibrate").
struct CalibrateResult {
  Calibration calibration;
  Report report;
};
[[nodiscard]] CalibrateResult run_calibrate(const CalibrateOptions& options, std::span<const MeasuredRun> runs,
                                            const HardwareRegistry& registry);

}  // namespace roofline::cli
