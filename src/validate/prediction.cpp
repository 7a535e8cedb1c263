#include "roofline/validate/prediction.hpp"

#include <algorithm>
#include <cmath>

#include "roofline/core/stats.hpp"

namespace roofline {

std::optional<double> Prediction::achieved() const {
  if (!predicted() || !(roofline.time_s > 0)) return std::nullopt;
  return roofline.time_s / measurement->timing->median_s;
}

std::optional<double> Prediction::roofline_error() const {
  if (!predicted() || !(roofline.time_s > 0)) return std::nullopt;
  return roofline.time_s / measurement->timing->median_s - 1;
}

std::optional<double> Prediction::calibrated_error() const {
  if (!predicted() || !calibrated) return std::nullopt;
  return calibrated->time_s / measurement->timing->median_s - 1;
}

std::vector<Prediction> predict(std::span<const MeasuredRun> runs, const Roofs& roofs, const Calibration* calibration) {
  std::vector<Prediction> out;
  for (const MeasuredRun& run : runs) {
    for (const Measurement& m : run.results) {
      Prediction p;
      p.run = &run;
      p.measurement = &m;
      BasisOrReason basis = benchmark_basis(m);
      if (NoBasis* none = std::get_if<NoBasis>(&basis)) {
        p.none = std::move(*none);
        out.push_back(std::move(p));
        continue;
      }
      p.basis = std::move(std::get<Basis>(basis));
      p.roofline = ideal_time(*p.basis, roofs);
      if (calibration != nullptr && m.timed()) {
        CalibratedOrNot c = calibrated_time(*calibration, *p.basis, roofs, TableChoice::implementation);
        if (CalibratedTime* t = std::get_if<CalibratedTime>(&c)) {
          p.calibrated = std::move(*t);
        } else {
          p.not_calibrated = std::get<NotCalibrated>(c).reason;
        }
      }
      out.push_back(std::move(p));
    }
  }
  return out;
}

std::vector<PatternSummary> summarize_patterns(std::span<const Prediction> predictions) {
  std::vector<std::string> order;
  for (const Prediction& p : predictions) {
    if (!p.achieved()) continue;
    if (std::find(order.begin(), order.end(), p.basis->pattern) == order.end()) order.push_back(p.basis->pattern);
  }
  std::vector<PatternSummary> out;
  for (const std::string& pattern : order) {
    PatternSummary s;
    s.pattern = pattern;
    std::vector<double> achieved;
    std::vector<double> errors;
    for (const Prediction& p : predictions) {
      if (!p.achieved() || p.basis->pattern != pattern) continue;
      achieved.push_back(*p.achieved());
      if (auto e = p.calibrated_error()) {
        errors.push_back(std::abs(*e));
        if (std::abs(*e) <= 0.10) ++s.within_10pct;
      }
    }
    s.benchmarks = static_cast<int>(achieved.size());
    const Summary a = summarize(achieved);
    s.achieved_median = a.median;
    s.achieved_min = a.min;
    s.achieved_max = a.max;
    s.calibrated = static_cast<int>(errors.size());
    if (!errors.empty()) {
      const Summary e = summarize(errors);
      s.calibrated_max_abs_error = e.max;
      s.calibrated_median_abs_error = e.median;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace roofline
