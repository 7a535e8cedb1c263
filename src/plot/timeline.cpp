// Quantities over time as a standalone SVG (roofline/plot/timeline.hpp).
#include "roofline/plot/timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/plot/plot.hpp"

namespace roofline::plot {
namespace {

constexpr double width = 900;
constexpr double panel_height = 170;
constexpr double panel_gap = 46;
constexpr double left = 80;
constexpr double right = 170;  // room for the legend
constexpr double top = 72;
constexpr double bottom = 52;
constexpr double font_size = 13;
constexpr std::array<std::string_view, 4> colours{"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};

void check(const TimelineChart& chart) {
  if (chart.time_s.empty()) throw InputError("timeline chart: no time point");
  if (chart.panels.empty()) throw InputError("timeline chart: no panel");
  for (const TimelinePanel& panel : chart.panels) {
    if (panel.lines.empty()) throw InputError(fmt::format("timeline chart: panel '{}' has no line", panel.label));
    for (const TimelineLine& line : panel.lines) {
      if (line.values.size() != chart.time_s.size()) {
        throw InputError(fmt::format("timeline chart: line '{}' has {} values for {} time points", line.name,
                                     line.values.size(), chart.time_s.size()));
      }
      if (std::any_of(line.values.begin(), line.values.end(), [](double v) { return !std::isfinite(v) || v < 0; })) {
        throw InputError(fmt::format("timeline chart: line '{}' has a negative or non-finite value", line.name));
      }
    }
  }
}

}  // namespace

std::vector<double> linear_ticks(double max) {
  if (!(max > 0) || !std::isfinite(max)) return {0.0, 1.0};
  const double raw = max / 5.0;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  double step = decade;
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * decade;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  for (int i = 0;; ++i) {
    ticks.push_back(step * i);
    if (step * i >= max) break;
  }
  return ticks;
}

std::string render_timeline_svg(const TimelineChart& chart) {
  check(chart);
  const auto panels = static_cast<double>(chart.panels.size());
  const double height = top + panels * panel_height + (panels - 1) * panel_gap + bottom;
  const double plot_width = width - left - right;
  const double t_end = std::max(chart.time_s.back(), 1e-12);
  const std::vector<double> t_ticks = linear_ticks(t_end);
  const double t_max = t_ticks.back();
  const auto x_of = [&](double t) { return left + plot_width * t / t_max; };

  std::string svg;
  const auto line = [&](const std::string& text) {
    svg += text;
    svg += '\n';
  };
  line(fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                   R"(font-family="{2}" font-size="{3}" role="img">)",
                   width, height, font_family, font_size));
  line(fmt::format("<title>{}</title>", xml_escape(chart.title)));
  line(fmt::format(R"(<rect width="{}" height="{}" fill="white"/>)", width, height));
  line(fmt::format(R"(<text x="{}" y="{}" font-size="15" font-weight="bold">{}</text>)", left, top - 42,
                   xml_escape(chart.title)));
  for (std::size_t p = 0; p < chart.panels.size(); ++p) {
    const TimelinePanel& panel = chart.panels[p];
    const double y0 = top + static_cast<double>(p) * (panel_height + panel_gap);
    double v_max = 0;
    for (const TimelineLine& l : panel.lines)
      v_max = std::max(v_max, *std::max_element(l.values.begin(), l.values.end()));
    const std::vector<double> v_ticks = linear_ticks(v_max);
    const double v_top = v_ticks.back();
    const auto y_of = [&](double v) { return y0 + panel_height * (1.0 - v / v_top); };
    for (const double v : v_ticks) {
      line(fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ddd"/>)", left, y_of(v),
                       left + plot_width, y_of(v)));
      line(fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", left - 6, y_of(v) + 4,
                       short_number(v)));
    }
    for (const double t : t_ticks) {
      line(fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#eee"/>)", x_of(t), y0, x_of(t),
                       y0 + panel_height));
    }
    line(fmt::format(R"(<rect x="{}" y="{:.1f}" width="{}" height="{}" fill="none" stroke="#444"/>)", left, y0,
                     plot_width, panel_height));
    line(fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-weight="bold">{}</text>)", left, y0 - 8,
                     xml_escape(panel.label)));
    for (std::size_t i = 0; i < panel.lines.size(); ++i) {
      const TimelineLine& l = panel.lines[i];
      const std::string_view colour = colours[i % colours.size()];
      std::string points;
      for (std::size_t k = 0; k < chart.time_s.size(); ++k) {
        points += fmt::format("{}{:.1f},{:.1f}", k == 0 ? "" : " ", x_of(chart.time_s[k]), y_of(l.values[k]));
      }
      line(fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="1.6" points="{}"/>)", colour, points));
      const double ly = y0 + 16 + 20 * static_cast<double>(i);
      line(fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="3"/>)",
                       left + plot_width + 14, ly - 4, left + plot_width + 36, ly - 4, colour));
      line(fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)", left + plot_width + 42, ly, xml_escape(l.name)));
    }
  }
  const double axis_y = top + panels * panel_height + (panels - 1) * panel_gap;
  for (const double t : t_ticks) {
    line(fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", x_of(t), axis_y + 18,
                     short_number(t)));
  }
  line(fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">time [s]</text>)", left + plot_width / 2,
                   axis_y + 40));
  line("</svg>");
  return svg;
}

}  // namespace roofline::plot
