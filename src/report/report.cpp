#include "roofline/report/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <stdexcept>

#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"
#include "roofline/core/version.hpp"

namespace roofline {
namespace {

using nlohmann::json;

json cell_to_json(const Cell& cell) {
  return std::visit(
      [](const auto& value) -> json {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else {
          return value;
        }
      },
      cell);
}

std::string human_number(double value, int decimals) {
  if (!std::isfinite(value)) return value > 0 ? "inf" : (value < 0 ? "-inf" : "nan");
  const double magnitude = std::abs(value);
  const double smallest_shown = std::pow(10.0, -decimals);
  if (value != 0 && (magnitude >= 1e12 || magnitude < smallest_shown)) return fmt::format("{:.3e}", value);
  return fmt::format("{:.{}f}", value, decimals);
}

}  // namespace

std::string human_cell(const Cell& cell, int decimals) {
  return std::visit(
      [decimals](const auto& value) -> std::string {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "-";
        } else if constexpr (std::is_same_v<T, bool>) {
          return value ? "yes" : "no";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return fmt::format("{}", value);
        } else if constexpr (std::is_same_v<T, double>) {
          return human_number(value, decimals);
        } else {
          return value;
        }
      },
      cell);
}

bool numeric_cell(const Cell& cell) {
  return std::holds_alternative<double>(cell) || std::holds_alternative<std::int64_t>(cell);
}

namespace {

class TablePrinter final : public Printer {
 public:
  void print(const Report& report, std::ostream& out) const override {
    bool first = true;
    for (const Table& table : report.tables) {
      if (!first) out << '\n';
      first = false;
      print_table(table, out);
    }
    if (!report.notes.empty()) out << '\n';
    for (const std::string& note : report.notes) out << "note: " << note << '\n';
    if (!report.hardware.empty()) out << '\n';
    // Bundled files are named by their id; user files, which override them, by their path.
    std::vector<std::string> bundled;
    for (const HardwareOrigin& h : report.hardware) {
      if (h.origin == "bundled:hardware/" + h.id + ".json") {
        bundled.push_back(h.id);
      } else {
        out << "hardware: " << h.id << " from " << h.origin << '\n';
      }
    }
    if (!bundled.empty()) out << fmt::format("hardware: bundled hardware/<id>.json for {}\n", fmt::join(bundled, ", "));
  }

 private:
  static void print_table(const Table& table, std::ostream& out) {
    if (!table.title.empty()) out << table.title << '\n';
    const std::size_t n = table.columns.size();
    std::vector<std::vector<std::string>> text(table.rows.size(), std::vector<std::string>(n));
    std::vector<std::size_t> width(n);
    // A column is right-aligned when every value in it is a number.
    std::vector<bool> numeric(n, !table.rows.empty());
    for (std::size_t c = 0; c < n; ++c) width[c] = table.columns[c].header.size();
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      for (std::size_t c = 0; c < n; ++c) {
        text[r][c] = human_cell(table.rows[r][c], table.columns[c].decimals);
        width[c] = std::max(width[c], text[r][c].size());
        const bool empty = std::holds_alternative<std::monostate>(table.rows[r][c]);
        numeric[c] = numeric[c] && (empty || numeric_cell(table.rows[r][c]));
      }
    }
    const auto line = [&](const std::vector<std::string>& cells) {
      std::string row;
      for (std::size_t c = 0; c < n; ++c) {
        if (c > 0) row += "  ";
        row += numeric[c] ? fmt::format("{:>{}}", cells[c], width[c]) : fmt::format("{:<{}}", cells[c], width[c]);
      }
      while (!row.empty() && row.back() == ' ') row.pop_back();
      out << row << '\n';
    };
    std::vector<std::string> headers;
    for (const Column& column : table.columns) headers.emplace_back(column.header);
    line(headers);
    std::vector<std::string> rules;
    for (std::size_t c = 0; c < n; ++c) rules.emplace_back(width[c], '-');
    line(rules);
    for (const auto& row : text) line(row);
  }
};

class JsonPrinter final : public Printer {
 public:
  void print(const Report& report, std::ostream& out) const override { out << to_json(report).dump(2) << '\n'; }
};

class CsvPrinter final : public Printer {
 public:
  void print(const Report& report, std::ostream& out) const override {
    if (report.tables.empty()) return;
    const Table& table = report.tables.front();
    std::string text;
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      if (c > 0) text += ',';
      write_csv_cell(text, Cell{std::string(table.columns[c].key)});
    }
    text += '\n';
    for (const auto& row : table.rows) {
      for (std::size_t c = 0; c < row.size(); ++c) {
        if (c > 0) text += ',';
        write_csv_cell(text, row[c]);
      }
      text += '\n';
    }
    out << text;
  }
};

// nvbench's markdown: a heading per table, then a pipe table whose headers are centred and
// whose cells are right-aligned in columns padded to one width, so the text reads as a table too.
class MarkdownPrinter final : public Printer {
 public:
  void print(const Report& report, std::ostream& out) const override {
    out << "# roofline " << report.kind << "\n";
    for (const Table& table : report.tables) {
      out << "\n## " << (table.title.empty() ? table.name : table.title) << "\n\n";
      print_table(table, out);
    }
    if (!report.notes.empty()) out << "\n## Notes\n\n";
    for (const std::string& note : report.notes) out << "- " << escaped(note) << '\n';
    if (!report.hardware.empty()) out << "\n## Hardware\n\n";
    for (const HardwareOrigin& h : report.hardware) out << "- " << escaped(h.id) << ": " << escaped(h.origin) << '\n';
  }

 private:
  // A '|' inside a cell would end it; markdown's own escape keeps it text.
  static std::string escaped(std::string_view text) {
    std::string out;
    for (const char ch : text) {
      if (ch == '|') out += '\\';
      out += ch == '\n' ? ' ' : ch;
    }
    return out;
  }

  static void print_table(const Table& table, std::ostream& out) {
    const std::size_t n = table.columns.size();
    std::vector<std::size_t> width(n);
    std::vector<std::vector<std::string>> text;
    std::vector<std::string> headers;
    for (std::size_t c = 0; c < n; ++c) {
      headers.push_back(escaped(table.columns[c].header));
      width[c] = headers[c].size();
    }
    for (const auto& row : table.rows) {
      std::vector<std::string> cells;
      for (std::size_t c = 0; c < n; ++c) {
        cells.push_back(escaped(human_cell(row[c], table.columns[c].decimals)));
        width[c] = std::max(width[c], cells[c].size());
      }
      text.push_back(std::move(cells));
    }
    out << '|';
    for (std::size_t c = 0; c < n; ++c) out << fmt::format(" {:^{}} |", headers[c], width[c]);
    out << "\n|";
    for (std::size_t c = 0; c < n; ++c) out << std::string(width[c] + 2, '-') << '|';
    out << '\n';
    for (const auto& cells : text) {
      out << '|';
      for (std::size_t c = 0; c < n; ++c) out << fmt::format(" {:>{}} |", cells[c], width[c]);
      out << '\n';
    }
  }
};

// --table NAME: the report with that one table, for the printers that show tables.
class OneTablePrinter final : public Printer {
 public:
  OneTablePrinter(std::unique_ptr<Printer> inner, std::string table)
      : inner_(std::move(inner)), table_(std::move(table)) {}
  void print(const Report& report, std::ostream& out) const override {
    Report one = report;
    one.tables = {report.table(table_)};
    inner_->print(one, out);
  }

 private:
  std::unique_ptr<Printer> inner_;
  std::string table_;
};

}  // namespace

Format parse_format(std::string_view text) {
  const std::string lower = to_lower(text);
  for (std::size_t i = 0; i < format_names.size(); ++i) {
    if (lower == format_names[i]) return static_cast<Format>(i);
  }
  throw InputError(fmt::format("--format: '{}' is not one of {}", text, fmt::join(format_names, ", ")));
}

std::string_view name_of(Format format) {
  return format_names.at(static_cast<std::size_t>(format));
}

const Table& Report::table(std::string_view name) const {
  const auto found = std::find_if(tables.begin(), tables.end(), [name](const Table& t) { return t.name == name; });
  if (found != tables.end()) return *found;
  std::vector<std::string_view> names;
  for (const Table& t : tables) names.emplace_back(t.name);
  throw InputError(fmt::format("--table {}: the {} report has no such table; it has {}", name, kind,
                               names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
}

std::string Report::schema() const {
  return fmt::format("roofline.{}.v{}", kind, schema_version);
}

Cell optional_cell(const std::optional<double>& value, double scale) {
  return value ? Cell{*value * scale} : Cell{};
}

void write_csv_cell(std::string& out, const Cell& cell) {
  std::visit(
      [&out](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return;
        } else if constexpr (std::is_same_v<T, bool>) {
          out += value ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>) {
          fmt::format_to(std::back_inserter(out), "{}", value);
        } else {
          if (value.find_first_of(",\"\n\r") == std::string::npos) {
            out += value;
          } else {
            out += '"';
            for (char ch : value) {
              if (ch == '"') out += '"';
              out += ch;
            }
            out += '"';
          }
        }
      },
      cell);
}

json to_json(const Report& report) {
  json results = json::object();
  for (const Table& table : report.tables) {
    json rows = json::array();
    for (const auto& row : table.rows) {
      json object = json::object();
      for (std::size_t c = 0; c < row.size(); ++c) object[std::string(table.columns[c].key)] = cell_to_json(row[c]);
      rows.push_back(std::move(object));
    }
    results[table.name] = std::move(rows);
  }
  for (const auto& [key, value] : report.extra_results.items()) results[key] = value;
  json hardware = json::array();
  for (const HardwareOrigin& h : report.hardware) hardware.push_back({{"id", h.id}, {"file", h.origin}});
  return json{{"schema", report.schema()}, {"tool_version", tool_version}, {"tool_build", tool_build()},
              {"inputs", report.inputs},   {"hardware", hardware},         {"results", results},
              {"notes", report.notes}};
}

json tool_build() {
  const std::string_view commit = tool_commit();
  return json{{"commit", commit},
              {"dirty", commit.ends_with("-dirty")},
              {"build_type", tool_build_type},
              {"compiler", tool_compiler},
              {"cuda", tool_cuda},
              {"mpi", tool_mpi},
              {"bundled_data_sha256", bundled_data_hash}};
}

std::unique_ptr<Printer> make_printer(Format format) {
  switch (format) {
    case Format::json: return std::make_unique<JsonPrinter>();
    case Format::csv: return std::make_unique<CsvPrinter>();
    case Format::markdown: return std::make_unique<MarkdownPrinter>();
    case Format::html:
      // The page is built around the report's charts, so its printer lives with them (plot/html.hpp).
      throw std::invalid_argument("make_printer: the HTML printer is plot::make_html_printer");
    case Format::table: break;
  }
  return std::make_unique<TablePrinter>();
}

std::unique_ptr<Printer> make_printer(const PrintOptions& options) {
  if (!options.table) return make_printer(options.format);
  if (options.format == Format::json || options.format == Format::html) {
    throw InputError(
        fmt::format("--table {}: chooses the table of table, markdown or csv output; --format {} shows "
                    "the whole report",
                    *options.table, name_of(options.format)));
  }
  return std::make_unique<OneTablePrinter>(make_printer(options.format), *options.table);
}

}  // namespace roofline
