#pragma once

// Collectives in measured runs: which results are collectives (the collectives suite's tables),
// the tables calibrate learns from them, and validate's comparison of each with the model (the
// ring over the hardware file's scale-up link, and the calibration's measured table when given).

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "roofline/hardware/hardware.hpp"
#include "roofline/model/collective_tables.hpp"
#include "roofline/validate/measured.hpp"

namespace roofline {

struct CollectiveSample {
  Collective op = Collective::all_reduce;
  int ranks = 0;
  double bytes = 0;  // the size run (nccl-tests convention)
  std::string dtype;
};

// The collective a measurement timed, from its recorded parameters; nullopt for any other result.
// A collectives row missing its op, ranks or size throws InputError naming where it is.
[[nodiscard]] std::optional<CollectiveSample> collective_sample(const Measurement& m);

// Every timed collective of the runs as tables (the fastest time where several runs measured one size).
[[nodiscard]] CollectiveTables learn_collective_tables(std::span<const MeasuredRun> runs);

struct CollectiveComparison {
  const Measurement* measurement = nullptr;
  CollectiveSample sample;
  double measured_s = 0;
  double busbw = 0;    // measured, B/s
  double model_s = 0;  // the ring over the link
  std::optional<double>
      calibrated_s;  // the calibration's table (leaves out nothing: in-sample when learnt from this run)
  std::string calibrated_detail;
  [[nodiscard]] double model_error() const { return model_s / measured_s - 1; }
};

// Timed collectives against the model on `link`, and against `tables` where given.
[[nodiscard]] std::vector<CollectiveComparison> compare_collectives(std::span<const MeasuredRun> runs,
                                                                    const LinkSpec& link,
                                                                    const CollectiveTables* tables);

}  // namespace roofline
