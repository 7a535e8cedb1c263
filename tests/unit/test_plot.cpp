// The roofline chart: axes, ticks, roof geometry, label placement, escaping, and `plot`'s chart.
#include <cmath>

#include "catch.hpp"
#include "commands/plot.hpp"
#include "fixture.hpp"
#include "roofline/core/error.hpp"
#include "roofline/plot/plot.hpp"

using namespace roofline;
using namespace roofline::plot;
using Catch::Matchers::Contains;

namespace {

// An H100-like chart: bf16 989.4 and fp64 tensor 67 TFLOP/s on 3.35 TB/s of HBM.
Chart h100_like() {
  Chart chart;
  chart.title = "H100";
  chart.compute_roofs = {{"bf16", 989.4e12, Provenance::datasheet}, {"fp64 tensor", 67e12, Provenance::datasheet}};
  chart.memory_roofs = {{"HBM3", 3.35e12, Provenance::datasheet}};
  chart.points = {{"GEMV batch 1", 1, 3.35e12, PointKind::model}};
  return chart;
}

std::vector<Box> all_text_boxes(const Layout& layout) {
  std::vector<Box> boxes;
  for (const Label& label : layout.labels) boxes.push_back(label.box);
  for (const LegendItem& item : layout.legend) boxes.push_back(item.label.box);
  return boxes;
}

const Marker& ridge_of(const Layout& layout, double peak_flops) {
  for (const Marker& marker : layout.markers) {
    if (marker.shape == MarkerShape::ridge && marker.data.y == peak_flops) return marker;
  }
  FAIL("no ridge marker at " << peak_flops);
  return layout.markers.front();
}

}  // namespace

TEST_CASE("a log axis maps decades to equal pixel steps") {
  // 0.1..1000 is 4 decades over 600 px (100..700): 150 px per decade.
  const LogAxis x{0.1, 1000, 100, 700};
  CHECK(x.to_pixel(0.1) == Approx(100));
  CHECK(x.to_pixel(1) == Approx(250));
  CHECK(x.to_pixel(10) == Approx(400));
  CHECK(x.to_pixel(1000) == Approx(700));
  // sqrt(10) is half a decade above 1: 250 + 75.
  CHECK(x.to_pixel(std::sqrt(10.0)) == Approx(325));
  // 2 is log10(2) = 0.30103 decades above 1: 250 + 45.15.
  CHECK(x.to_pixel(2) == Approx(295.1545));

  // A y axis runs upwards: 1e11..1e15 FLOP/s from pixel 500 (bottom) to 100 (top), 100 px per decade.
  const LogAxis y{1e11, 1e15, 500, 100};
  CHECK(y.to_pixel(1e11) == Approx(500));
  CHECK(y.to_pixel(1e12) == Approx(400));
  CHECK(y.to_pixel(989.4e12) == Approx(100 + 100 * (3 - std::log10(989.4))));  // 100.46
  CHECK(y.to_pixel(1e15) == Approx(100));
}

TEST_CASE("ticks: decades inside the range, 2..9 between them, readable labels") {
  CHECK(decade_ticks(0.1, 1000) == std::vector<double>{0.1, 1, 10, 100, 1000});
  CHECK(decade_ticks(0.3, 50) == std::vector<double>{1, 10});
  CHECK(decade_ticks(1e11, 1e16).size() == 6);

  const std::vector<double> minor = minor_ticks(1, 100);
  REQUIRE(minor.size() == 16);  // 2..9 and 20..90
  CHECK(minor.front() == Approx(2));
  CHECK(minor[7] == Approx(9));
  CHECK(minor[8] == Approx(20));
  CHECK(minor.back() == Approx(90));
  CHECK(minor_ticks(0.1, 1).size() == 8);

  CHECK(tick_label(0.001) == "0.001");
  CHECK(tick_label(0.1) == "0.1");
  CHECK(tick_label(1) == "1");
  CHECK(tick_label(1000) == "1000");
  CHECK(tick_label(1e5) == "100000");
  CHECK(tick_label(1e6) == "1e6");
  CHECK(tick_label(1e-4) == "1e-4");

  CHECK(short_number(989.4) == "989.4");
  CHECK(short_number(1978.9) == "1979");
  CHECK(short_number(67) == "67");
  CHECK(short_number(3.35) == "3.35");
  CHECK(short_number(0.5) == "0.5");
  CHECK(short_number(295.343, 3) == "295");
  CHECK(short_number(10.149, 3) == "10.1");
  CHECK(short_number(59.97, 3) == "60");
}

TEST_CASE("axis ranges hold every ridge and point with a margin, in whole decades") {
  const Ranges r = auto_ranges(h100_like());
  // Intensities: ridges 989.4 / 3.35 = 295.3 and 67 / 3.35 = 20, the point at 1. With a factor 2
  // to spare: 0.5 -> 0.1 and 590.7 -> 1000.
  CHECK(r.intensity_lo == Approx(0.1));
  CHECK(r.intensity_hi == Approx(1000));
  // FLOP/s: the HBM roof enters at 0.1 x 3.35e12 = 3.35e11 (/2 -> 1e11); the top peak 989.4e12
  // (x2 -> 1e16).
  CHECK(r.flops_lo == Approx(1e11));
  CHECK(r.flops_hi == Approx(1e16));

  // Without the point the ridges span 20..295 (10..1000 with margins); three decades at least,
  // gained on the left: 1..1000.
  Chart no_points = h100_like();
  no_points.points.clear();
  const Ranges q = auto_ranges(no_points);
  CHECK(q.intensity_lo == Approx(1));
  CHECK(q.intensity_hi == Approx(1000));
}

TEST_CASE("each roof is min(peak, AI x bandwidth) with its ridge at peak / bandwidth") {
  Chart chart = h100_like();
  chart.memory_roofs.push_back({"L2", 10e12, Provenance::user});
  const Layout layout = layout_chart(chart);

  // bf16: ridge at 989.4e12 / 3.35e12 = 295.343 FLOP/B; fp64 tensor at 67 / 3.35 = 20.
  const Marker& bf16 = ridge_of(layout, 989.4e12);
  CHECK(bf16.data.x == Approx(295.343).epsilon(1e-5));
  CHECK(bf16.pixel.x == Approx(layout.x.to_pixel(295.343)).epsilon(1e-5));
  CHECK(bf16.pixel.y == Approx(layout.y.to_pixel(989.4e12)));
  CHECK(ridge_of(layout, 67e12).data.x == Approx(20.0));

  // Roofs: two compute roofs (flat from the ridge to the right edge), then the memory roofs
  // (from the left edge up to the highest peak).
  REQUIRE(layout.roofs.size() == 4);
  const Line& bf16_roof = layout.roofs[0];
  CHECK(bf16_roof.data.front().x == Approx(295.343).epsilon(1e-5));
  CHECK(bf16_roof.data.back().x == Approx(layout.ranges.intensity_hi));
  CHECK(bf16_roof.data.back().y == Approx(989.4e12));
  const Line& hbm = layout.roofs[2];
  CHECK(hbm.data.front().x == Approx(layout.ranges.intensity_lo));
  CHECK(hbm.data.front().y == Approx(layout.ranges.intensity_lo * 3.35e12));
  CHECK(hbm.data.back().x == Approx(295.343).epsilon(1e-5));
  CHECK(hbm.style == LineStyle::solid);
  // L2 at 10 TB/s meets bf16 at 98.94 FLOP/B, drawn dotted (given on the command line).
  const Line& l2 = layout.roofs[3];
  CHECK(l2.data.back().x == Approx(98.94));
  CHECK(l2.style == LineStyle::dotted);
  CHECK(ridge_of(layout, 989.4e12).data.x == Approx(295.343).epsilon(1e-5));

  // Every vertex of the memory roofs is AI x bandwidth: the diagonal is the roofline's slope.
  for (const Vec2& vertex : hbm.data) CHECK(vertex.y == Approx(vertex.x * 3.35e12));
  // And the pixels are the axes' mapping of the data.
  for (std::size_t i = 0; i < hbm.data.size(); ++i) {
    CHECK(hbm.pixels[i].x == Approx(layout.x.to_pixel(hbm.data[i].x)));
    CHECK(hbm.pixels[i].y == Approx(layout.y.to_pixel(hbm.data[i].y)));
  }
}

TEST_CASE("compute roofs of equal peak share one line and one label") {
  Chart chart = h100_like();
  chart.compute_roofs.insert(chart.compute_roofs.begin(), {"fp16", 989.4e12, Provenance::datasheet});
  const Layout layout = layout_chart(chart);
  CHECK(layout.roofs.size() == 3);  // fp16 · bf16, fp64 tensor, HBM
  bool found = false;
  for (const Label& label : layout.labels) {
    if (label.role == LabelRole::compute_roof && label.text.starts_with("fp16 · bf16: 989.4 TFLOP/s")) found = true;
  }
  CHECK(found);
}

TEST_CASE("label placement: no two texts overlap, even when crowded") {
  Chart chart = h100_like();
  chart.compute_roofs.push_back({"fp8", 1978.9e12, Provenance::datasheet});
  chart.compute_roofs.push_back({"tf32", 494.7e12, Provenance::datasheet});
  chart.compute_roofs.push_back({"fp64", 34e12, Provenance::measured});
  chart.memory_roofs.push_back({"L2", 7e12, Provenance::measured});
  chart.memory_roofs.push_back({"shared memory", 33e12, Provenance::user});
  // 24 points in two tight clusters (on the HBM roof near AI 1, and near the bf16 ridge), with
  // long labels: far more than fit next to their markers.
  for (int i = 0; i < 12; ++i) {
    const double ai = 1 + 0.05 * i;
    chart.points.push_back({"memory-bound kernel number " + std::to_string(i), ai, ai * 3.35e12 * 0.9,
                            i % 2 == 0 ? PointKind::model : PointKind::measured});
    chart.points.push_back({"compute-bound kernel " + std::to_string(i), 250 + 10.0 * i, 600e12 + 20e12 * i,
                            i % 3 == 0 ? PointKind::measured : PointKind::model});
  }
  const Layout layout = layout_chart(chart);
  const std::vector<Box> boxes = all_text_boxes(layout);
  const Box canvas{0, 0, layout.width, layout.height};
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    CHECK(canvas.contains(boxes[i]));
    for (std::size_t j = i + 1; j < boxes.size(); ++j) {
      INFO(i << " and " << j);
      CHECK_FALSE(boxes[i].intersects(boxes[j]));
    }
  }
  // No label covers a marker.
  for (const Label& label : layout.labels) {
    for (const Marker& marker : layout.markers) {
      const Box dot{marker.pixel.x - 4, marker.pixel.y - 4, 8, 8};
      INFO(label.text);
      CHECK_FALSE(label.box.intersects(dot));
    }
  }
  // Every roof is labelled; a point either has a label or is listed as unplaced.
  std::size_t roof_labels = 0;
  std::size_t point_labels = 0;
  for (const Label& label : layout.labels) {
    roof_labels += label.role == LabelRole::compute_roof || label.role == LabelRole::memory_roof ? 1 : 0;
    point_labels += label.role == LabelRole::point ? 1 : 0;
  }
  CHECK(roof_labels == 5 + 3);
  CHECK(point_labels + layout.unplaced.size() == chart.points.size());
  CHECK(point_labels >= 16);  // the crowd leaves room for two thirds; the rest are tooltips
  // Provenance shows as line style, and the legend explains each style and marker used.
  std::vector<std::string> legend;
  for (const LegendItem& item : layout.legend) legend.push_back(item.text);
  CHECK(legend == std::vector<std::string>{"roof: datasheet figure", "roof: measured on the GPU",
                                           "roof: given on the command line", "ridge point", "model prediction",
                                           "measured kernel"});
}

TEST_CASE("text widths come from the font's advance widths") {
  // Liberation Sans/Arial advance widths in 1/2048 em: digits 1139; G 1593, E 1366, M 1706, V 1366.
  CHECK(text_width("1000", 12) == Approx(4 * 1139 / 2048.0 * 12));                  // 26.69
  CHECK(text_width("GEMV", 12) == Approx(6031 / 2048.0 * 12));                      // 35.34
  CHECK(text_width("4096\xC2\xB3", 10) == Approx((4 * 1139 + 682) / 2048.0 * 10));  // superscript three
  CHECK(text_width("\xE6\xBC\xA2", 12) == Approx(12));                              // a CJK character: one em
  const Box box = text_box("1000", {100, 50}, TextAnchor::end, 12);
  CHECK(box.right() == Approx(100));
  CHECK(box.x == Approx(100 - 26.69).epsilon(1e-3));
  CHECK(box.y == Approx(50 - font_ascent * 12));
  CHECK(box.bottom() == Approx(50 + font_descent * 12));
  // An accented capital reaches higher than ASCII: its box grows.
  CHECK(text_box("\xC3\x89", {0, 50}, TextAnchor::start, 12).y < box.y);
}

TEST_CASE("boxes and segments") {
  const Box a{0, 0, 10, 10};
  CHECK(a.intersects({5, 5, 10, 10}));
  CHECK_FALSE(a.intersects({10, 0, 5, 5}));  // touching edges do not overlap
  CHECK(a.contains({1, 1, 2, 2}));
  CHECK_FALSE(a.contains({8, 8, 5, 5}));
  CHECK(segment_intersects({-5, 5}, {15, 5}, a));  // straight through
  CHECK(segment_intersects({-5, -5}, {5, 5}, a));  // ends inside
  CHECK_FALSE(segment_intersects({-5, 12}, {15, 12}, a));
  CHECK_FALSE(segment_intersects({-5, 26}, {26, -5}, a));  // x + y = 21 passes the corner (10, 10) outside
  CHECK(segment_intersects({-5, 24}, {24, -5}, a));        // x + y = 19 cuts the corner
}

TEST_CASE("XML escaping keeps labels as text and the document well-formed") {
  CHECK(xml_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&apos;");
  CHECK(xml_escape("GEMM 4096\xC2\xB3") == "GEMM 4096\xC2\xB3");  // UTF-8 passes through
  CHECK(xml_escape("bad\xFF") == "bad\xEF\xBF\xBD");              // invalid UTF-8 -> U+FFFD
  CHECK(xml_escape("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");    // overlong '/' -> two U+FFFD
  CHECK(xml_escape("bell\x01") == "bell\xEF\xBF\xBD");            // not allowed in XML 1.0
  CHECK(xml_escape("tab\tok") == "tab\tok");

  Chart chart = h100_like();
  chart.title = "<script>alert(1)</script>";
  chart.points.push_back({"attention <flash> & \"std\"", 100, 300e12, PointKind::measured});
  const std::string svg = render_svg(chart);
  CHECK_THAT(svg, Contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
  CHECK_THAT(svg, Contains("attention &lt;flash&gt; &amp; &quot;std&quot;"));
  CHECK(svg.find("<script>") == std::string::npos);
}

TEST_CASE("the SVG is standalone, deterministic and shows both kinds of points") {
  Chart chart = h100_like();
  chart.points.push_back({"cuBLAS GEMV", 1, 3.03e12, PointKind::measured});
  const std::string svg = render_svg(chart);
  CHECK(svg.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(svg.ends_with("</svg>\n"));
  CHECK(svg == render_svg(Chart(chart)));
  CHECK_THAT(svg, Contains("Arithmetic intensity [FLOP/byte]"));
  CHECK_THAT(svg, Contains("Performance [TFLOP/s]"));
  CHECK_THAT(svg, Contains("model prediction"));
  CHECK_THAT(svg, Contains("measured kernel"));
  CHECK_THAT(svg, Contains("<path d=\"M"));  // the measured marker is a diamond, the model one a circle
}

TEST_CASE("a chart without roofs or with values a log axis cannot show is bad input") {
  Chart chart = h100_like();
  chart.compute_roofs.clear();
  CHECK_THROWS_WITH(render_svg(chart), Contains("no compute roof"));
  chart = h100_like();
  chart.memory_roofs.clear();
  CHECK_THROWS_AS(render_svg(chart), InputError);
  for (const double bad : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
    chart = h100_like();
    chart.points.front().intensity = bad;
    CHECK_THROWS_WITH(render_svg(chart), Contains("GEMV batch 1"));
  }
}

TEST_CASE("plot: roofs from the hardware file, points and extra roofs from flags") {
  cli::PlotOptions options;
  options.gpu = "h100";
  options.dtypes = "bf16,fp8,fp32,fp64";
  options.points = {"GEMV batch 1:1:3.35", "a:b:2:4"};
  options.measured_points = {"cuBLAS GEMV:1:3.03"};
  options.l2_tbps = "10";
  const Chart chart = cli::make_chart(options, fixture::gpus().find("h100"));
  REQUIRE(chart.compute_roofs.size() == 4);
  CHECK(chart.compute_roofs[0].label == "bf16");
  CHECK(chart.compute_roofs[1].peak_flops == Approx(1978.9e12));
  CHECK(chart.compute_roofs[3].label == "fp64 tensor");  // fp64 matrix math runs on the tensor cores
  CHECK(chart.compute_roofs[3].peak_flops == Approx(67e12));
  REQUIRE(chart.memory_roofs.size() == 2);
  CHECK(chart.memory_roofs[0].label == "HBM3");
  CHECK(chart.memory_roofs[0].bandwidth_bytes_per_s == Approx(3.35e12));
  CHECK(chart.memory_roofs[0].provenance == Provenance::datasheet);
  CHECK(chart.memory_roofs[1].provenance == Provenance::user);
  REQUIRE(chart.points.size() == 3);
  CHECK(chart.points[1].label == "a:b");  // the numbers are read from the right
  CHECK(chart.points[1].flops == Approx(4e12));
  CHECK(chart.points[2].kind == PointKind::measured);

  // Without --dtype: every peak H100 states (8), and only HBM: no invented L2 or shared memory.
  cli::PlotOptions plain;
  plain.gpu = "h100";
  const Chart all = cli::make_chart(plain, fixture::gpus().find("h100"));
  CHECK(all.compute_roofs.size() == 8);
  CHECK(all.memory_roofs.size() == 1);

  const auto json = to_json(cli::run_plot(options, fixture::gpus()));
  CHECK(json.at("results").at("compute_roofs").at(0).at("ridge_flop_per_byte").get<double>() ==
        Approx(295.343).epsilon(1e-5));
  // L2: 1978.9 / 10 = 197.89 FLOP/B under the highest roof (fp8).
  CHECK(json.at("results").at("memory_roofs").at(1).at("ridge_flop_per_byte").get<double>() == Approx(197.89));
  CHECK(json.at("results").at("points").size() == 3);
}

TEST_CASE("plot rejects bad points, unknown formats and lists of GPUs") {
  const auto attempt = [](auto change) {
    cli::PlotOptions options;
    options.gpu = "h100";
    change(options);
    return cli::run_plot_svg(options, fixture::gpus());
  };
  for (const char* bad : {"x:0:1", "x:1:-2", "x:1", ":1:2", "1:2", "x:1,2:3", "x:nan:1", "x:1:inf"}) {
    INFO(bad);
    CHECK_THROWS_AS(attempt([&](cli::PlotOptions& o) { o.points = {bad}; }), InputError);
  }
  CHECK_THROWS_WITH(attempt([](cli::PlotOptions& o) { o.dtypes = "nvfp4"; }), Contains("h100-sxm states no peak"));
  CHECK_THROWS_WITH(attempt([](cli::PlotOptions& o) { o.gpu = "h100,a100"; }), Contains("one GPU"));
  CHECK_THROWS_WITH(attempt([](cli::PlotOptions& o) { o.l2_tbps = "0"; }), Contains("--l2-tbps"));
}
