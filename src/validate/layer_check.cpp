// The decoder layer, measured against the sum of its predicted stages.
#include "roofline/layer_check.hpp"

namespace roofline {

const bench::layer::Case* layer_case(std::string_view id) {
  for (const bench::layer::Case& c : bench::layer::cases) {
    if (bench::layer::case_id(c) == id) return &c;
  }
  return nullptr;
}

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

std::vector<LayerCheck> check_layers(std::span<const MeasuredRun> runs, const Roofs& roofs,
                                     const Calibration* calibration) {
  std::vector<LayerCheck> out;
  for (const MeasuredRun& run : runs) {
    for (const Measurement& m : run.results) {
      if (m.group != "layer") continue;
      const bench::layer::Case* c = layer_case(m.id);
      if (c == nullptr) continue;
      LayerCheck check;
      check.run = &run;
      check.measurement = &m;
      check.layer = *c;
      double stages_measured = 0;
      bool all_measured = true;
      for (bench::layer::StagePlan& plan : bench::layer::stages(*c)) {
        LayerStageCheck s;
        s.stage = std::string(plan.name);
        s.id = bench::layer::stage_id(*c, plan.stage);
        s.basis = std::move(plan.basis);
        s.roofline = ideal_time(s.basis, roofs);
        const Measurement* timed = run.find(s.id);
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
