// Lays the chart out in pixels: axes, roofs, markers, and labels placed greedily so that no two
// texts overlap.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "roofline/plot/plot.hpp"

namespace roofline::plot {
namespace {

constexpr double canvas_width = 960;
constexpr double plot_top = 48;
constexpr double min_plot_height = 500;
constexpr double min_pixels_per_decade = 70;  // of y, so that roofs a decade apart have room for labels
constexpr double right_margin = 28;
constexpr double edge = 12;        // free border around the whole chart
constexpr double title_size = 16;  // chart title
constexpr double axis_title_size = 13;
constexpr double text_size = 12;       // ticks, roof and point labels, legend
constexpr double label_clearance = 2;  // kept free around every label box
constexpr double marker_radius = 5.5;  // the largest marker, for collision boxes

// Line and text colours with at least 4.5:1 contrast on white, told apart by hue.
constexpr std::array<std::string_view, 8> compute_colors{"#1f5fa8", "#c4480c", "#1a7f4e", "#8e3b96",
                                                         "#8a6100", "#0f7c8c", "#b0306a", "#5b5b5b"};
constexpr std::array<std::string_view, 4> memory_colors{"#2b2b2b", "#7f5a1e", "#46626b", "#6b6b6b"};
constexpr std::string_view text_color = "#1a1a1a";
constexpr std::string_view axis_text_color = "#333333";
constexpr std::string_view model_color = "#1a1a1a";
constexpr std::string_view measured_color = "#b2182b";
constexpr std::string_view legend_color = "#555555";

// Vertical offset from a box centre to its baseline, so a label centres on a marker.
constexpr double centre_to_baseline = (font_ascent - font_descent) / 2 * text_size;

// Compute roofs of equal peak and provenance (fp16 and bf16 on most GPUs) share one line and
// one label, so that lines never hide each other.
struct RoofGroup {
  std::vector<std::string> labels;
  double peak_flops = 0;
  Provenance provenance = Provenance::datasheet;
};

std::vector<RoofGroup> group_compute_roofs(const std::vector<ComputeRoof>& roofs) {
  std::vector<RoofGroup> groups;
  for (const ComputeRoof& roof : roofs) {
    const auto same = std::find_if(groups.begin(), groups.end(), [&](const RoofGroup& g) {
      return g.provenance == roof.provenance && std::abs(g.peak_flops - roof.peak_flops) <= 1e-9 * roof.peak_flops;
    });
    if (same != groups.end()) {
      if (std::find(same->labels.begin(), same->labels.end(), roof.label) == same->labels.end()) {
        same->labels.push_back(roof.label);
      }
    } else {
      groups.push_back({{roof.label}, roof.peak_flops, roof.provenance});
    }
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const RoofGroup& a, const RoofGroup& b) { return a.peak_flops > b.peak_flops; });
  return groups;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) text += separator;
    text += parts[i];
  }
  return text;
}

Label make_label(std::string text, Vec2 at, TextAnchor anchor, double size, std::string_view color, LabelRole role,
                 bool vertical = false) {
  Label label{std::move(text), at, anchor, size, std::string(color), role, vertical, {}};
  label.box = text_box(label.text, at, anchor, size, vertical);
  return label;
}

// One spot a label may take: where its baseline anchor goes and how the text hangs from it.
struct Candidate {
  Vec2 at;
  TextAnchor anchor = TextAnchor::start;
  std::optional<Vec2> leader_from;  // draw a leader line from this point when placed here
  int tier = 0;                     // how far from its anchor: see Obstacles::choose
};

using Segment = std::pair<Vec2, Vec2>;

// A leader line from a marker to the nearest point of its label's box, starting clear of the
// marker; none when the label sits next to the marker.
std::optional<Segment> leader_segment(const Box& box, Vec2 centre) {
  const Vec2 end{std::clamp(centre.x, box.x, box.right()), std::clamp(centre.y, box.y, box.bottom())};
  const double length = std::hypot(end.x - centre.x, end.y - centre.y);
  constexpr double gap = marker_radius * 1.5;  // outside the marker's box, corners included
  if (length <= gap + 8) return std::nullopt;  // close enough to read as its label
  const Vec2 start{centre.x + (end.x - centre.x) * gap / length, centre.y + (end.y - centre.y) * gap / length};
  return Segment{start, end};
}

Box marker_box(Vec2 centre) {
  return {centre.x - marker_radius, centre.y - marker_radius, 2 * marker_radius, 2 * marker_radius};
}

// What placed labels must keep clear of. Texts and markers are hard limits for a label; a
// leader may cross a marker but not a text; lines are avoided where possible.
class Obstacles {
 public:
  explicit Obstacles(Box area) : area_(area) {}

  void add_text(const Box& box) { texts_.push_back(box.inflated(label_clearance)); }
  void add_marker(Vec2 centre, bool is_point) {
    markers_.push_back(marker_box(centre));
    if (is_point) points_.push_back(centre);
  }
  void add_line(const std::vector<Vec2>& pixels) {
    for (std::size_t i = 1; i < pixels.size(); ++i) segments_.push_back({pixels[i - 1], pixels[i]});
  }
  void add_segment(Vec2 a, Vec2 b) { segments_.push_back({a, b}); }

  // The candidate of least cost among those whose text is clear of every text and marker and
  // whose leader crosses no text (none if all collide). A spot costs 2 per tier away from its
  // anchor, 3 per line its text crosses, 3 per marker its leader crosses, and 3 when the label of
  // the point at `own` would sit nearer another point than its own: so a label next to its point
  // across one line wins over one two tiers away. Ties go to the earlier spot.
  [[nodiscard]] std::optional<std::size_t> choose(const std::vector<Candidate>& candidates, std::string_view text,
                                                  double size, std::optional<Vec2> own = std::nullopt) const {
    std::optional<std::size_t> best;
    int best_cost = 0;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const Candidate& candidate = candidates[i];
      const Box box = text_box(text, candidate.at, candidate.anchor, size);
      const std::optional<Segment> leader =
          candidate.leader_from ? leader_segment(box, *candidate.leader_from) : std::nullopt;
      if (!clear(box, leader)) continue;
      const int cost = 2 * candidate.tier + 3 * lines_crossed(box) + 3 * (leader ? markers_crossed(*leader) : 0) +
                       (own && ambiguous(box, *own) ? 3 : 0);
      if (!best || cost < best_cost) {
        best = i;
        best_cost = cost;
      }
    }
    return best;
  }

 private:
  [[nodiscard]] bool clear(const Box& box, const std::optional<Segment>& leader) const {
    if (!area_.contains(box)) return false;
    const Box padded = box.inflated(label_clearance);
    const auto hits = [&](const Box& other) { return padded.intersects(other); };
    if (std::any_of(texts_.begin(), texts_.end(), hits) || std::any_of(markers_.begin(), markers_.end(), hits)) {
      return false;
    }
    return !leader || std::none_of(texts_.begin(), texts_.end(), [&](const Box& other) {
      return segment_intersects(leader->first, leader->second, other.inflated(-label_clearance));
    });
  }

  [[nodiscard]] int markers_crossed(const Segment& leader) const {
    return static_cast<int>(std::count_if(markers_.begin(), markers_.end(), [&](const Box& marker) {
      return segment_intersects(leader.first, leader.second, marker);
    }));
  }

  [[nodiscard]] bool ambiguous(const Box& box, Vec2 own) const {
    const auto distance = [&](Vec2 p) {
      return std::hypot(p.x - std::clamp(p.x, box.x, box.right()), p.y - std::clamp(p.y, box.y, box.bottom()));
    };
    const double mine = distance(own);
    return std::any_of(points_.begin(), points_.end(), [&](Vec2 p) { return distance(p) < mine - 1; });
  }

  [[nodiscard]] int lines_crossed(const Box& box) const {
    const Box snug = box.inflated(1);
    return static_cast<int>(std::count_if(segments_.begin(), segments_.end(), [&](const Segment& s) {
      return segment_intersects(s.first, s.second, snug);
    }));
  }

  Box area_;
  std::vector<Box> texts_;    // placed texts, grown by the clearance
  std::vector<Box> markers_;  // ridges and points
  std::vector<Segment> segments_;
  std::vector<Vec2> points_;  // centres of the chart's points, for telling labels apart
};

// The smallest stride (in decades) at which tick labels of `extent` pixels, `spacing` pixels
// apart per decade, leave a gap between neighbours.
int label_stride(double extent, double spacing) {
  int stride = 1;
  while (stride * spacing < extent + 12) ++stride;
  return stride;
}

std::vector<Tick> make_ticks(double lo, double hi, const LogAxis& axis, double label_extent) {
  const std::vector<double> values = decade_ticks(lo, hi);
  const double per_decade = std::abs(axis.pixel_hi - axis.pixel_lo) / std::log10(hi / lo);
  const int stride = label_stride(label_extent, per_decade);
  std::vector<Tick> ticks;
  for (double value : values) {
    const auto exponent = static_cast<long>(std::lround(std::log10(value)));
    ticks.push_back({value, axis.to_pixel(value), exponent % stride == 0});
  }
  return ticks;
}

// Spots around a point, nearest first, in tiers of three rings starting at `first_tier`; a label
// away from its point gets a leader line. On each ring the label's nearest edge or corner sits
// at the ring in one of 16 directions: the 8 of the compass first, then those between them.
std::vector<Candidate> around(Vec2 centre, int first_tier) {
  constexpr std::array<double, 14> radii{7, 14, 24, 36, 50, 66, 86, 110, 140, 180, 230, 290, 360, 440};
  // (cos, sin) of the directions, y pointing down as on screen: E, NE, SE, W, NW, SW, N, S, then
  // 22.5 degrees off each of them.
  constexpr double c45 = 0.7071;
  constexpr double c22 = 0.9239;
  constexpr double s22 = 0.3827;
  constexpr std::array<Vec2, 16> directions{{{1, 0},
                                             {c45, -c45},
                                             {c45, c45},
                                             {-1, 0},
                                             {-c45, -c45},
                                             {-c45, c45},
                                             {0, -1},
                                             {0, 1},
                                             {c22, -s22},
                                             {c22, s22},
                                             {-c22, -s22},
                                             {-c22, s22},
                                             {s22, -c22},
                                             {-s22, -c22},
                                             {s22, c22},
                                             {-s22, c22}}};
  std::vector<Candidate> spots;
  for (std::size_t ring = 0; ring < radii.size(); ++ring) {
    const int tier = first_tier + static_cast<int>(ring / 3);
    for (const Vec2& d : directions) {
      const Vec2 p{centre.x + radii[ring] * d.x, centre.y + radii[ring] * d.y};
      const TextAnchor anchor = d.x > 0.5 ? TextAnchor::start : (d.x < -0.5 ? TextAnchor::end : TextAnchor::middle);
      double baseline = p.y + centre_to_baseline;                 // centred on p
      if (d.y < -0.5) baseline = p.y - font_descent * text_size;  // bottom at p
      if (d.y > 0.5) baseline = p.y + font_ascent * text_size;    // top at p
      spots.push_back({{p.x, baseline}, anchor, centre, tier});
    }
  }
  return spots;
}

Vec2 to_pixels(const Layout& layout, Vec2 data) {
  return {layout.x.to_pixel(data.x), layout.y.to_pixel(data.y)};
}

Line make_line(const Layout& layout, std::vector<Vec2> data, std::string_view color, Provenance provenance,
               std::string tooltip) {
  Line line{std::move(data), {}, std::string(color), line_style(provenance), 2, std::move(tooltip)};
  for (const Vec2& vertex : line.data) line.pixels.push_back(to_pixels(layout, vertex));
  return line;
}

void lay_out_axes(Layout& layout, const std::string& title) {
  const Ranges& r = layout.ranges;
  // Tick labels are in TFLOP/s on y; the widest sets the left margin.
  double widest_y = 0;
  for (double value : decade_ticks(r.flops_lo, r.flops_hi)) {
    widest_y = std::max(widest_y, text_width(tick_label(value / 1e12), text_size));
  }
  const double left = edge + axis_title_size + 12 + widest_y + 8;
  layout.width = canvas_width;
  const double plot_height = std::max(min_plot_height, min_pixels_per_decade * std::log10(r.flops_hi / r.flops_lo));
  layout.plot_area = {left, plot_top, canvas_width - right_margin - left, plot_height};
  const Box& area = layout.plot_area;
  layout.x = {r.intensity_lo, r.intensity_hi, area.x, area.right()};
  layout.y = {r.flops_lo, r.flops_hi, area.bottom(), area.y};

  double widest_x = 0;
  for (double value : decade_ticks(r.intensity_lo, r.intensity_hi)) {
    widest_x = std::max(widest_x, text_width(tick_label(value), text_size));
  }
  layout.x_ticks = make_ticks(r.intensity_lo, r.intensity_hi, layout.x, widest_x);
  layout.y_ticks = make_ticks(r.flops_lo, r.flops_hi, layout.y, (font_ascent + font_descent) * text_size);
  for (double value : minor_ticks(r.intensity_lo, r.intensity_hi)) layout.x_minor.push_back(layout.x.to_pixel(value));
  for (double value : minor_ticks(r.flops_lo, r.flops_hi)) layout.y_minor.push_back(layout.y.to_pixel(value));

  for (const Tick& tick : layout.x_ticks) {
    if (!tick.labelled) continue;
    layout.labels.push_back(make_label(tick_label(tick.value), {tick.pixel, area.bottom() + 20}, TextAnchor::middle,
                                       text_size, axis_text_color, LabelRole::tick));
  }
  for (const Tick& tick : layout.y_ticks) {
    if (!tick.labelled) continue;
    layout.labels.push_back(make_label(tick_label(tick.value / 1e12), {area.x - 8, tick.pixel + centre_to_baseline},
                                       TextAnchor::end, text_size, axis_text_color, LabelRole::tick));
  }
  layout.labels.push_back(make_label("Arithmetic intensity [FLOP/byte]  (bytes read + written)",
                                     {area.x + area.width / 2, area.bottom() + 44}, TextAnchor::middle, axis_title_size,
                                     axis_text_color, LabelRole::axis_title));
  layout.labels.push_back(
      make_label("Performance [TFLOP/s]", {edge + font_ascent * axis_title_size, area.y + area.height / 2},
                 TextAnchor::middle, axis_title_size, axis_text_color, LabelRole::axis_title, true));
  layout.labels.push_back(make_label(title, {canvas_width / 2, edge + font_ascent * title_size + 4}, TextAnchor::middle,
                                     title_size, text_color, LabelRole::title));
}

struct RoofLabelRequest {
  std::string text;
  std::string color;
  LabelRole role;
  std::vector<Candidate> spots;
};

// Spots along a horizontal roof from its ridge to the right edge: above it (tier 0), then below
// it (tier 1: a label below its line wins over one above that crosses the rising roof, whose
// line would vanish under the text); then around points of the line with a leader (tiers 3 and
// up).
std::vector<Candidate> along_horizontal(double ridge_x, double right, double y) {
  // 10 px off the line: clear of the markers that sit on it.
  const double above = y - 10 - font_descent * text_size;
  const double below = y + 10 + font_ascent * text_size;
  const double first = ridge_x + 10;
  const double last = right - 6;
  std::vector<Candidate> spots;
  for (const auto& [baseline, tier] : {std::pair{above, 0}, std::pair{below, 1}}) {
    spots.push_back({{last, baseline}, TextAnchor::end, std::nullopt, tier});
    spots.push_back({{first, baseline}, TextAnchor::start, std::nullopt, tier});
    for (const double t : {0.5, 0.25, 0.75}) {
      spots.push_back({{first + t * (last - first), baseline}, TextAnchor::middle, std::nullopt, tier});
    }
  }
  for (const double x : {last - 20, (first + last) / 2, first + 20}) {
    const std::vector<Candidate> further = around({x, y}, 3);
    spots.insert(spots.end(), further.begin(), further.end());
  }
  return spots;
}

// Spots beside a rising roof: above-left of it (the empty side) first, then below-right; then
// around points of it, with a leader.
std::vector<Candidate> along_diagonal(Vec2 from, Vec2 to) {
  constexpr std::array<double, 7> fractions{0.5, 0.35, 0.65, 0.2, 0.8, 0.1, 0.9};
  std::vector<Candidate> spots;
  for (const bool upper : {true, false}) {
    for (double t : fractions) {
      const Vec2 p{from.x + t * (to.x - from.x), from.y + t * (to.y - from.y)};
      if (upper) {
        spots.push_back({{p.x - 5, p.y - 5 - font_descent * text_size}, TextAnchor::end, std::nullopt, 0});
      } else {
        spots.push_back({{p.x + 7, p.y + 7 + font_ascent * text_size}, TextAnchor::start, std::nullopt, 0});
      }
    }
  }
  for (const double t : {0.5, 0.25, 0.75}) {
    const std::vector<Candidate> further = around({from.x + t * (to.x - from.x), from.y + t * (to.y - from.y)}, 1);
    spots.insert(spots.end(), further.begin(), further.end());
  }
  return spots;
}

void lay_out_legend(Layout& layout, const Chart& chart) {
  std::vector<LegendItem> items;
  for (const Provenance provenance : {Provenance::datasheet, Provenance::measured, Provenance::user}) {
    const auto from = [&](const auto& roof) { return roof.provenance == provenance; };
    if (std::none_of(chart.compute_roofs.begin(), chart.compute_roofs.end(), from) &&
        std::none_of(chart.memory_roofs.begin(), chart.memory_roofs.end(), from)) {
      continue;
    }
    static constexpr std::array<std::string_view, 3> texts{"roof: datasheet figure", "roof: measured on the GPU",
                                                           "roof: given on the command line"};
    items.push_back({std::string(texts[static_cast<std::size_t>(provenance)]),
                     line_style(provenance),
                     MarkerShape::ridge,
                     std::string(legend_color),
                     {},
                     {}});
  }
  items.push_back({"ridge point", std::nullopt, MarkerShape::ridge, std::string(legend_color), {}, {}});
  const auto any_of_kind = [&](PointKind kind) {
    return std::any_of(chart.points.begin(), chart.points.end(), [&](const Point& p) { return p.kind == kind; });
  };
  if (any_of_kind(PointKind::model)) {
    items.push_back({"model prediction", std::nullopt, MarkerShape::model_point, std::string(model_color), {}, {}});
  }
  if (any_of_kind(PointKind::measured)) {
    items.push_back(
        {"measured kernel", std::nullopt, MarkerShape::measured_point, std::string(measured_color), {}, {}});
  }

  // Rows under the x axis title, centred on the plot, wrapping where the plot ends: outside the
  // plot, the legend can never cover a roof or a point.
  constexpr double symbol = 24;
  constexpr double symbol_gap = 6;
  constexpr double item_gap = 22;
  constexpr double row_height = 20;
  const Box& area = layout.plot_area;
  const auto item_width = [&](const LegendItem& item) {
    return symbol + symbol_gap + text_width(item.text, text_size);
  };
  std::vector<std::vector<std::size_t>> rows{{}};
  double row_width = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const double width = item_width(items[i]);
    if (!rows.back().empty() && row_width + item_gap + width > area.width) {
      rows.emplace_back();
      row_width = 0;
    }
    row_width += (rows.back().empty() ? 0 : item_gap) + width;
    rows.back().push_back(i);
  }
  double baseline = area.bottom() + 72;
  for (const auto& row : rows) {
    double total = 0;
    for (std::size_t i : row) total += item_width(items[i]) + (i == row.front() ? 0 : item_gap);
    double x = area.x + (area.width - total) / 2;
    for (std::size_t i : row) {
      LegendItem& item = items[i];
      item.symbol_at = {x + symbol / 2, baseline - centre_to_baseline};
      item.label = make_label(item.text, {x + symbol + symbol_gap, baseline}, TextAnchor::start, text_size,
                              legend_color, LabelRole::legend);
      x += item_width(item) + item_gap;
    }
    baseline += row_height;
  }
  layout.legend = std::move(items);
  layout.height = std::ceil(baseline - row_height + font_descent * text_size + edge);  // whole pixels
}

}  // namespace

LineStyle line_style(Provenance provenance) {
  switch (provenance) {
    case Provenance::datasheet: return LineStyle::solid;
    case Provenance::measured: return LineStyle::dashed;
    case Provenance::user: return LineStyle::dotted;
  }
  return LineStyle::solid;
}

Layout layout_chart(const Chart& chart) {
  Layout layout;
  layout.title = chart.title;
  layout.ranges = auto_ranges(chart);  // validates the chart
  lay_out_axes(layout, chart.title);
  const Box& area = layout.plot_area;
  const Ranges& r = layout.ranges;

  // Roofs: each compute roof runs flat from its ridge on main memory to the right edge; each
  // memory roof rises from the left edge to the highest compute roof. Together they draw
  // min(peak, AI x bandwidth) for every pair that the chart defines.
  const std::vector<RoofGroup> groups = group_compute_roofs(chart.compute_roofs);
  const MemoryRoof& main_memory = chart.memory_roofs.front();
  const double top_peak = groups.front().peak_flops;
  std::vector<RoofLabelRequest> requests;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const RoofGroup& group = groups[g];
    const std::string_view color = compute_colors[g % compute_colors.size()];
    const double ridge = group.peak_flops / main_memory.bandwidth_bytes_per_s;
    const std::string text = fmt::format("{}: {} TFLOP/s · ridge {} FLOP/B", join(group.labels, " · "),
                                         short_number(group.peak_flops / 1e12), short_number(ridge, 3));
    layout.roofs.push_back(make_line(layout, {{ridge, group.peak_flops}, {r.intensity_hi, group.peak_flops}}, color,
                                     group.provenance, fmt::format("{} ({})", text, name_of(group.provenance))));
    layout.markers.push_back({{ridge, group.peak_flops},
                              to_pixels(layout, {ridge, group.peak_flops}),
                              MarkerShape::ridge,
                              std::string(color),
                              fmt::format("ridge of {} on {}: {} FLOP/B", join(group.labels, " · "), main_memory.label,
                                          short_number(ridge))});
    const Vec2 ridge_px = layout.markers.back().pixel;
    requests.push_back(
        {text, std::string(color), LabelRole::compute_roof, along_horizontal(ridge_px.x, area.right(), ridge_px.y)});
  }
  for (std::size_t m = 0; m < chart.memory_roofs.size(); ++m) {
    const MemoryRoof& roof = chart.memory_roofs[m];
    const std::string_view color = memory_colors[m % memory_colors.size()];
    const double ridge = top_peak / roof.bandwidth_bytes_per_s;
    std::string text = fmt::format("{}: {} TB/s", roof.label, short_number(roof.bandwidth_bytes_per_s / 1e12));
    if (m > 0) text += fmt::format(" · ridge {} FLOP/B", short_number(ridge, 3));
    layout.roofs.push_back(make_line(layout,
                                     {{r.intensity_lo, r.intensity_lo * roof.bandwidth_bytes_per_s}, {ridge, top_peak}},
                                     color, roof.provenance, fmt::format("{} ({})", text, name_of(roof.provenance))));
    const Line& line = layout.roofs.back();
    if (m > 0) {
      layout.markers.push_back({{ridge, top_peak},
                                line.pixels.back(),
                                MarkerShape::ridge,
                                std::string(color),
                                fmt::format("ridge of {} on {}: {} FLOP/B", join(groups.front().labels, " · "),
                                            roof.label, short_number(ridge))});
    }
    requests.push_back(
        {text, std::string(color), LabelRole::memory_roof, along_diagonal(line.pixels.front(), line.pixels.back())});
  }
  for (const Point& point : chart.points) {
    const bool measured = point.kind == PointKind::measured;
    layout.markers.push_back({{point.intensity, point.flops},
                              to_pixels(layout, {point.intensity, point.flops}),
                              measured ? MarkerShape::measured_point : MarkerShape::model_point,
                              std::string(measured ? measured_color : model_color),
                              fmt::format("{}: {} FLOP/B, {} TFLOP/s ({})", point.label, short_number(point.intensity),
                                          short_number(point.flops / 1e12), name_of(point.kind))});
  }

  // Labels, greedily: everything already placed is an obstacle for what follows.
  Obstacles obstacles(area.inflated(-2));
  for (const Label& label : layout.labels) obstacles.add_text(label.box);
  for (const Marker& marker : layout.markers) obstacles.add_marker(marker.pixel, marker.shape != MarkerShape::ridge);
  for (const Line& line : layout.roofs) obstacles.add_line(line.pixels);

  const auto place = [&](const std::string& text, const std::string& color, LabelRole role,
                         const std::vector<Candidate>& spots, std::optional<Vec2> own) {
    const std::optional<std::size_t> chosen = obstacles.choose(spots, text, text_size, own);
    if (!chosen) return false;
    const Candidate& spot = spots[*chosen];
    Label label = make_label(text, spot.at, spot.anchor, text_size, color, role);
    obstacles.add_text(label.box);
    if (const auto leader = spot.leader_from ? leader_segment(label.box, *spot.leader_from) : std::nullopt) {
      obstacles.add_segment(leader->first, leader->second);
      layout.leaders.push_back({{}, {leader->first, leader->second}, "#8c8c8c", LineStyle::solid, 0.8, ""});
    }
    layout.labels.push_back(std::move(label));
    return true;
  };
  for (const RoofLabelRequest& request : requests) {
    if (!place(request.text, request.color, request.role, request.spots, std::nullopt)) {
      layout.unplaced.push_back(request.text);
    }
  }
  for (std::size_t i = 0; i < chart.points.size(); ++i) {
    const Marker& marker = layout.markers[layout.markers.size() - chart.points.size() + i];
    if (!place(chart.points[i].label, std::string(text_color), LabelRole::point, around(marker.pixel, 0),
               marker.pixel)) {
      layout.unplaced.push_back(chart.points[i].label);
    }
  }

  lay_out_legend(layout, chart);
  return layout;
}

std::string unplaced_summary(const Layout& layout) {
  std::vector<std::pair<std::string, std::size_t>> families;
  for (const std::string& name : layout.unplaced) {
    const std::string family = name.substr(0, name.find_first_of("./: "));
    const auto same = std::find_if(families.begin(), families.end(), [&](const auto& f) { return f.first == family; });
    if (same == families.end()) {
      families.emplace_back(family, 1);
    } else {
      ++same->second;
    }
  }
  std::stable_sort(families.begin(), families.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  constexpr std::size_t shown = 6;
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < std::min(shown, families.size()); ++i) {
    parts.push_back(fmt::format("{}: {}", families[i].first, families[i].second));
  }
  if (families.size() > shown) parts.emplace_back(fmt::format("{} more groups", families.size() - shown));
  return fmt::format("no room for {} of {} labels ({}): they are their markers' tooltips", layout.unplaced.size(),
                     layout.unplaced.size() + layout.labels.size() -
                         static_cast<std::size_t>(std::count_if(layout.labels.begin(), layout.labels.end(),
                                                                [](const Label& l) {
                                                                  return l.role != LabelRole::point &&
                                                                         l.role != LabelRole::compute_roof &&
                                                                         l.role != LabelRole::memory_roof;
                                                                })),
                     fmt::join(parts, ", "));
}

}  // namespace roofline::plot
