// The chart's data model checks, its geometry (boxes, segments) and its log axes.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/plot/plot.hpp"

namespace roofline::plot {
namespace {

// log10 of a power of ten may land a hair off the integer; this much is treated as exact.
constexpr double log_slack = 1e-9;

double power_of_ten(int exponent) {
  // Powers of ten up to 1e22 are exact doubles, so the division rounds correctly.
  return exponent >= 0 ? std::pow(10.0, exponent) : 1.0 / std::pow(10.0, -exponent);
}

int floor_log10(double value) {
  return static_cast<int>(std::floor(std::log10(value) + log_slack));
}

int ceil_log10(double value) {
  return static_cast<int>(std::ceil(std::log10(value) - log_slack));
}

bool positive_finite(double value) {
  return std::isfinite(value) && value > 0;
}

}  // namespace

std::string_view name_of(Provenance provenance) {
  switch (provenance) {
    case Provenance::datasheet: return "datasheet";
    case Provenance::measured: return "measured";
    case Provenance::user: return "user";
  }
  return "datasheet";
}

std::string_view name_of(PointKind kind) {
  return kind == PointKind::measured ? "measured" : "model";
}

void validate(const Chart& chart) {
  if (chart.compute_roofs.empty()) throw InputError("chart: no compute roof to draw (no peak rate for any data type)");
  if (chart.memory_roofs.empty()) throw InputError("chart: no memory roof to draw (no bandwidth)");
  for (const ComputeRoof& roof : chart.compute_roofs) {
    if (!positive_finite(roof.peak_flops)) {
      throw InputError(fmt::format("chart: compute roof '{}' has peak {} FLOP/s; it must be positive and finite",
                                   roof.label, roof.peak_flops));
    }
  }
  for (const MemoryRoof& roof : chart.memory_roofs) {
    if (!positive_finite(roof.bandwidth_bytes_per_s)) {
      throw InputError(fmt::format("chart: memory roof '{}' has bandwidth {} B/s; it must be positive and finite",
                                   roof.label, roof.bandwidth_bytes_per_s));
    }
  }
  for (const Point& point : chart.points) {
    if (!positive_finite(point.intensity) || !positive_finite(point.flops)) {
      throw InputError(
          fmt::format("chart: point '{}' at {} FLOP/byte, {} FLOP/s: both must be positive and finite (log axes)",
                      point.label, point.intensity, point.flops));
    }
  }
}

bool Box::intersects(const Box& other) const {
  return x < other.right() && other.x < right() && y < other.bottom() && other.y < bottom();
}

bool Box::contains(const Box& other) const {
  return other.x >= x && other.right() <= right() && other.y >= y && other.bottom() <= bottom();
}

bool segment_intersects(Vec2 a, Vec2 b, const Box& box) {
  // Liang-Barsky: clip the parameter range [0, 1] of a + t (b - a) against each side of the box.
  double t0 = 0;
  double t1 = 1;
  const double dx = b.x - a.x;
  const double dy = b.y - a.y;
  const std::array<std::pair<double, double>, 4> sides{{
      {-dx, a.x - box.x},
      {dx, box.right() - a.x},
      {-dy, a.y - box.y},
      {dy, box.bottom() - a.y},
  }};
  for (const auto& [p, q] : sides) {
    if (p == 0) {
      if (q <= 0) return false;  // parallel to this side and outside (or on) it
      continue;
    }
    const double t = q / p;
    if (p < 0) {
      t0 = std::max(t0, t);
    } else {
      t1 = std::min(t1, t);
    }
    if (t0 >= t1) return false;
  }
  return true;
}

double LogAxis::to_pixel(double value) const {
  const double fraction = (std::log10(value) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  return pixel_lo + fraction * (pixel_hi - pixel_lo);
}

Ranges auto_ranges(const Chart& chart) {
  validate(chart);
  const double main_bandwidth = chart.memory_roofs.front().bandwidth_bytes_per_s;
  double top_peak = 0;
  for (const ComputeRoof& roof : chart.compute_roofs) top_peak = std::max(top_peak, roof.peak_flops);

  std::vector<double> intensities;
  for (const ComputeRoof& roof : chart.compute_roofs) intensities.push_back(roof.peak_flops / main_bandwidth);
  for (std::size_t i = 1; i < chart.memory_roofs.size(); ++i) {
    intensities.push_back(top_peak / chart.memory_roofs[i].bandwidth_bytes_per_s);
  }
  for (const Point& point : chart.points) intensities.push_back(point.intensity);
  const auto [min_ai, max_ai] = std::minmax_element(intensities.begin(), intensities.end());
  int x_lo = floor_log10(*min_ai / range_margin);
  const int x_hi = ceil_log10(*max_ai * range_margin);
  // Three decades at least, gained on the left, where memory-bound work lives.
  x_lo = std::min(x_lo, x_hi - 3);

  Ranges ranges;
  ranges.intensity_lo = power_of_ten(x_lo);
  ranges.intensity_hi = power_of_ten(x_hi);

  // Every roof and point, and each memory roof where it enters on the left edge.
  std::vector<double> flops;
  for (const ComputeRoof& roof : chart.compute_roofs) flops.push_back(roof.peak_flops);
  for (const MemoryRoof& roof : chart.memory_roofs) flops.push_back(roof.bandwidth_bytes_per_s * ranges.intensity_lo);
  for (const Point& point : chart.points) flops.push_back(point.flops);
  const auto [min_flops, max_flops] = std::minmax_element(flops.begin(), flops.end());
  int y_lo = floor_log10(*min_flops / range_margin);
  const int y_hi = ceil_log10(*max_flops * range_margin);
  y_lo = std::min(y_lo, y_hi - 2);
  ranges.flops_lo = power_of_ten(y_lo);
  ranges.flops_hi = power_of_ten(y_hi);
  return ranges;
}

std::vector<double> decade_ticks(double lo, double hi) {
  std::vector<double> ticks;
  for (int k = ceil_log10(lo); k <= floor_log10(hi); ++k) ticks.push_back(power_of_ten(k));
  return ticks;
}

std::vector<double> minor_ticks(double lo, double hi) {
  std::vector<double> ticks;
  for (int k = floor_log10(lo); k <= floor_log10(hi); ++k) {
    for (int m = 2; m <= 9; ++m) {
      const double value = m * power_of_ten(k);
      if (value > lo * (1 + log_slack) && value < hi * (1 - log_slack)) ticks.push_back(value);
    }
  }
  return ticks;
}

std::string tick_label(double power) {
  const int k = static_cast<int>(std::lround(std::log10(power)));
  if (k >= -3 && k <= 5) return fmt::format("{:.{}f}", power_of_ten(k), std::max(0, -k));
  return fmt::format("1e{}", k);
}

std::string short_number(double value, int digits) {
  if (!positive_finite(value)) return fmt::format("{}", value);
  const int decimals = std::max(0, digits - 1 - floor_log10(value));
  std::string text = fmt::format("{:.{}f}", value, decimals);
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

}  // namespace roofline::plot
