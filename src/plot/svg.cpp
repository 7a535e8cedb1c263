// Writes a laid-out chart as a standalone SVG document.
#include <fmt/format.h>

#include <iterator>

#include "roofline/plot/plot.hpp"

namespace roofline::plot {
namespace {

constexpr std::string_view grid_major = "#d0d0d0";
constexpr std::string_view grid_minor = "#ececec";
constexpr std::string_view frame_color = "#666666";

// Pixel coordinates with one decimal: exact enough on screen and stable across platforms.
std::string px(double value) {
  return fmt::format("{:.1f}", value);
}

std::string_view anchor_name(TextAnchor anchor) {
  switch (anchor) {
    case TextAnchor::start: return "start";
    case TextAnchor::middle: return "middle";
    case TextAnchor::end: return "end";
  }
  return "start";
}

std::string_view dash_array(LineStyle style) {
  switch (style) {
    case LineStyle::solid: return "";
    case LineStyle::dashed: return " stroke-dasharray=\"8 5\"";
    case LineStyle::dotted: return " stroke-dasharray=\"1 4\"";
  }
  return "";
}

class Svg {
 public:
  void line(const std::string& text) {
    out_ += text;
    out_ += '\n';
  }
  [[nodiscard]] std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string title_element(const std::string& tooltip) {
  return tooltip.empty() ? "" : fmt::format("<title>{}</title>", xml_escape(tooltip));
}

std::string marker_element(MarkerShape shape, Vec2 at, std::string_view color, const std::string& tooltip) {
  switch (shape) {
    case MarkerShape::ridge:
      return fmt::format(R"(<circle cx="{}" cy="{}" r="4" fill="#ffffff" stroke="{}" stroke-width="1.8">{}</circle>)",
                         px(at.x), px(at.y), color, title_element(tooltip));
    case MarkerShape::model_point:
      return fmt::format(R"(<circle cx="{}" cy="{}" r="4.5" fill="{}" stroke="#ffffff" stroke-width="1">{}</circle>)",
                         px(at.x), px(at.y), color, title_element(tooltip));
    case MarkerShape::measured_point:
      return fmt::format(R"(<path d="M{} {}L{} {}L{} {}L{} {}Z" fill="#ffffff" stroke="{}" stroke-width="2">{}</path>)",
                         px(at.x), px(at.y - 5.5), px(at.x + 5.5), px(at.y), px(at.x), px(at.y + 5.5), px(at.x - 5.5),
                         px(at.y), color, title_element(tooltip));
  }
  return "";
}

std::string points_attribute(const std::vector<Vec2>& pixels) {
  std::string text;
  for (const Vec2& p : pixels) {
    if (!text.empty()) text += ' ';
    text += px(p.x) + "," + px(p.y);
  }
  return text;
}

std::string text_element(const Label& label, bool halo) {
  std::string attributes = fmt::format(R"(x="{}" y="{}" font-size="{}" fill="{}")", px(label.at.x), px(label.at.y),
                                       label.font_size, label.color);
  if (label.anchor != TextAnchor::start) attributes += fmt::format(R"( text-anchor="{}")", anchor_name(label.anchor));
  if (label.vertical) {
    attributes += fmt::format(R"~( transform="rotate(-90 {} {})")~", px(label.at.x), px(label.at.y));
  }
  // A white outline under the glyphs keeps a label readable where it crosses a gridline.
  if (halo) attributes += R"( stroke="#ffffff" stroke-width="3" stroke-linejoin="round" paint-order="stroke")";
  return fmt::format("<text {}>{}</text>", attributes, xml_escape(label.text));
}

}  // namespace

std::string render_svg(const Chart& chart) {
  return render_svg(layout_chart(chart));
}

std::string render_svg(const Layout& layout) {
  const Box& area = layout.plot_area;
  Svg svg;
  svg.line(R"(<?xml version="1.0" encoding="UTF-8"?>)");
  svg.line(fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                       R"(font-family="{2}" role="img">)",
                       layout.width, layout.height, font_family));
  svg.line(fmt::format("<title>{}</title>", xml_escape(layout.title)));
  svg.line(
      "<desc>Roofline chart, log-log: attainable TFLOP/s against arithmetic intensity in FLOP per byte read + "
      "written. Each roof is min(peak, intensity x bandwidth); circles on the roofs mark the ridge points.</desc>");
  svg.line(fmt::format(R"(<rect width="{}" height="{}" fill="#ffffff"/>)", layout.width, layout.height));
  svg.line(
      fmt::format(R"(<defs><clipPath id="plot-area"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath></defs>)",
                  px(area.x), px(area.y), px(area.width), px(area.height)));

  svg.line(fmt::format(R"(<g id="grid" stroke-width="1" fill="none">)"));
  for (double x : layout.x_minor) {
    svg.line(fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="{3}"/>)", px(x), px(area.y),
                         px(area.bottom()), grid_minor));
  }
  for (double y : layout.y_minor) {
    svg.line(fmt::format(R"(<line x1="{1}" y1="{0}" x2="{2}" y2="{0}" stroke="{3}"/>)", px(y), px(area.x),
                         px(area.right()), grid_minor));
  }
  for (const Tick& tick : layout.x_ticks) {
    svg.line(fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="{3}"/>)", px(tick.pixel), px(area.y),
                         px(area.bottom() + 5), grid_major));
  }
  for (const Tick& tick : layout.y_ticks) {
    svg.line(fmt::format(R"(<line x1="{1}" y1="{0}" x2="{2}" y2="{0}" stroke="{3}"/>)", px(tick.pixel), px(area.x - 5),
                         px(area.right()), grid_major));
  }
  svg.line(fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" stroke="{}"/>)", px(area.x), px(area.y),
                       px(area.width), px(area.height), frame_color));
  svg.line("</g>");

  svg.line(
      R"~(<g id="roofs" clip-path="url(#plot-area)" fill="none" stroke-linecap="round" stroke-linejoin="round">)~");
  for (const Line& roof : layout.roofs) {
    svg.line(fmt::format(R"(<polyline points="{}" stroke="{}" stroke-width="{}"{}>{}</polyline>)",
                         points_attribute(roof.pixels), roof.color, roof.width, dash_array(roof.style),
                         title_element(roof.tooltip)));
  }
  svg.line("</g>");

  svg.line(R"(<g id="leaders" fill="none">)");
  for (const Line& leader : layout.leaders) {
    svg.line(fmt::format(R"(<polyline points="{}" stroke="{}" stroke-width="{}"/>)", points_attribute(leader.pixels),
                         leader.color, leader.width));
  }
  svg.line("</g>");

  svg.line(R"(<g id="markers">)");
  for (const Marker& marker : layout.markers) {
    svg.line(marker_element(marker.shape, marker.pixel, marker.color, marker.tooltip));
  }
  svg.line("</g>");

  svg.line(R"(<g id="labels">)");
  for (const Label& label : layout.labels) {
    const bool inside =
        label.role == LabelRole::compute_roof || label.role == LabelRole::memory_roof || label.role == LabelRole::point;
    svg.line(text_element(label, inside));
  }
  svg.line("</g>");

  svg.line(R"(<g id="legend">)");
  for (const LegendItem& item : layout.legend) {
    const Vec2 c = item.symbol_at;
    if (item.line) {
      svg.line(fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2"{}/>)", px(c.x - 12),
                           px(c.y), px(c.x + 12), px(c.y), item.color, dash_array(*item.line)));
    } else {
      svg.line(marker_element(item.marker, c, item.color, ""));
    }
    svg.line(text_element(item.label, false));
  }
  svg.line("</g>");
  if (!layout.unplaced.empty()) {
    svg.line(fmt::format("<!-- no room for the labels of {} points: see their markers' tooltips -->",
                         layout.unplaced.size()));
  }
  svg.line("</svg>");
  return svg.take();
}

}  // namespace roofline::plot
