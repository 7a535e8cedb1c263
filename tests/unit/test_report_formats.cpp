// The markdown and HTML printers, --table, and the bar and scatter charts (docs/reports.md).
#include <sstream>

#include "catch.hpp"
#include "commands/plot.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"
#include "roofline/plot/charts.hpp"
#include "roofline/plot/html.hpp"
#include "roofline/plot/plot.hpp"
#include "roofline/report/report.hpp"

using namespace roofline;
using Catch::Matchers::Contains;

namespace {

struct Row {
  std::string name;
  double value;
};

constexpr std::array<ColumnOf<Row>, 2> columns{{
    {{"name", "name", 0}, [](const Row& r) { return Cell{r.name}; }},
    {{"value_tbps", "value [TB/s]", 2}, [](const Row& r) { return Cell{r.value}; }},
}};

Report sample() {
  const std::vector<Row> rows{{"a", 3.35}, {"b|<c>", 12.0}};
  Report report;
  report.kind = "sample";
  report.tables.push_back(Table::from_rows<Row>("rows", "Rows", columns, rows));
  report.tables.push_back(Table::from_rows<Row>("more", "More rows", columns, std::vector<Row>{{"z", 1.0}}));
  report.notes.push_back("a note");
  report.hardware.push_back({"h100-sxm", "bundled:hardware/h100-sxm.json"});
  return report;
}

std::string render(const PrintOptions& options, const Report& report = sample()) {
  std::ostringstream out;
  make_printer(options)->print(report, out);
  return out.str();
}

}  // namespace

TEST_CASE("markdown: nvbench's pipe tables, headers centred, cells right-aligned and padded") {
  // Widths: "name" 4 vs "b\|<c>" 6 -> 6; "value [TB/s]" 12 vs "12.00" -> 12. The header is centred
  // in its width ("name" in 6: one space each side), cells right-aligned, the rule 2 wider.
  CHECK(render({Format::markdown, "rows"}) ==
        "# roofline sample\n"
        "\n## Rows\n\n"
        "|  name  | value [TB/s] |\n"
        "|--------|--------------|\n"
        "|      a |         3.35 |\n"
        "| b\\|<c> |        12.00 |\n"
        "\n## Notes\n\n- a note\n"
        "\n## Hardware\n\n- h100-sxm: bundled:hardware/h100-sxm.json\n");
}

TEST_CASE("report --table: one table in csv and table output, an unknown name lists those there are") {
  CHECK(render({Format::csv, "more"}) == "name,value_tbps\nz,1\n");
  CHECK(render({Format::csv, std::nullopt}) == "name,value_tbps\na,3.35\nb|<c>,12\n");
  CHECK_THROWS_WITH(render({Format::csv, "none"}),
                    "--table none: the sample report has no such table; it has rows, more");
  CHECK_THROWS_AS(make_printer({Format::json, "rows"}), InputError);
  CHECK_THROWS_AS(make_printer({Format::html, "rows"}), InputError);
  CHECK(parse_format("Markdown") == Format::markdown);
  CHECK_THROWS_WITH(parse_format("xml"), "--format: 'xml' is not one of table, json, csv, markdown, html");
}

TEST_CASE("html: one page with its tables, escaped text, the figures inline and no external resource") {
  Report report = sample();
  report.figures.push_back({"bars", "Bars & more", "<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>", "a caption"});
  std::ostringstream out;
  plot::make_html_printer()->print(report, out);
  const std::string page = out.str();
  CHECK(page.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
  CHECK_THAT(page, Contains("<table class=\"report\" data-table=\"rows\">"));
  CHECK_THAT(page,
             Contains("<td data-value=\"b|&lt;c&gt;\">b|&lt;c&gt;</td><td class=\"num\" data-value=\"12\">12.00</td>"));
  CHECK_THAT(page, Contains("<figure id=\"fig-bars\">\n<h2>Bars &amp; more</h2>\n<svg"));
  CHECK_THAT(page, Contains("<li>a note</li>"));
  // The embedded JSON report: "</" never appears inside the script element's text.
  const std::size_t data = page.find("id=\"report-json\">");
  REQUIRE(data != std::string::npos);
  const std::string json_text = page.substr(data + 17, page.find("</script>", data) - data - 17);
  CHECK(nlohmann::json::parse(json_text).at("schema") == "roofline.sample.v1");
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("<link") == std::string::npos);
}

TEST_CASE("bar chart: segments in proportion, shares fill each bar") {
  // Two bars as shares: [1, 3] and [2]. The first bar's segments are 1/4 and 3/4 of the same
  // length as the second bar's one segment.
  const plot::BarChart chart{
      "t", "ms", {{"a", {{"x", 1, ""}, {"y", 3, ""}}, "4 ms"}, {"b", {{"x", 2, ""}}, "2 ms"}}, true};
  const std::string svg = plot::render_bar_chart_svg(chart);
  std::vector<double> widths;
  for (std::size_t at = svg.find("<rect x="); at != std::string::npos; at = svg.find("<rect x=", at + 1)) {
    const std::size_t w = svg.find("width=\"", at) + 7;
    if (svg.find("data-label", at) < svg.find('>', at)) widths.push_back(std::stod(svg.substr(w)));
  }
  REQUIRE(widths.size() == 3);
  CHECK(widths[1] == Approx(3 * widths[0]).epsilon(1e-3));
  CHECK(widths[2] == Approx(widths[0] + widths[1]).epsilon(1e-3));
  CHECK_THAT(svg, Contains("data-label=\"y\" data-value=\"3\""));
  CHECK_THROWS_AS(plot::render_bar_chart_svg({"t", "ms", {{"a", {{"x", -1, ""}}, ""}}, false}), InputError);
  CHECK_THROWS_AS(plot::render_bar_chart_svg({"t", "ms", {}, false}), InputError);
}

TEST_CASE("scatter chart: log axes over whole decades, marks carry their numbers") {
  plot::ScatterChart chart{"t", "x", "y", plot::Scale::log, plot::Scale::log, {{"s", {{"p", 2, 50, ""}}, false}},
                           {},  true};
  const std::string svg = plot::render_scatter_svg(chart);
  CHECK_THAT(svg, Contains("data-label=\"p\" data-x=\"2\" data-y=\"50\""));
  // With the diagonal both axes span 1..100: the ticks 1, 10, 100 on each.
  CHECK(std::count_if(svg.begin(), svg.end(), [](char c) { return c == '\n'; }) > 10);
  CHECK_THAT(svg, Contains(">100</text>"));
  chart.series[0].points[0].x = 0;
  CHECK_THROWS_WITH(plot::render_scatter_svg(chart), "scatter chart: p x = 0 has no place on a log axis");
}

TEST_CASE("plot: the labels with no room are summarised in one line, by family") {
  plot::Layout layout;
  layout.unplaced = {"stream.copy.1", "stream.copy.2", "gemv.bf16", "stream.triad"};
  layout.labels.push_back({"placed.one", {}, plot::TextAnchor::start, 12, "", plot::LabelRole::point, false, {}});
  layout.labels.push_back({"TFLOP/s", {}, plot::TextAnchor::start, 12, "", plot::LabelRole::axis_title, false, {}});
  // 4 unplaced + 1 placed point label = 5 labels; the axis title is not counted.
  CHECK(plot::unplaced_summary(layout) ==
        "no room for 4 of 5 labels (stream: 3, gemv: 1): they are their markers' tooltips");
}

TEST_CASE("bench: the HTML figure of a run is its kernels on the roofline") {
  const nlohmann::json run = nlohmann::json::parse(read_input_file(
      std::string(ROOFLINE_SOURCE_DIR) + "/tests/data/bench/h200-memory-2026-11-30-run2.json", 1 << 26));
  const HardwareRegistry registry = HardwareRegistry::bundled_only();
  const std::vector<Figure> figures = cli::bench_figures(run, registry);
  REQUIRE(figures.size() == 1);
  CHECK(figures[0].id == "roofline");
  CHECK(figures[0].svg.starts_with("<svg"));
  CHECK_THAT(figures[0].title, Contains("H200"));
}
