#include "roofline/validate/regression.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <set>

#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"

namespace roofline {

std::string_view name_of(Verdict verdict) {
  static constexpr std::array<std::string_view, 8> names{"same",   "faster",  "slower", "noisy",
                                                         "failed", "missing", "added",  "not_compared"};
  return names[static_cast<std::size_t>(verdict)];
}

Verdict classify(const MeasuredTiming& baseline, const MeasuredTiming& measured, double tolerance) {
  const double change = measured.median_s / baseline.median_s - 1;
  // A change of exactly the tolerance is "same" whatever the rounding of the division.
  if (std::abs(change) <= tolerance * (1 + 1e-9)) return Verdict::same;
  if (change > tolerance && measured.min_s > baseline.max_s) return Verdict::slower;
  if (change < -tolerance && measured.max_s < baseline.min_s) return Verdict::faster;
  return Verdict::noisy;
}

namespace {

std::string range_text(const MeasuredTiming& t) {
  return fmt::format("{:.4g} us [{:.4g}, {:.4g}]", t.median_s * 1e6, t.min_s * 1e6, t.max_s * 1e6);
}

std::string explain(Verdict v, const MeasuredTiming& old, const MeasuredTiming& now) {
  switch (v) {
    case Verdict::same: return "medians within the tolerance";
    case Verdict::slower:
      return fmt::format("every sample slower: new min {:.4g} us > old max {:.4g} us", now.min_s * 1e6,
                         old.max_s * 1e6);
    case Verdict::faster:
      return fmt::format("every sample faster: new max {:.4g} us < old min {:.4g} us", now.max_s * 1e6,
                         old.min_s * 1e6);
    case Verdict::noisy:
      return fmt::format("medians differ beyond the tolerance but the ranges overlap: old {}, new {}", range_text(old),
                         range_text(now));
    default: return {};
  }
}

bool sizes_differ(const Measurement& a, const Measurement& b) {
  if (!a.recorded_bytes || !b.recorded_bytes) return a.parameters != b.parameters;
  return std::abs(*a.recorded_bytes - *b.recorded_bytes) > 1e-9 * std::max(*a.recorded_bytes, *b.recorded_bytes) ||
         a.parameters != b.parameters;
}

}  // namespace

std::vector<Comparison> compare_runs(const MeasuredRun& baseline, const MeasuredRun& measured, double tolerance) {
  std::vector<Comparison> out;
  std::set<std::string> in_baseline;
  for (const Measurement& old : baseline.results) {
    in_baseline.insert(old.id);
    Comparison c;
    c.id = old.id;
    c.group = old.group;
    c.baseline = old.timing;
    const Measurement* now = measured.find(old.id);
    if (now == nullptr) {
      c.verdict = Verdict::missing;
      c.detail = "not in the new run";
    } else if (!old.timed()) {
      c.measured = now->timing;
      c.verdict = Verdict::not_compared;
      c.detail = fmt::format("not timed in the baseline (status {})", old.status);
    } else if (now->status == "failed") {
      c.verdict = Verdict::failed;
      c.detail = "passed in the baseline, failed its check in the new run";
    } else if (!now->timed()) {
      c.verdict = Verdict::missing;
      c.detail = fmt::format("not timed in the new run (status {})", now->status);
    } else if (sizes_differ(old, *now)) {
      c.measured = now->timing;
      c.verdict = Verdict::not_compared;
      c.detail = old.recorded_bytes && now->recorded_bytes
                     ? fmt::format("a different problem under the same id ({:.0f} vs {:.0f} model bytes)",
                                   *old.recorded_bytes, *now->recorded_bytes)
                     : "a different problem under the same id (its parameters differ)";
    } else {
      c.measured = now->timing;
      c.change = now->timing->median_s / old.timing->median_s - 1;
      c.verdict = classify(*old.timing, *now->timing, tolerance);
      c.detail = explain(c.verdict, *old.timing, *now->timing);
    }
    out.push_back(std::move(c));
  }
  for (const Measurement& now : measured.results) {
    if (in_baseline.contains(now.id)) continue;
    Comparison c;
    c.id = now.id;
    c.group = now.group;
    c.measured = now.timing;
    c.verdict = now.status == "failed" ? Verdict::failed : Verdict::added;
    c.detail = now.status == "failed" ? "not in the baseline, and failed its check" : "not in the baseline";
    out.push_back(std::move(c));
  }
  return out;
}

double parse_percentage(std::string_view text, std::string_view flag, PercentageRange range) {
  std::string body(text);
  if (!body.empty() && body.back() == '%') body.pop_back();
  const std::optional<double> parsed = parse_decimal(body);
  const double value = parsed.value_or(0);
  const bool below_upper = range.upper_included ? value <= range.upper_pct : value < range.upper_pct;
  if (!parsed || !std::isfinite(value) || value <= 0 || !below_upper) {
    throw InputError(
        fmt::format("{}: '{}' is not a percentage between 0 and {:g} (e.g. 5%)", flag, text, range.upper_pct));
  }
  return value / 100;
}

double parse_tolerance(std::string_view text, std::string_view flag) {
  return parse_percentage(text, flag, {.upper_pct = 100, .upper_included = false});
}

}  // namespace roofline
