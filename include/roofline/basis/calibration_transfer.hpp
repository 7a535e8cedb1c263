#pragma once

// Bundled calibrations (calibrations/*.json, compiled into the binary) and their transfer to a GPU
// of the same architecture that has none (docs/calibration.md derives the rules):
//   - a table's efficiency is a property of the problem, not of its roofline time: each point is
//     moved to x = the roofline time of its problem (FLOPs, bytes, peak class) on the target's roofs;
//   - what a point lost below the best efficiency of its curve (its table, at its series) is
//     treated as fixed cost (launch, fill, tail), which runs at the SM clock: it is kept in absolute
//     time, scaled by source clock / target clock; the rest scales with the roof. On the target
//     time = x_target / best + (measured - x_source / best) x clock_source / clock_target;
//   - measured ceilings scale by the ratio of the datasheet figures (HBM by bandwidth, each peak
//     by its peak, L2 and shared memory by SMs x clock);
//   - absolute times do not transfer; measured collectives only where the target has the same
//     scale-up link (name and bandwidth), else the ring model on the target's links;
//   - the validation's band does not transfer: a transferred band is data of its own
//     (calibrations/transfer/bands.json).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/basis/calibration.hpp"
#include "roofline/hardware/hardware.hpp"

namespace roofline {

// Same vendor and architecture (the hardware files' "architecture": Hopper, Blackwell, CDNA 3).
[[nodiscard]] bool same_architecture(const GpuSpec& a, const GpuSpec& b);

// `source` (learnt on `source_gpu`) carried to `target` by the rules above. Points without their
// problem (files written before calibrate recorded it) or whose peak class the target does not
// state are dropped and counted in TransferOrigin.
[[nodiscard]] Calibration transfer_calibration(const Calibration& source, const GpuSpec& source_gpu,
                                               const GpuSpec& target);

// The GPU ids of the bundled calibrations (calibrations/<id>.json), sorted.
[[nodiscard]] std::vector<std::string> bundled_calibration_gpus();
// A bundled calibration by its GPU id; nullopt when none is bundled for it.
[[nodiscard]] std::optional<Calibration> bundled_calibration(std::string_view gpu_id);

// The error band a transfer from one GPU to another is known to hold (calibrations/transfer/bands.json,
// from a comparison with published results); nullopt where none was established.
[[nodiscard]] std::optional<std::string> transfer_band(std::string_view from_gpu, std::string_view to_gpu);

// What --calibration auto picks for a GPU.
struct AutoCalibration {
  enum class Kind : std::uint8_t { measured, transferred, none };
  Kind kind = Kind::none;
  std::optional<Calibration> calibration;  // set unless kind is none
  std::string band;                        // the error band the validation supports, or why there is none
  std::string note;                        // what was picked and why; for none, why the roofline is kept
};
[[nodiscard]] std::string_view name_of(AutoCalibration::Kind kind);

// The bundled calibration measured on `gpu`, else one transferred from the nearest bundled GPU of
// its architecture (distance: |log ratio| of bandwidth, SMs, clock and the common peaks), else none.
// `registry` gives the bundled calibrations' GPUs.
[[nodiscard]] AutoCalibration auto_calibration(const GpuSpec& gpu, const HardwareRegistry& registry);

}  // namespace roofline
