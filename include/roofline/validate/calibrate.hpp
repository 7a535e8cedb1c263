#pragma once

// Learning a calibration (roofline/calibration.hpp) from measured runs: every measured benchmark
// with a basis (roofline/validate.hpp) gives one point of its table.

#include <span>
#include <string>
#include <vector>

#include "roofline/basis/calibration.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/validate/layer_check.hpp"
#include "roofline/validate/measured.hpp"

namespace roofline {

// The ceilings the runs measured (the best of each where several runs measured one).
[[nodiscard]] MeasuredCeilings measured_ceilings(std::span<const MeasuredRun> runs);

// A benchmark that did not become a point, and why.
struct Skipped {
  std::string id;
  std::string reason;
};

struct CalibrationBuild {
  Calibration calibration;
  std::vector<Skipped> skipped;
  std::vector<std::string> notes;  // tables learnt without the second axis their basis offers
};

// Learns the tables from runs of one GPU (all runs must name the same device; the caller checks
// it against `gpu`), and the collective tables from the collectives suite's results. Throws
// InputError when no benchmark gives a point.
[[nodiscard]] CalibrationBuild build_calibration(std::span<const MeasuredRun> runs, const GpuSpec& gpu);

// The provenance a bench report records in its device and run rows (GPU, driver, CUDA runtime and
// cuBLAS versions, clocks at start and end, the commit that measured it); nullopt for a report
// without a device row (compute selftest lines). Fields the run lacks read not_recorded.
[[nodiscard]] std::optional<RunProvenance> run_provenance(const nlohmann::json& bench_report);

// The error band a layer check supports: how many of its timed layers the calibration predicts
// within `within_pct` (|calibrated / measured - 1|), and the worst; nullopt when none was predicted.
[[nodiscard]] std::optional<ErrorBand> layer_error_band(std::span<const LayerCheck> layers, double within_pct,
                                                        const std::string& run);

}  // namespace roofline
