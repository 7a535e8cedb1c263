// The decoder layer, measured against the sum of its predicted stages.
#include "roofline/validate/layer_check.hpp"

#include <fmt/format.h>

#include <utility>

namespace roofline {

std::optional<double> LayerCheck::roofline_error() const {
  if (!timed() || !(roofline_s > 0)) return std::nullopt;
  return roofline_s / measurement->timing->median_s - 1;
}

std::optional<double> LayerCheck::calibrated_error() const {
  if (!timed() || calibrated_stages == 0) return std::nullopt;
  return expected_s / measurement->timing->median_s - 1;
}

std::optional<double> LayerCheck::best_error() const {
  if (!timed() || calibrated_stages == 0) return std::nullopt;
  return expected_best_s / measurement->timing->median_s - 1;
}

std::string recorded_table(const Measurement& stage) {
  const auto it = stage.parameters.find("table");
  return it != stage.parameters.end() && it->is_string() ? it->get<std::string>() : std::string();
}

namespace {

std::string parameter_text(const Measurement& m, const char* key) {
  const auto it = m.parameters.find(key);
  return it != m.parameters.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The stages a run recorded for the layer `layer_id`, in the order it ran them.
std::vector<const Measurement*> recorded_stages(const MeasuredRun& run, const std::string& layer_id) {
  std::vector<const Measurement*> out;
  for (const Measurement& m : run.results) {
    if (m.group == "layer_stages" && parameter_text(m, "layer") == layer_id) out.push_back(&m);
  }
  return out;
}

}  // namespace

std::vector<LayerCheck> check_layers(std::span<const MeasuredRun> runs, const Roofs& roofs,
                                     const Calibration* calibration) {
  std::vector<LayerCheck> out;
  for (const MeasuredRun& run : runs) {
    for (const Measurement& m : run.results) {
      if (m.group != "layer") continue;
      const bench::layer::Case* c = bench::layer::find_case(m.id);
      if (c == nullptr) continue;
      LayerCheck check;
      check.run = &run;
      check.measurement = &m;
      check.layer = *c;
      // The stages the run recorded; a layer recorded without them is predicted from this build's.
      std::vector<std::pair<std::string, const Measurement*>> words;
      for (const Measurement* stage : recorded_stages(run, m.id))
        words.emplace_back(bench::layer::stage_word_of(stage->id), stage);
      if (words.empty()) {
        for (const bench::layer::StagePlan& plan : bench::layer::stages(*c)) {
          words.emplace_back(bench::layer::stage_word(plan.name), nullptr);
        }
      }
      double stages_measured = 0;
      bool all_measured = true;
      for (const auto& [word, timed] : words) {
        std::optional<bench::layer::StageOperation> op = bench::layer::stage_operation(*c, word);
        if (!op) {
          all_measured = false;
          continue;
        }
        LayerStageCheck s;
        s.stage =
            timed != nullptr && !parameter_text(*timed, "stage").empty() ? parameter_text(*timed, "stage") : op->name;
        s.id = timed != nullptr ? timed->id : fmt::format("{}.{}", m.id, word);
        s.basis = std::move(op->basis);
        s.roofline = ideal_time(s.basis, roofs);
        if (timed != nullptr) s.ran_table = recorded_table(*timed);
        if (calibration != nullptr) {
          CalibratedOrNot best = calibrated_time(*calibration, s.basis, roofs, TableChoice::best);
          if (CalibratedTime* found = std::get_if<CalibratedTime>(&best)) s.best = *found;
          if (!s.ran_table.empty()) {
            Basis ran = s.basis;
            ran.table = s.ran_table;
            CalibratedOrNot t = calibrated_time(*calibration, ran, roofs, TableChoice::implementation);
            if (CalibratedTime* found = std::get_if<CalibratedTime>(&t)) {
              s.calibrated = std::move(*found);
              ++check.ran_table_stages;
            }
          }
          if (!s.calibrated) s.calibrated = s.best;
          if (s.calibrated) {
            ++check.calibrated_stages;
          } else {
            s.not_calibrated = std::get<NotCalibrated>(best).reason;
          }
        }
        if (timed != nullptr && timed->timed()) {
          s.measured_s = timed->timing->median_s;
          stages_measured += *s.measured_s;
        } else {
          all_measured = false;
        }
        check.roofline_s += s.roofline.time_s;
        check.expected_s += s.expected_s();
        check.expected_best_s += s.expected_best_s();
        check.stages.push_back(std::move(s));
      }
      if (all_measured) check.stages_measured_s = stages_measured;
      out.push_back(std::move(check));
    }
  }
  return out;
}

}  // namespace roofline
