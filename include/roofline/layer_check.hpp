#pragma once

// The decoder layer, measured against predicted: every layer of a layer-suite run
// (roofline/layer_suite.hpp: a LLaMA-3-70B layer timed end to end at decode and prefill) is
// predicted as the sum of its stages, each stage being the operation it runs (the stage plan's
// Basis) timed by the roofline and, with a calibration, by the table of its best measured
// implementation (calibrated_time: the lookup op, llm and plan make). The stages' own times,
// measured inside the layer, are kept beside their predictions to show where an error comes from.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "roofline/calibration.hpp"
#include "roofline/layer_suite.hpp"
#include "roofline/measured.hpp"
#include "roofline/validate.hpp"

namespace roofline {

struct LayerStageCheck {
  std::string stage;  // "qkv"
  std::string id;     // the stage's id in the run
  Basis basis;
  IdealTime roofline;
  std::optional<CalibratedTime> calibrated;
  std::string not_calibrated;        // why not, when a calibration was given
  std::optional<double> measured_s;  // the stage timed inside the layer, if the run has it
  [[nodiscard]] double expected_s() const { return calibrated ? calibrated->time_s : roofline.time_s; }
};

struct LayerCheck {
  const MeasuredRun* run = nullptr;
  const Measurement* measurement = nullptr;  // the layer timed end to end
  bench::layer::Case layer;
  std::vector<LayerStageCheck> stages;
  double roofline_s = 0;  // sum of the stages' roofline times
  double expected_s = 0;  // sum of their calibrated times (the roofline where no table covers a stage)
  int calibrated_stages = 0;
  std::optional<double> stages_measured_s;  // sum of the stages as timed inside the layer (all of them present)

  [[nodiscard]] bool timed() const { return measurement->timed(); }
  [[nodiscard]] std::optional<double> roofline_error() const;  // roofline / measured - 1
  // expected / measured - 1; set when a calibration covered at least one stage
  [[nodiscard]] std::optional<double> calibrated_error() const;
};

// Every layer result (group "layer") of the runs whose id is a case of this build's layer suite.
[[nodiscard]] std::vector<LayerCheck> check_layers(std::span<const MeasuredRun> runs, const Roofs& roofs,
                                                   const Calibration* calibration);

// The case of this build's layer suite with that id (a layer's or a stage's "layer" parameter).
[[nodiscard]] const bench::layer::Case* layer_case(std::string_view id);

}  // namespace roofline
