#pragma once

// Learning a calibration (roofline/calibration.hpp) from measured runs: every measured benchmark
// with a basis (roofline/validate.hpp) gives one point of its table.

#include <span>
#include <string>
#include <vector>

#include "roofline/basis/calibration.hpp"
#include "roofline/hardware/hardware.hpp"
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
};

// Learns the tables from runs of one GPU (all runs must name the same device; the caller checks
// it against `gpu`), and the collective tables from the collectives suite's results. Throws
// InputError when no benchmark gives a point.
[[nodiscard]] CalibrationBuild build_calibration(std::span<const MeasuredRun> runs, const GpuSpec& gpu);

}  // namespace roofline
