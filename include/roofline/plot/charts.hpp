#pragma once

// Bar and scatter charts beside the roofline (the HTML report's decode/prefill breakdown, memory
// per GPU, plan's candidates, validate's measured vs predicted, serve's latency percentiles).
// Like the roofline chart, pure functions of their data: the same chart, the same bytes. Every
// mark carries its numbers in an SVG <title> (the tooltip) and in data-label / data-value /
// data-x / data-y attributes, so a reader (or a test) can find a table's number in the chart.

#include <cstdint>
#include <string>
#include <vector>

namespace roofline::plot {

// ---- Horizontal stacked bars ----

struct BarSegment {
  std::string label;  // the legend entry; segments of one label share a colour across bars
  double value = 0;   // >= 0, in the chart's unit
  std::string tooltip;
};

struct Bar {
  std::string label;  // left of the bar
  std::vector<BarSegment> segments;
  std::string note;  // right of the bar (its total, say)
};

struct BarChart {
  std::string title;
  std::string axis_label;  // the value axis, with its unit
  std::vector<Bar> bars;
  // Each bar drawn as the shares of its own total (0-100 %), for bars of different scales (a
  // decode step in ms beside a prefill in s); the tooltips keep the absolute values.
  bool shares = false;
};

// Throws InputError on no bar, a bar without segments, or a negative or non-finite value.
[[nodiscard]] std::string render_bar_chart_svg(const BarChart& chart);

// ---- Scatter plots ----

enum class Scale : std::uint8_t { linear, log };

struct ScatterPoint {
  std::string label;
  double x = 0;
  double y = 0;
  std::string tooltip;
};

// The mark of a series' points: a circle, a diamond (a second kind of point beside circles), or
// none (a connected series drawn as its line alone, its points marked by other series).
enum class ScatterMark : std::uint8_t { circle, diamond, none };

struct ScatterSeries {
  std::string name;  // the legend entry
  std::vector<ScatterPoint> points;
  bool connect = false;  // a line through the points in order (a quantile curve, a sweep)
  // How the marks look: empty colour = the series' place in the palette; a background series
  // (dominated points) draws smaller and fainter, a highlighted one larger.
  std::string colour{};
  double opacity = 0.85;
  double radius = 4;
  ScatterMark mark = ScatterMark::circle;
};

// A labelled line at one value of an axis (a target, a limit).
struct ReferenceLine {
  std::string label;
  double value = 0;
  bool vertical = false;  // at x = value; else at y = value
};

struct ScatterChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  Scale x_scale = Scale::linear;
  Scale y_scale = Scale::linear;
  std::vector<ScatterSeries> series;
  std::vector<ReferenceLine> references;
  bool diagonal = false;  // the line y = x (predicted equals measured)
};

// Throws InputError on no point at all, a value that is not finite, or one a log axis cannot
// place (not positive); linear axes start at 0 and need values >= 0.
[[nodiscard]] std::string render_scatter_svg(const ScatterChart& chart);

// The colour of the i-th series or segment label (twenty, then again).
[[nodiscard]] std::string_view chart_colour(std::size_t index);

}  // namespace roofline::plot
