#pragma once

// Summary statistics of repeated timings: benchmarks report the median with the minimum, the
// maximum and their spread, never a single run.

#include <cstddef>
#include <span>

namespace roofline {

struct Summary {
  std::size_t count = 0;
  double median = 0;
  double min = 0;
  double max = 0;
  double mean = 0;

  // (max - min) / median: how far apart the fastest and the slowest repetition were, relative
  // to the typical one. 0 when every repetition took the same time.
  [[nodiscard]] double spread() const { return median == 0 ? 0.0 : (max - min) / median; }
};

// The middle value; for an even count, the mean of the two middle values. Throws
// std::invalid_argument on an empty input or a NaN.
[[nodiscard]] double median(std::span<const double> values);

// Median, extremes and mean of `values`; same preconditions as median().
[[nodiscard]] Summary summarize(std::span<const double> values);

}  // namespace roofline
