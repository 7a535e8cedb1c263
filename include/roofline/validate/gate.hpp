#pragma once

// The CI gate on measured against predicted (`validate --max-error PCT --min-of-roofline PCT`):
// every timed result of the runs is judged against the limits, and each one beyond a limit is an
// offender (exit code 1 once the report is written). Two limits, each on a figure validate
// already reports:
//
//   max error        error = (calibrated - measured) / measured, validate's calibrated error;
//                    offends when |error| > limit. Needs a calibration.
//   min of roofline  share = roofline time / measured time, validate's "of roofline %";
//                    offends when share < limit. Bare roofline: no calibration needed.
//
// A value exactly at its limit passes. Results are the benchmarks (Prediction), the decoder
// layers timed end to end (LayerCheck: the sum of their stages) and the collectives
// (CollectiveComparison: their roofline is the ring model over the link). A timed result that
// has no figure for a limit (no table covers it, no basis, a ceiling) is listed as not checked
// with the reason, never counted as an offender; results that were not timed are not checked
// either.
//
// In sample or out of sample (max error only): a result is in sample when the calibration was
// learnt from its run (learnt_from) and its suite is one that calibrate learns from, so its own
// point is in the table; the layer suite is never learnt from, and a run the calibration did not
// see is out of sample.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/basis/calibration.hpp"
#include "roofline/validate/collective_validation.hpp"
#include "roofline/validate/layer_check.hpp"
#include "roofline/validate/measured.hpp"
#include "roofline/validate/prediction.hpp"

namespace roofline {

// What a result is: a microbenchmark, a stage timed inside a decoder layer, a layer timed end to
// end, a collective.
enum class ResultKind : std::uint8_t { benchmark, layer_stage, layer, collective };
inline constexpr std::array<std::string_view, 4> result_kind_names{"benchmark", "layer_stage", "layer", "collective"};
[[nodiscard]] std::string_view name_of(ResultKind kind);
// Throws InputError naming `flag` for a name not in result_kind_names.
[[nodiscard]] ResultKind parse_result_kind(std::string_view text, std::string_view flag);

struct GateLimits {
  // Fractions (0.10 for 10%); unset: that limit is not checked.
  std::optional<double> max_error;
  std::optional<double> min_of_roofline;
  std::vector<ResultKind> kinds;  // the kinds of result judged; empty: all
  [[nodiscard]] bool any() const { return max_error.has_value() || min_of_roofline.has_value(); }
  [[nodiscard]] bool judges(ResultKind kind) const;
};

enum class GateCheck : std::uint8_t { max_error, min_of_roofline };
[[nodiscard]] std::string_view name_of(GateCheck check);

enum class Sample : std::uint8_t { in_sample, out_of_sample };
[[nodiscard]] std::string_view name_of(Sample sample);

// One figure against one limit.
struct Judgement {
  double value = 0;  // the error (max error) or the share (min of roofline)
  bool offends = false;
};

// error = (predicted - measured) / measured; offends when |error| > limit.
[[nodiscard]] Judgement judge_max_error(double measured_s, double predicted_s, double limit);
// share = roofline / measured; offends when share < limit.
[[nodiscard]] Judgement judge_min_of_roofline(double measured_s, double roofline_s, double limit);

// Whether the calibration was learnt from this run (the same device, format and start time; the
// same file where the format records no start time).
[[nodiscard]] bool learnt_from(const Calibration& calibration, const MeasuredRun& run);

struct GateResult {
  std::string id;
  ResultKind kind = ResultKind::benchmark;
  GateCheck check = GateCheck::max_error;
  std::optional<Sample> sample;  // max error only
  double measured_s = 0;
  double predicted_s = 0;  // calibrated (max error) or roofline (min of roofline)
  double limit = 0;
  Judgement judgement;
};

struct NotChecked {
  std::string id;
  ResultKind kind = ResultKind::benchmark;
  GateCheck check = GateCheck::max_error;
  std::string reason;
};

struct GateOutcome {
  GateLimits limits;
  std::vector<GateResult> checked;  // benchmarks, layers, collectives; max error before min of roofline
  std::vector<NotChecked> not_checked;

  [[nodiscard]] std::vector<GateResult> offenders() const;
  // Results beyond at least one limit (one that fails both counts once).
  [[nodiscard]] std::size_t offending_results() const;
  [[nodiscard]] bool passed() const { return offenders().empty(); }
};

struct GateInputs {
  std::span<const MeasuredRun> runs;
  std::span<const Prediction> predictions;
  std::span<const LayerCheck> layers;
  std::span<const CollectiveComparison> collectives;
  const Calibration* calibration = nullptr;  // required for limits.max_error
};

// Every timed result of `inputs` of the kinds the limits judge, against them.
[[nodiscard]] GateOutcome run_gate(const GateInputs& inputs, const GateLimits& limits);

}  // namespace roofline
