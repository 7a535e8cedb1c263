#pragma once

// The model's side of a measured run: which GPU file it was measured on, and each benchmark's
// basis rebuilt from what the run recorded. The basis itself (Roofs, Basis, ideal_time and the
// bases of operations) is roofline/basis.hpp.

#include <optional>
#include <span>
#include <string>

#include "roofline/basis/basis.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/validate/measured.hpp"

namespace roofline {

// ---- The GPU of measured runs ----
// The hardware file every run was measured on: `gpu_flag` when given, else the id the run
// recorded, else the file its device name matches (bench's rule). Runs of different devices, or
// a device no file matches, throw InputError naming the file.
[[nodiscard]] const GpuSpec& gpu_of_runs(std::span<const MeasuredRun> runs, const HardwareRegistry& registry,
                                         const std::optional<std::string>& gpu_flag);

// ---- Bases of benchmarks ----
// Rebuilt by the suite that recorded it (SuiteInfo::basis) from the parameters the run recorded,
// never from today's case table: a result keeps its prediction when a suite's sizes change. A
// parameter the basis needs and the run did not record is an InputError naming the file, the
// benchmark and the parameter; a memory result whose recorded byte count no longer matches the
// model's is noted.
[[nodiscard]] BasisOrReason benchmark_basis(const Measurement& m);

}  // namespace roofline
