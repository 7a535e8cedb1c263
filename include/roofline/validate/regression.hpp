#pragma once

// Comparing two runs of the same benchmarks (CI regression checks). Each benchmark is judged from
// the spread both runs recorded (median, fastest and slowest per-launch time), not from one
// number:
//
//   change = new median / old median - 1
//   same    |change| <= tolerance
//   slower  change > tolerance  and new min > old max   (every new sample slower than every old one)
//   faster  change < -tolerance and new max < old min   (every new sample faster than every old one)
//   noisy   otherwise: the medians moved by more than the tolerance, but the two runs' [min, max]
//           ranges overlap, so the recorded spread cannot tell a change from noise.
//
// Beyond the four: failed (passed in the baseline, failed its check now: a regression too),
// missing (in the baseline only), added (in the new run only), not_compared (not timed in the
// baseline, or the two runs measured a different problem size under the same id).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/validate/measured.hpp"

namespace roofline {

enum class Verdict : std::uint8_t { same, faster, slower, noisy, failed, missing, added, not_compared };
[[nodiscard]] std::string_view name_of(Verdict verdict);
// Whether a verdict fails the check (exit code 1).
[[nodiscard]] constexpr bool is_regression(Verdict v) {
  return v == Verdict::slower || v == Verdict::failed;
}

// The rule above, for two timed results; tolerance is a fraction (0.05 for 5%).
[[nodiscard]] Verdict classify(const MeasuredTiming& baseline, const MeasuredTiming& measured, double tolerance);

struct Comparison {
  std::string id;
  std::string group;
  std::optional<MeasuredTiming> baseline;
  std::optional<MeasuredTiming> measured;
  std::optional<double> change;  // new median / old median - 1
  Verdict verdict = Verdict::same;
  std::string detail;
};

// Every benchmark of either run, in the baseline's order, then those only the new run has.
[[nodiscard]] std::vector<Comparison> compare_runs(const MeasuredRun& baseline, const MeasuredRun& measured,
                                                   double tolerance);

// A percentage as the flags take it, "5%" or "5", as a fraction (0.05). Throws InputError naming
// `flag` unless 0 < x < upper_pct, or x <= upper_pct where the upper end is included.
struct PercentageRange {
  double upper_pct = 100;
  bool upper_included = false;
};
[[nodiscard]] double parse_percentage(std::string_view text, std::string_view flag, PercentageRange range);

// parse_percentage with 0 < x < 100.
[[nodiscard]] double parse_tolerance(std::string_view text, std::string_view flag = "--tolerance");

}  // namespace roofline
