#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "../common.hpp"
#include "roofline/basis/calibration.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/report/report.hpp"
#include "roofline/validate/collective_validation.hpp"
#include "roofline/validate/gate.hpp"
#include "roofline/validate/layer_check.hpp"
#include "roofline/validate/measured.hpp"
#include "roofline/validate/prediction.hpp"

namespace roofline::cli {

struct ValidateOptions {
  std::vector<std::string> measured;       // bench reports or compute selftest JSON lines
  std::optional<std::string> calibration;  // CAL.json
  std::optional<std::string> baseline;     // compare with this run instead of predicting
  std::string tolerance = "5%";
  bool tolerance_given = false;
  std::optional<std::string> max_error;        // the gate: |calibrated error| above it fails (exit 1)
  std::optional<std::string> min_of_roofline;  // the gate: a share of the roofline below it fails
  std::vector<std::string> gate_kinds;         // the kinds of result the gate judges (all without it)
  std::optional<std::string> gpu;              // the hardware file, when the run names none
  std::vector<std::string> filters;            // keep benchmarks whose id contains one of these
  std::string suite = "memory";                // what to run when no --measured is given
  bool quick = false;                          // ... and how
  std::optional<std::string> json_out;         // ... and where to keep that run's bench report
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

// Everything validate predicts for runs, before it is rendered: each benchmark, each decoder
// layer, each collective, on the GPU the runs were measured on.
struct Validation {
  const GpuSpec* gpu = nullptr;
  Roofs roofs;
  std::vector<Prediction> predictions;
  std::vector<LayerCheck> layers;
  LinkSpec link;
  std::vector<CollectiveComparison> collectives;
};
[[nodiscard]] Validation validate_runs(std::span<const MeasuredRun> runs, const HardwareRegistry& registry,
                                       const std::optional<std::string>& gpu, const Calibration* calibration);

// Predicted vs measured for every benchmark of the runs (kind "validate").
[[nodiscard]] Report run_validate(const ValidateOptions& options, std::span<const MeasuredRun> runs,
                                  const Validation& validation, const Calibration* calibration);

// The limits of --max-error and --min-of-roofline (bad input: InputError naming the flag).
[[nodiscard]] GateLimits gate_limits(const ValidateOptions& options);

// The gate's sections added to a validate or regression report: the limits among its inputs,
// a summary per limit (table "gate"), the offenders with their numbers ("offenders"), the results
// not checked and why ("not_checked"), a note that counts the offenders, and results.gate_passed.
void add_gate(Report& report, const GateOutcome& gate);

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
