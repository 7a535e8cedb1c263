// The HTML printer (roofline/plot/html.hpp).
#include "roofline/plot/html.hpp"

#include <fmt/format.h>

#include <ostream>

#include "roofline/core/version.hpp"
#include "roofline/plot/plot.hpp"

namespace roofline::plot {
namespace {

// Kept short and plain: the page must read well printed and without its script.
constexpr std::string_view style = R"css(
body { font-family: 'Liberation Sans', Arial, Helvetica, sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 17px; margin-top: 28px; }
.meta { color: #666; font-size: 13px; }
figure { margin: 16px 0; }
figcaption { font-size: 13px; color: #444; max-width: 900px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; cursor: pointer; user-select: none; white-space: nowrap; }
th[aria-sort=ascending]::after { content: " \25B2"; }
th[aria-sort=descending]::after { content: " \25BC"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.hidden, .filtered { display: none; }
#filter { font-size: 14px; padding: 4px 8px; width: 320px; }
pre { background: #f7f7f7; padding: 8px; font-size: 12px; overflow-x: auto; }
)css";

// Sorting: a header click orders the rows by the cells' data-value (numbers as numbers, empty
// cells last); the filter hides rows and [data-label] chart marks whose text lacks the query.
constexpr std::string_view script = R"js(
"use strict";
function sortBy(header) {
  const table = header.closest("table");
  const body = table.tBodies[0];
  const column = Array.prototype.indexOf.call(header.parentNode.children, header);
  const ascending = header.getAttribute("aria-sort") !== "ascending";
  for (const th of header.parentNode.children) th.removeAttribute("aria-sort");
  header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  const key = (row) => {
    const cell = row.children[column];
    const raw = cell.getAttribute("data-value");
    if (raw === null || raw === "") return null;
    const number = Number(raw);
    return Number.isNaN(number) ? raw : number;
  };
  const rows = Array.from(body.rows);
  rows.sort((a, b) => {
    const x = key(a), y = key(b);
    if (x === null || y === null) return (x === null) - (y === null);
    const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return ascending ? order : -order;
  });
  for (const row of rows) body.appendChild(row);
}
function applyFilter(text) {
  const query = text.trim().toLowerCase();
  for (const row of document.querySelectorAll("table.report tbody tr")) {
    row.classList.toggle("hidden", query !== "" && !row.textContent.toLowerCase().includes(query));
  }
  for (const mark of document.querySelectorAll("figure [data-label]")) {
    const label = mark.getAttribute("data-label").toLowerCase();
    mark.classList.toggle("filtered", query !== "" && !label.includes(query));
  }
}
for (const header of document.querySelectorAll("table.report th")) {
  header.addEventListener("click", () => sortBy(header));
}
document.getElementById("filter").addEventListener("input", (event) => applyFilter(event.target.value));
document.documentElement.setAttribute("data-ready", "true");
)js";

std::string cell_value(const Cell& cell) {
  return std::visit(
      [](const auto& value) -> std::string {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "";
        } else if constexpr (std::is_same_v<T, bool>) {
          return value ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return value;
        } else {
          return fmt::format("{}", value);
        }
      },
      cell);
}

void print_table(const Table& table, std::ostream& out) {
  out << fmt::format("<section id=\"table-{}\">\n<h2>{}</h2>\n", xml_escape(table.name),
                     xml_escape(table.title.empty() ? table.name : table.title));
  out << fmt::format("<table class=\"report\" data-table=\"{}\">\n<thead><tr>", xml_escape(table.name));
  for (const Column& column : table.columns) {
    out << fmt::format("<th data-key=\"{}\" title=\"{}\">{}</th>", xml_escape(column.key), xml_escape(column.key),
                       xml_escape(column.header));
  }
  out << "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    out << "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      out << fmt::format("<td{} data-value=\"{}\">{}</td>", numeric_cell(row[c]) ? " class=\"num\"" : "",
                         xml_escape(cell_value(row[c])), xml_escape(human_cell(row[c], table.columns[c].decimals)));
    }
    out << "</tr>\n";
  }
  out << "</tbody>\n</table>\n</section>\n";
}

class HtmlPrinter final : public Printer {
 public:
  void print(const Report& report, std::ostream& out) const override {
    const std::string heading = report.tables.empty() || report.tables.front().title.empty()
                                    ? fmt::format("roofline {}", report.kind)
                                    : fmt::format("roofline {}: {}", report.kind, report.tables.front().title);
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    out << fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", xml_escape(heading), style);
    out << fmt::format("<h1>roofline {}</h1>\n<p class=\"meta\">{} &#183; roofline {} ({})</p>\n",
                       xml_escape(report.kind), xml_escape(report.schema()), tool_version, xml_escape(tool_commit()));
    out << "<p><label>Filter rows and chart marks: <input id=\"filter\" type=\"search\" "
           "placeholder=\"text in a row or a mark's label\"></label></p>\n";
    if (!report.figures.empty()) out << "<nav><p>Charts:";
    for (const Figure& figure : report.figures) {
      out << fmt::format(" <a href=\"#fig-{}\">{}</a>", figure.id, xml_escape(figure.title));
    }
    if (!report.figures.empty()) out << "</p></nav>\n";
    for (const Figure& figure : report.figures) {
      out << fmt::format("<figure id=\"fig-{}\">\n<h2>{}</h2>\n{}\n<figcaption>{}</figcaption>\n</figure>\n", figure.id,
                         xml_escape(figure.title), figure.svg, xml_escape(figure.caption));
    }
    for (const Table& table : report.tables) print_table(table, out);
    if (!report.notes.empty()) out << "<section id=\"notes\">\n<h2>Notes</h2>\n<ul>\n";
    for (const std::string& note : report.notes) out << fmt::format("<li>{}</li>\n", xml_escape(note));
    if (!report.notes.empty()) out << "</ul>\n</section>\n";
    out << "<section id=\"provenance\">\n<h2>Inputs and hardware</h2>\n<ul>\n";
    for (const HardwareOrigin& h : report.hardware) {
      out << fmt::format("<li>{}: {}</li>\n", xml_escape(h.id), xml_escape(h.origin));
    }
    const auto replace = nlohmann::json::error_handler_t::replace;
    out << fmt::format("</ul>\n<pre>{}</pre>\n</section>\n", xml_escape(report.inputs.dump(2, ' ', false, replace)));
    // The whole JSON report, for a reader's script: "</" is written "<\/" so no text ends the element.
    const std::string data = to_json(report).dump(-1, ' ', false, replace);
    out << "<script type=\"application/json\" id=\"report-json\">";
    for (std::size_t i = 0; i < data.size(); ++i) {
      out << data[i];
      if (data[i] == '<' && i + 1 < data.size() && data[i + 1] == '/') out << '\\';
    }
    out << "</script>\n";
    out << fmt::format("<script>{}</script>\n</body>\n</html>\n", script);
  }
};

}  // namespace

std::unique_ptr<Printer> make_html_printer() {
  return std::make_unique<HtmlPrinter>();
}

}  // namespace roofline::plot
