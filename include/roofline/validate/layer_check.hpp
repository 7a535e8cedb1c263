#pragma once

// The decoder layer, measured against predicted: every layer of a layer-suite run
// (roofline/layer_suite.hpp: a LLaMA-3-70B layer timed end to end at decode and prefill) is
// predicted as the sum of the stages the run recorded, each stage being the operation it runs (an
// op of the layer's description, decoder_step.hpp: what llm predicts for the same layer) timed by
// the roofline and, with a calibration, by two tables:
//   - the table of the implementation that ran it, where the run recorded one (parameter
//     "table": the project's GEMV, cuBLAS, the wgmma GEMM, the flash kernel) and the calibration
//     has it; the stages without one (the layer's own small kernels, decode attention) take the
//     operation's best table. This validates the model: it predicts the kernels that ran.
//   - the best implementation's table throughout (calibrated_time with TableChoice::best): what
//     op, llm and plan predict for the same operations.
// The stages' own times, measured inside the layer, are kept beside their predictions to show
// where an error comes from.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "roofline/basis/calibration.hpp"
#include "roofline/bench/layer_suite.hpp"
#include "roofline/validate/measured.hpp"
#include "roofline/validate/validate.hpp"

namespace roofline {

struct LayerStageCheck {
  std::string stage;  // "qkv"
  std::string id;     // the stage's id in the run
  Basis basis;
  IdealTime roofline;
  std::string ran_table;                     // the recorded implementation table ("" where none)
  std::optional<CalibratedTime> calibrated;  // through ran_table where the calibration has it, else the best table
  std::string not_calibrated;                // why not, when a calibration was given
  std::optional<CalibratedTime> best;        // through the best table (what llm predicts)
  std::optional<double> measured_s;          // the stage timed inside the layer, if the run has it
  [[nodiscard]] double expected_s() const { return calibrated ? calibrated->time_s : roofline.time_s; }
  [[nodiscard]] double expected_best_s() const { return best ? best->time_s : roofline.time_s; }
};

struct LayerCheck {
  const MeasuredRun* run = nullptr;
  const Measurement* measurement = nullptr;  // the layer timed end to end
  bench::layer::Case layer;
  std::vector<LayerStageCheck> stages;
  double roofline_s = 0;       // sum of the stages' roofline times
  double expected_s = 0;       // sum of their calibrated times (the roofline where no table covers a stage)
  double expected_best_s = 0;  // the same through the best tables only
  int calibrated_stages = 0;
  int ran_table_stages = 0;                 // stages calibrated through the table of the implementation that ran
  std::optional<double> stages_measured_s;  // sum of the stages as timed inside the layer (all of them present)

  [[nodiscard]] bool timed() const { return measurement->timed(); }
  [[nodiscard]] std::optional<double> roofline_error() const;  // roofline / measured - 1
  // expected / measured - 1; set when a calibration covered at least one stage
  [[nodiscard]] std::optional<double> calibrated_error() const;
  // expected_best / measured - 1, under the same condition
  [[nodiscard]] std::optional<double> best_error() const;
};

// Every layer result (group "layer") of the runs whose id is a case of this build's layer suite.
[[nodiscard]] std::vector<LayerCheck> check_layers(std::span<const MeasuredRun> runs, const Roofs& roofs,
                                                   const Calibration* calibration);

// The calibration table of the implementation that ran a stage (its "table" parameter), or "" where
// the run records none (the layer's own kernels, runs before the parameter existed).
[[nodiscard]] std::string recorded_table(const Measurement& stage);

}  // namespace roofline
