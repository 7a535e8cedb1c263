#include "roofline/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace roofline {
namespace {

std::vector<double> sorted_copy(std::span<const double> values) {
  if (values.empty()) throw std::invalid_argument("statistics of an empty sample");
  if (std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); })) {
    throw std::invalid_argument("statistics of a sample containing NaN");
  }
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

double median_of_sorted(const std::vector<double>& sorted) {
  const std::size_t n = sorted.size();
  if (n % 2 == 1) return sorted[n / 2];
  // Halving each term first keeps the mean finite for values near the largest double.
  return sorted[n / 2 - 1] / 2 + sorted[n / 2] / 2;
}

}  // namespace

double median(std::span<const double> values) {
  return median_of_sorted(sorted_copy(values));
}

Summary summarize(std::span<const double> values) {
  const std::vector<double> sorted = sorted_copy(values);
  Summary summary;
  summary.count = sorted.size();
  summary.median = median_of_sorted(sorted);
  summary.min = sorted.front();
  summary.max = sorted.back();
  summary.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  return summary;
}

}  // namespace roofline
