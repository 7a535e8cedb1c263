// Bar and scatter charts (roofline/plot/charts.hpp).
#include "roofline/plot/charts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/plot/plot.hpp"
#include "roofline/plot/timeline.hpp"

namespace roofline::plot {
namespace {

// Tableau 20: ten distinct hues, then their light tints, so that a step's dozen ops stay apart.
constexpr std::array<std::string_view, 20> palette{
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
    "#a0cbe8", "#ffbe7d", "#ff9d9a", "#86bcb6", "#8cd17d", "#f1ce63", "#d4a6c8", "#fabfd2", "#d7b5a6", "#79706e"};
constexpr double chart_width = 900;
constexpr double font_size = 12;
constexpr double title_size = 15;

std::string svg_open(double width, double height, const std::string& title) {
  return fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1:.0f}" viewBox="0 0 {0} {1:.0f}" )"
      R"(font-family="{2}" font-size="{3}" role="img">)"
      "\n<title>{4}</title>\n"
      R"(<rect width="{0}" height="{1:.0f}" fill="#ffffff"/>)"
      "\n"
      R"(<text x="16" y="26" font-size="{5}" font-weight="bold">{4}</text>)"
      "\n",
      width, height, font_family, font_size, xml_escape(title), title_size);
}

void require_finite(double value, std::string_view chart, std::string_view what) {
  if (!std::isfinite(value)) throw InputError(fmt::format("{} chart: {} is not finite", chart, what));
}

// One chart axis: linear from 0 to a round top, or logarithmic over whole decades.
struct Axis {
  Scale scale = Scale::linear;
  double lo = 0;
  double hi = 1;
  double pixel_lo = 0;
  double pixel_hi = 1;
  std::vector<double> ticks;

  [[nodiscard]] double to_pixel(double value) const {
    const double f = scale == Scale::log ? (std::log10(value) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                                         : (value - lo) / (hi - lo);
    return pixel_lo + f * (pixel_hi - pixel_lo);
  }
};

Axis make_axis(Scale scale, double min, double max, double pixel_lo, double pixel_hi) {
  Axis axis{scale, 0, 1, pixel_lo, pixel_hi, {}};
  if (scale == Scale::linear) {
    axis.ticks = linear_ticks(max);
    axis.hi = axis.ticks.back();
    return axis;
  }
  axis.lo = std::pow(10.0, std::floor(std::log10(min)));
  axis.hi = std::pow(10.0, std::ceil(std::log10(max)));
  if (axis.hi <= axis.lo) axis.hi = axis.lo * 10;
  axis.ticks = decade_ticks(axis.lo, axis.hi);
  return axis;
}

std::string tick_text(const Axis& axis, double value) {
  return axis.scale == Scale::log ? tick_label(value) : short_number(value);
}

}  // namespace

std::string_view chart_colour(std::size_t index) {
  return palette[index % palette.size()];
}

std::string render_bar_chart_svg(const BarChart& chart) {
  if (chart.bars.empty()) throw InputError("bar chart: no bar");
  std::vector<std::string> legend;  // segment labels in order of first appearance
  double longest = 0;
  double left_width = 0;
  for (const Bar& bar : chart.bars) {
    if (bar.segments.empty()) throw InputError(fmt::format("bar chart: bar '{}' has no segment", bar.label));
    double total = 0;
    for (const BarSegment& s : bar.segments) {
      require_finite(s.value, "bar", s.label);
      if (s.value < 0) throw InputError(fmt::format("bar chart: segment '{}' is negative", s.label));
      total += s.value;
      if (std::find(legend.begin(), legend.end(), s.label) == legend.end()) legend.push_back(s.label);
    }
    longest = std::max(longest, total);
    left_width = std::max(left_width, text_width(bar.label, font_size));
  }
  const double bar_height = 24;
  const double bar_gap = 14;
  const double top = 48;
  const double left = 24 + left_width;
  const double right = 150;  // room for the notes
  const double plot_width = chart_width - left - right;
  const double bars_height = static_cast<double>(chart.bars.size()) * (bar_height + bar_gap);
  const double legend_top = top + bars_height + 62;  // below the axis title
  // Legend entries flow in rows across the chart's width.
  std::vector<std::pair<double, double>> legend_at;
  double lx = 16;
  double ly = legend_top;
  for (const std::string& label : legend) {
    const double w = 22 + text_width(label, font_size) + 18;
    if (lx + w > chart_width - 16) {
      lx = 16;
      ly += 20;
    }
    legend_at.emplace_back(lx, ly);
    lx += w;
  }
  const double height = ly + 24;
  const Axis axis = make_axis(Scale::linear, 0, chart.shares ? 100.0 : longest, left, left + plot_width);

  std::string svg = svg_open(chart_width, height, chart.title);
  const double axis_y = top + bars_height;
  for (const double t : axis.ticks) {
    svg += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="#dddddd"/>)",
                       axis.to_pixel(t), top - 4, axis_y);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", axis.to_pixel(t), axis_y + 16,
                       short_number(t));
    svg += '\n';
  }
  svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", left + plot_width / 2,
                     axis_y + 34, xml_escape(chart.shares ? "share of each bar's total [%]" : chart.axis_label));
  svg += '\n';
  for (std::size_t b = 0; b < chart.bars.size(); ++b) {
    const Bar& bar = chart.bars[b];
    const double y = top + static_cast<double>(b) * (bar_height + bar_gap);
    double total = 0;
    for (const BarSegment& s : bar.segments) total += s.value;
    const double scale = chart.shares ? (total > 0 ? 100.0 / total : 0.0) : 1.0;
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", left - 8, y + bar_height / 2 + 4,
                       xml_escape(bar.label));
    svg += fmt::format("\n<g data-bar=\"{}\">\n", xml_escape(bar.label));
    double start = 0;
    for (const BarSegment& s : bar.segments) {
      const auto colour = static_cast<std::size_t>(std::find(legend.begin(), legend.end(), s.label) - legend.begin());
      const double x0 = axis.to_pixel(start * scale);
      const double x1 = axis.to_pixel((start + s.value) * scale);
      svg += fmt::format(
          R"(<rect x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{}" fill="{}" stroke="#ffffff" stroke-width="0.5" )"
          R"(data-label="{}" data-value="{}"><title>{}</title></rect>)",
          x0, y, std::max(x1 - x0, 0.0), bar_height, chart_colour(colour), xml_escape(s.label), s.value,
          xml_escape(s.tooltip.empty() ? s.label : s.tooltip));
      svg += '\n';
      start += s.value;
    }
    svg += "</g>\n";
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)", axis.to_pixel(start * scale) + 6,
                       y + bar_height / 2 + 4, xml_escape(bar.note));
    svg += '\n';
  }
  for (std::size_t i = 0; i < legend.size(); ++i) {
    const auto [x, y] = legend_at[i];
    svg += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="14" height="12" fill="{}"/>)", x, y - 10, chart_colour(i));
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)", x + 20, y, xml_escape(legend[i]));
    svg += '\n';
  }
  svg += "</svg>";
  return svg;
}

namespace {

// A diamond of half-diagonal 1.25 r around (x, y): about the area of a circle of radius r.
std::string diamond_path(double x, double y, double r) {
  const double h = 1.25 * r;
  return fmt::format("M{:.1f},{:.1f} L{:.1f},{:.1f} L{:.1f},{:.1f} L{:.1f},{:.1f} Z", x, y - h, x + h, y, x, y + h,
                     x - h, y);
}

}  // namespace

std::string render_scatter_svg(const ScatterChart& chart) {
  double x_min = INFINITY;
  double x_max = 0;
  double y_min = INFINITY;
  double y_max = 0;
  std::size_t points = 0;
  const auto place = [&](double value, Scale scale, std::string_view what, double& lo, double& hi) {
    require_finite(value, "scatter", what);
    if (scale == Scale::log ? !(value > 0) : value < 0) {
      throw InputError(fmt::format("scatter chart: {} = {} has no place on a {} axis", what, value,
                                   scale == Scale::log ? "log" : "linear (from 0)"));
    }
    lo = std::min(lo, value);
    hi = std::max(hi, value);
  };
  for (const ScatterSeries& series : chart.series) {
    for (const ScatterPoint& p : series.points) {
      place(p.x, chart.x_scale, p.label + " x", x_min, x_max);
      place(p.y, chart.y_scale, p.label + " y", y_min, y_max);
      ++points;
    }
  }
  if (points == 0) throw InputError("scatter chart: no point");
  for (const ReferenceLine& r : chart.references) {
    if (r.vertical) {
      place(r.value, chart.x_scale, r.label, x_min, x_max);
    } else {
      place(r.value, chart.y_scale, r.label, y_min, y_max);
    }
  }
  if (chart.diagonal) {
    // Both axes span the same range, so that y = x is the 45-degree line.
    x_min = y_min = std::min(x_min, y_min);
    x_max = y_max = std::max(x_max, y_max);
  }
  const double height = 520;
  const double left = 84;
  const double right = 210;
  const double top = 48;
  const double bottom = 60;
  const Axis x = make_axis(chart.x_scale, x_min, x_max, left, chart_width - right);
  const Axis y = make_axis(chart.y_scale, y_min, y_max, height - bottom, top);

  std::string svg = svg_open(chart_width, height, chart.title);
  for (const double t : x.ticks) {
    svg += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="#dddddd"/>)", x.to_pixel(t),
                       top, height - bottom);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", x.to_pixel(t),
                       height - bottom + 16, tick_text(x, t));
    svg += '\n';
  }
  for (const double t : y.ticks) {
    svg += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}" stroke="#dddddd"/>)", left,
                       y.to_pixel(t), chart_width - right);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", left - 6, y.to_pixel(t) + 4,
                       tick_text(y, t));
    svg += '\n';
  }
  svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#666666"/>)", left, top,
                     chart_width - right - left, height - bottom - top);
  svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", (left + chart_width - right) / 2,
                     height - 18, xml_escape(chart.x_label));
  svg +=
      fmt::format(R"~(<text x="{0}" y="{1:.1f}" text-anchor="middle" transform="rotate(-90 {0} {1:.1f})">{2}</text>)~",
                  22, (top + height - bottom) / 2, xml_escape(chart.y_label));
  svg += '\n';
  if (chart.diagonal) {
    svg +=
        fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#888888" stroke-dasharray="6 4">)"
                    "<title>y = x</title></line>\n",
                    x.to_pixel(x.lo), y.to_pixel(y.lo), x.to_pixel(x.hi), y.to_pixel(y.hi));
  }
  for (const ReferenceLine& r : chart.references) {
    const bool v = r.vertical;
    const double at = v ? x.to_pixel(r.value) : y.to_pixel(r.value);
    svg +=
        fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#c00000" stroke-dasharray="4 3">)"
                    "<title>{}: {}</title></line>\n",
                    v ? at : left, v ? top : at, v ? at : chart_width - right, v ? height - bottom : at,
                    xml_escape(r.label), short_number(r.value));
    svg +=
        fmt::format(R"(<text x="{:.1f}" y="{:.1f}" fill="#c00000"{}>{}</text>)", v ? at + 4 : chart_width - right - 4,
                    v ? top + 14 : at - 4, v ? "" : R"( text-anchor="end")", xml_escape(r.label));
    svg += '\n';
  }
  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    const ScatterSeries& series = chart.series[s];
    const std::string_view colour = series.colour.empty() ? chart_colour(s) : std::string_view(series.colour);
    svg += fmt::format("<g data-series=\"{}\">\n", xml_escape(series.name));
    if (series.connect && series.points.size() > 1) {
      std::string path;
      for (const ScatterPoint& p : series.points) {
        path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", x.to_pixel(p.x), y.to_pixel(p.y));
      }
      svg += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="1.5"/>)", path, colour);
      svg += '\n';
    }
    for (const ScatterPoint& p : series.points) {
      if (series.mark == ScatterMark::none) break;
      const std::string data =
          fmt::format(R"(fill="{}" fill-opacity="{:g}" stroke="#ffffff" stroke-width="0.8" data-label="{}" )"
                      R"(data-x="{}" data-y="{}")",
                      colour, series.opacity, xml_escape(p.label), p.x, p.y);
      const std::string title = xml_escape(p.tooltip.empty() ? p.label : p.tooltip);
      if (series.mark == ScatterMark::diamond) {
        svg += fmt::format(R"(<path d="{}" {}><title>{}</title></path>)",
                           diamond_path(x.to_pixel(p.x), y.to_pixel(p.y), series.radius), data, title);
      } else {
        svg += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="{:g}" {}><title>{}</title></circle>)", x.to_pixel(p.x),
                           y.to_pixel(p.y), series.radius, data, title);
      }
      svg += '\n';
    }
    svg += "</g>\n";
    const double ly = top + 12 + 20 * static_cast<double>(s);
    const double lx = chart_width - right + 18;
    if (series.mark == ScatterMark::none) {
      svg += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="1.5"/>)",
                         lx - 6, ly - 4, lx + 6, ly - 4, colour);
    } else if (series.mark == ScatterMark::diamond) {
      svg += fmt::format(R"(<path d="{}" fill="{}"/>)", diamond_path(lx, ly - 4, 5), colour);
    } else {
      svg += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="4" fill="{}"/>)", lx, ly - 4, colour);
    }
    svg +=
        fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)", chart_width - right + 28, ly, xml_escape(series.name));
    svg += '\n';
  }
  svg += "</svg>";
  return svg;
}

}  // namespace roofline::plot
