#pragma once

// Measured against predicted: for every benchmark of a run, the bare roofline's time on the GPU
// of the run, the achieved fraction of it, and (given a calibration) the calibrated prediction;
// then a summary per pattern (stream, access.strided, gemv, gemm, attention, ...).

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "roofline/basis/calibration.hpp"
#include "roofline/validate/measured.hpp"
#include "roofline/validate/validate.hpp"

namespace roofline {

struct Prediction {
  const MeasuredRun* run = nullptr;
  const Measurement* measurement = nullptr;
  std::optional<Basis> basis;  // unset: no prediction, see `none`
  NoBasis none;
  IdealTime roofline;                        // the bare roofline on the GPU's roofs
  std::optional<CalibratedTime> calibrated;  // with a calibration whose table applies
  std::string not_calibrated;                // why not, when a calibration was given

  [[nodiscard]] bool predicted() const { return basis.has_value() && measurement->timed(); }
  // roofline time / measured median: the fraction of the roofline the benchmark achieved
  [[nodiscard]] std::optional<double> achieved() const;
  // (predicted - measured) / measured
  [[nodiscard]] std::optional<double> roofline_error() const;
  [[nodiscard]] std::optional<double> calibrated_error() const;
};

// Every measurement of the runs (those that `keep` accepts), with its prediction on `roofs`;
// calibrated through each implementation's own table when `calibration` is given.
[[nodiscard]] std::vector<Prediction> predict(std::span<const MeasuredRun> runs, const Roofs& roofs,
                                              const Calibration* calibration);

struct PatternSummary {
  std::string pattern;
  int benchmarks = 0;  // timed, with a prediction
  double achieved_median = 0;
  double achieved_min = 0;
  double achieved_max = 0;
  int calibrated = 0;                                 // with a calibrated prediction
  std::optional<double> calibrated_max_abs_error;     // the worst |error|
  std::optional<double> calibrated_median_abs_error;  //
  int within_10pct = 0;                               // calibrated |error| <= 10%
};

// One summary per pattern, in order of first appearance.
[[nodiscard]] std::vector<PatternSummary> summarize_patterns(std::span<const Prediction> predictions);

}  // namespace roofline
