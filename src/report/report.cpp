#include "roofline/report/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

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

bool right_aligned(const Cell& cell) {
  return std::holds_alternative<double>(cell) || std::holds_alternative<std::int64_t>(cell);
}

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
        numeric[c] = numeric[c] && (empty || right_aligned(table.rows[r][c]));
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

}  // namespace

Format parse_format(std::string_view text) {
  const std::string lower = to_lower(text);
  if (lower == "table") return Format::table;
  if (lower == "json") return Format::json;
  if (lower == "csv") return Format::csv;
  throw InputError(fmt::format("--format: '{}' is not one of table, json, csv", text));
}

std::string_view name_of(Format format) {
  switch (format) {
    case Format::table: return "table";
    case Format::json: return "json";
    case Format::csv: return "csv";
  }
  return "table";
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
  return json{{"schema", report.schema()}, {"tool_version", tool_version}, {"inputs", report.inputs},
              {"hardware", hardware},      {"results", results},           {"notes", report.notes}};
}

std::unique_ptr<Printer> make_printer(Format format) {
  switch (format) {
    case Format::json: return std::make_unique<JsonPrinter>();
    case Format::csv: return std::make_unique<CsvPrinter>();
    case Format::table: break;
  }
  return std::make_unique<TablePrinter>();
}

}  // namespace roofline
