#pragma once

// The roofline chart: a plain data model (compute roofs, memory roofs, points) and a pure
// renderer to a standalone SVG. Whoever has roofs or points (the hardware file, `op`, `bench`,
// `profile`) fills a Chart; render_svg draws it. Values are SI: FLOP/s, bytes/s, FLOP/byte; the
// chart shows TFLOP/s. The renderer has no state and its output depends only on the Chart, so the
// same Chart always gives the same bytes.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roofline::plot {

// Where a roof's figure comes from; the line style shows it and the legend explains it.
enum class Provenance : std::uint8_t {
  datasheet,  // the hardware file (vendor datasheet or whitepaper)
  measured,   // a benchmark on the GPU
  user,       // given on the command line
};
[[nodiscard]] std::string_view name_of(Provenance provenance);

// A horizontal roof: the peak rate of one data type's math.
struct ComputeRoof {
  std::string label;      // e.g. "bf16"
  double peak_flops = 0;  // FLOP/s
  Provenance provenance = Provenance::datasheet;
};

// A diagonal roof: AI x bandwidth of one memory level (bytes read + written per second).
struct MemoryRoof {
  std::string label;  // e.g. "HBM3", "L2", "shared memory"
  double bandwidth_bytes_per_s = 0;
  Provenance provenance = Provenance::datasheet;
};

enum class PointKind : std::uint8_t {
  model,     // a prediction: what the model says an operation attains
  measured,  // a kernel timed on the GPU
};
[[nodiscard]] std::string_view name_of(PointKind kind);

struct Point {
  std::string label;
  double intensity = 0;  // FLOP per byte
  double flops = 0;      // FLOP/s
  PointKind kind = PointKind::model;
};

// What the chart shows. The first memory roof is main memory (HBM): every compute roof is drawn
// as min(peak, AI x that bandwidth) with its ridge at peak / bandwidth. Further memory roofs
// (L2, shared memory) rise to the highest compute roof, with their ridge there.
struct Chart {
  std::string title;
  std::vector<ComputeRoof> compute_roofs;
  std::vector<MemoryRoof> memory_roofs;
  std::vector<Point> points;
};

// Throws InputError naming the first problem: no compute roof, no memory roof, or a value that is
// not positive and finite (a log axis has no place for it).
void validate(const Chart& chart);

// ---- Building blocks, public so that tests can check them one by one ----

struct Vec2 {
  double x = 0;
  double y = 0;
};

// An axis-aligned box in pixels (y grows downwards, as in SVG).
struct Box {
  double x = 0;
  double y = 0;
  double width = 0;
  double height = 0;

  [[nodiscard]] double right() const { return x + width; }
  [[nodiscard]] double bottom() const { return y + height; }
  [[nodiscard]] Box inflated(double by) const { return {x - by, y - by, width + 2 * by, height + 2 * by}; }
  // True when the interiors overlap; boxes that only touch do not intersect.
  [[nodiscard]] bool intersects(const Box& other) const;
  [[nodiscard]] bool contains(const Box& other) const;
};

// True when the segment from a to b passes through the interior of the box.
[[nodiscard]] bool segment_intersects(Vec2 a, Vec2 b, const Box& box);

// A logarithmic axis: maps [lo, hi] (data) linearly in log10 onto [pixel_lo, pixel_hi]. A y axis
// has pixel_lo below pixel_hi on screen (pixel_lo > pixel_hi), since SVG's y grows downwards.
struct LogAxis {
  double lo = 1;
  double hi = 10;
  double pixel_lo = 0;
  double pixel_hi = 1;

  [[nodiscard]] double to_pixel(double value) const;
};

// The data ranges of the axes, whole decades that hold every ridge and every point with at least
// a factor `margin` to spare, and the memory roofs where they enter the chart on the left.
struct Ranges {
  double intensity_lo = 0;  // FLOP/byte
  double intensity_hi = 0;
  double flops_lo = 0;  // FLOP/s
  double flops_hi = 0;
};
inline constexpr double range_margin = 2.0;
[[nodiscard]] Ranges auto_ranges(const Chart& chart);

// Powers of ten in [lo, hi] (both ends included), ascending.
[[nodiscard]] std::vector<double> decade_ticks(double lo, double hi);
// 2..9 times each power of ten strictly inside (lo, hi), ascending: the minor gridlines.
[[nodiscard]] std::vector<double> minor_ticks(double lo, double hi);
// A power of ten as a reader wants it: "0.01", "1", "1000", "10000"; "1e-5" and "1e6" beyond.
[[nodiscard]] std::string tick_label(double power_of_ten);
// A figure with up to `digits` significant digits (all digits of its integer part) and no
// trailing zeros: 989.4, 1979, 67, 3.35 with four; 295, 20, 10.1 with three.
[[nodiscard]] std::string short_number(double value, int digits = 4);

// The font every text of the chart uses. Widths are the advance widths of Liberation Sans
// Regular, which is metric-compatible with Arial (and Arial with Helvetica), so the estimate
// holds for each family the SVG names.
inline constexpr std::string_view font_family = "'Liberation Sans', Arial, Helvetica, sans-serif";
// Width in pixels of UTF-8 text at `font_size` pixels. Characters the table lacks count as one
// em (wider than any Latin glyph), so an estimate errs on the wide side.
[[nodiscard]] double text_width(std::string_view text, double font_size);
// How far the ink of ASCII text reaches above and below the baseline, as a fraction of the font
// size (the glyph bounds of '$' and '|'); text_box widens this for the characters that need it
// (accented capitals, and anything outside the table).
inline constexpr double font_ascent = 1546.0 / 2048.0;
inline constexpr double font_descent = 434.0 / 2048.0;

// Text made safe for XML character data and attribute values: & < > " ' become entities,
// characters XML 1.0 forbids and invalid UTF-8 become U+FFFD.
[[nodiscard]] std::string xml_escape(std::string_view text);

// ---- The laid-out chart: every line, marker and text in pixels ----

enum class TextAnchor : std::uint8_t { start, middle, end };

enum class LabelRole : std::uint8_t { title, axis_title, tick, compute_roof, memory_roof, point, legend };

struct Label {
  std::string text;
  Vec2 at;  // the anchor point on the baseline
  TextAnchor anchor = TextAnchor::start;
  double font_size = 12;
  std::string color;
  LabelRole role = LabelRole::point;
  bool vertical = false;  // rotated -90 degrees about `at` (the y axis title)
  Box box;                // the space the text occupies, from the font metrics
};

// The box of a text at `at` with `anchor`: advance widths across, ink extent of its characters
// up and down.
[[nodiscard]] Box text_box(std::string_view text, Vec2 at, TextAnchor anchor, double font_size, bool vertical = false);

enum class LineStyle : std::uint8_t { solid, dashed, dotted };
[[nodiscard]] LineStyle line_style(Provenance provenance);

struct Line {
  std::vector<Vec2> data;    // FLOP/byte, FLOP/s
  std::vector<Vec2> pixels;  // the same vertices in pixels
  std::string color;
  LineStyle style = LineStyle::solid;
  double width = 2;
  std::string tooltip;
};

enum class MarkerShape : std::uint8_t { ridge, model_point, measured_point };

struct Marker {
  Vec2 data;  // FLOP/byte, FLOP/s
  Vec2 pixel;
  MarkerShape shape = MarkerShape::model_point;
  std::string color;
  std::string tooltip;
};

struct LegendItem {
  std::string text;
  std::optional<LineStyle> line;  // a line sample, or else a marker
  MarkerShape marker = MarkerShape::ridge;
  std::string color;  // of the sample
  Vec2 symbol_at;     // the centre of the sample
  Label label;
};

struct Tick {
  double value = 0;
  double pixel = 0;
  bool labelled = false;
};

struct Layout {
  std::string title;
  double width = 0;
  double height = 0;
  Box plot_area;
  Ranges ranges;
  LogAxis x;  // FLOP/byte
  LogAxis y;  // FLOP/s
  std::vector<Tick> x_ticks;
  std::vector<Tick> y_ticks;
  std::vector<double> x_minor;  // pixels
  std::vector<double> y_minor;
  std::vector<Line> roofs;
  std::vector<Marker> markers;  // ridges first, then points in the Chart's order
  std::vector<Line> leaders;    // thin lines from a point or roof to a label placed away from it
  std::vector<Label> labels;    // every text except the legend's
  std::vector<LegendItem> legend;
  std::vector<std::string> unplaced;  // labels with no free spot: left to the markers' and lines' tooltips
};

// Places everything: axes, roofs, ridges, points, then the labels greedily (roofs first, highest
// first, then points in order), each at the cheapest candidate spot whose box is clear of every
// text and marker placed so far; spots far from their anchor, across a line or nearer another
// point cost more.
[[nodiscard]] Layout layout_chart(const Chart& chart);

// One line for the reader about the labels that found no room: how many of how many became
// tooltips, grouped by the family their names start with (the text before the first '.', '/',
// ':' or space), largest group first, e.g. "no room for 412 of 455 labels (stream: 200, gemm:
// 150, ...): they are their markers' tooltips".
[[nodiscard]] std::string unplaced_summary(const Layout& layout);

// The standalone SVG of a laid-out chart.
[[nodiscard]] std::string render_svg(const Layout& layout);
// The standalone SVG of the chart: render_svg(layout_chart(chart)).
[[nodiscard]] std::string render_svg(const Chart& chart);

}  // namespace roofline::plot
