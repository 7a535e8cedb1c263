// The CI gate: every timed result of the runs against --max-error and --min-of-roofline.
#include "roofline/validate/gate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "roofline/bench/bench.hpp"
#include "roofline/core/error.hpp"

namespace roofline {

std::string_view name_of(GateCheck check) {
  static constexpr std::array<std::string_view, 2> names{"max_error", "min_of_roofline"};
  return names[static_cast<std::size_t>(check)];
}

std::string_view name_of(ResultKind kind) {
  return result_kind_names[static_cast<std::size_t>(kind)];
}

ResultKind parse_result_kind(std::string_view text, std::string_view flag) {
  for (std::size_t i = 0; i < result_kind_names.size(); ++i) {
    if (result_kind_names[i] == text) return static_cast<ResultKind>(i);
  }
  throw InputError(
      fmt::format("{}: '{}' is not a kind of result ({})", flag, text, fmt::join(result_kind_names, ", ")));
}

bool GateLimits::judges(ResultKind kind) const {
  return kinds.empty() || std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

std::string_view name_of(Sample sample) {
  static constexpr std::array<std::string_view, 2> names{"in_sample", "out_of_sample"};
  return names[static_cast<std::size_t>(sample)];
}

// A figure exactly at its limit passes whatever the rounding of the division (as classify does).
constexpr double limit_slack = 1e-9;

Judgement judge_max_error(double measured_s, double predicted_s, double limit) {
  const double error = (predicted_s - measured_s) / measured_s;
  return {error, std::abs(error) > limit * (1 + limit_slack)};
}

Judgement judge_min_of_roofline(double measured_s, double roofline_s, double limit) {
  const double share = roofline_s / measured_s;
  return {share, share < limit * (1 - limit_slack)};
}

bool learnt_from(const Calibration& calibration, const MeasuredRun& run) {
  return std::any_of(calibration.sources.begin(), calibration.sources.end(), [&](const CalibrationSource& s) {
    return s.device_name == run.device_name && s.format == run.format && s.started_utc == run.started_utc &&
           (s.file == run.file || !s.started_utc.empty());
  });
}

std::vector<GateResult> GateOutcome::offenders() const {
  std::vector<GateResult> out;
  std::copy_if(checked.begin(), checked.end(), std::back_inserter(out),
               [](const GateResult& r) { return r.judgement.offends; });
  return out;
}

std::size_t GateOutcome::offending_results() const {
  std::set<std::string> ids;
  for (const GateResult& r : checked) {
    if (r.judgement.offends) ids.insert(r.id);
  }
  return ids.size();
}

namespace {

// What one result offers the gate: its calibrated and roofline times, or why it has none.
struct Candidate {
  const MeasuredRun* run = nullptr;
  const Measurement* measurement = nullptr;
  ResultKind kind = ResultKind::benchmark;
  std::optional<double> calibrated_s;
  std::string not_calibrated;
  std::optional<double> roofline_s;
  std::string no_roofline;
};

Sample sample_of(const Candidate& c, const Calibration& calibration) {
  const bool suite_learnt = c.measurement->suite.empty() || bench::find_suite(c.measurement->suite).not_learnt.empty();
  return suite_learnt && c.run != nullptr && learnt_from(calibration, *c.run) ? Sample::in_sample
                                                                              : Sample::out_of_sample;
}

const MeasuredRun* run_holding(std::span<const MeasuredRun> runs, const Measurement* m) {
  for (const MeasuredRun& run : runs) {
    if (!run.results.empty() && m >= run.results.data() && m < run.results.data() + run.results.size()) return &run;
  }
  return nullptr;
}

Candidate from_prediction(const Prediction& p) {
  const ResultKind kind = p.measurement->group == "layer_stages" ? ResultKind::layer_stage : ResultKind::benchmark;
  Candidate c;
  c.run = p.run;
  c.measurement = p.measurement;
  c.kind = kind;
  if (!p.basis) {
    c.not_calibrated = c.no_roofline = p.none.ceiling ? "a ceiling, not a prediction: " + p.none.reason : p.none.reason;
    return c;
  }
  if (p.calibrated) {
    c.calibrated_s = p.calibrated->time_s;
  } else {
    c.not_calibrated = p.not_calibrated.empty() ? "no calibration covers it" : p.not_calibrated;
  }
  if (p.roofline.time_s > 0) {
    c.roofline_s = p.roofline.time_s;
  } else {
    c.no_roofline = "the model counts no work for it";
  }
  return c;
}

Candidate from_layer(const LayerCheck& l) {
  Candidate c;
  c.run = l.run;
  c.measurement = l.measurement;
  c.kind = ResultKind::layer;
  std::vector<std::string> uncovered;
  for (const LayerStageCheck& s : l.stages) {
    if (!s.calibrated) uncovered.push_back(s.stage);
  }
  // A layer is checked against its calibration only when every stage has a table: a sum with
  // bare-roofline stages in it is neither the calibrated nor the roofline prediction.
  if (l.stages.empty()) {
    c.not_calibrated = "no stage of this build's layer suite";
  } else if (uncovered.empty()) {
    c.calibrated_s = l.expected_s;
  } else {
    c.not_calibrated = fmt::format("stages without a table: {}", fmt::join(uncovered, ", "));
  }
  if (l.roofline_s > 0) {
    c.roofline_s = l.roofline_s;
  } else {
    c.no_roofline = "the model counts no work for it";
  }
  return c;
}

Candidate from_collective(const CollectiveComparison& cc, std::span<const MeasuredRun> runs) {
  Candidate c;
  c.run = run_holding(runs, cc.measurement);
  c.measurement = cc.measurement;
  c.kind = ResultKind::collective;
  c.calibrated_s = cc.calibrated_s;
  if (!c.calibrated_s) {
    c.not_calibrated = cc.calibrated_detail.empty() ? "no measured table for this collective" : cc.calibrated_detail;
  }
  if (cc.model_s > 0) {
    c.roofline_s = cc.model_s;
  } else {
    c.no_roofline = "the ring model counts no time for it";
  }
  return c;
}

void judge(const Candidate& c, const GateLimits& limits, const Calibration* calibration, GateOutcome& out) {
  if (!limits.judges(c.kind)) return;
  const double measured_s = c.measurement->timing->median_s;
  if (limits.max_error) {
    if (c.calibrated_s && calibration != nullptr) {
      out.checked.push_back({.id = c.measurement->id,
                             .kind = c.kind,
                             .check = GateCheck::max_error,
                             .sample = sample_of(c, *calibration),
                             .measured_s = measured_s,
                             .predicted_s = *c.calibrated_s,
                             .limit = *limits.max_error,
                             .judgement = judge_max_error(measured_s, *c.calibrated_s, *limits.max_error)});
    } else {
      out.not_checked.push_back({c.measurement->id, c.kind, GateCheck::max_error, c.not_calibrated});
    }
  }
  if (limits.min_of_roofline) {
    if (c.roofline_s) {
      out.checked.push_back({.id = c.measurement->id,
                             .kind = c.kind,
                             .check = GateCheck::min_of_roofline,
                             .sample = std::nullopt,
                             .measured_s = measured_s,
                             .predicted_s = *c.roofline_s,
                             .limit = *limits.min_of_roofline,
                             .judgement = judge_min_of_roofline(measured_s, *c.roofline_s, *limits.min_of_roofline)});
    } else {
      out.not_checked.push_back({c.measurement->id, c.kind, GateCheck::min_of_roofline, c.no_roofline});
    }
  }
}

}  // namespace

GateOutcome run_gate(const GateInputs& inputs, const GateLimits& limits) {
  GateOutcome out;
  out.limits = limits;
  // Layers and collectives are predicted in their own tables; their rows among the benchmarks
  // only say so.
  std::set<const Measurement*> elsewhere;
  for (const LayerCheck& l : inputs.layers) elsewhere.insert(l.measurement);
  for (const CollectiveComparison& c : inputs.collectives) elsewhere.insert(c.measurement);
  for (const Prediction& p : inputs.predictions) {
    if (p.measurement->timed() && !elsewhere.contains(p.measurement)) {
      judge(from_prediction(p), limits, inputs.calibration, out);
    }
  }
  for (const LayerCheck& l : inputs.layers) {
    if (l.timed()) judge(from_layer(l), limits, inputs.calibration, out);
  }
  for (const CollectiveComparison& c : inputs.collectives) {
    if (c.measurement->timed()) judge(from_collective(c, inputs.runs), limits, inputs.calibration, out);
  }
  return out;
}

}  // namespace roofline
