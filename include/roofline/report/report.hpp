#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace roofline {

enum class Format : std::uint8_t { table, json, csv };

[[nodiscard]] Format parse_format(std::string_view text);  // throws InputError
[[nodiscard]] std::string_view name_of(Format format);

// One value of a table; monostate prints as empty (CSV/table) or null (JSON).
using Cell = std::variant<std::monostate, bool, std::int64_t, double, std::string>;

// `value` x `scale` (a unit change), or an empty cell where there is no value.
[[nodiscard]] Cell optional_cell(const std::optional<double>& value, double scale = 1.0);

// A column: its JSON key (carrying the unit, e.g. "bandwidth_tbps"), the header a person reads,
// and how many decimals the human table shows. Key and header are string literals (static).
struct Column {
  std::string_view key;
  std::string_view header;
  int decimals = 2;
};

// A table is built from one list of column definitions: each knows its header and how to read
// its value from a row object, so a header can never drift from its rows.
template <typename Row>
struct ColumnOf {
  Column column;
  Cell (*value)(const Row&);
};

struct Table {
  std::string name;   // JSON key under "results"
  std::string title;  // shown above the human table
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;

  template <typename Row, std::size_t N>
  static Table from_rows(std::string name, std::string title, const std::array<ColumnOf<Row>, N>& columns,
                         std::span<const Row> rows) {
    Table table{std::move(name), std::move(title), {}, {}};
    for (const auto& c : columns) table.columns.push_back(c.column);
    table.rows.reserve(rows.size());
    for (const Row& row : rows) {
      std::vector<Cell> cells;
      cells.reserve(N);
      for (const auto& c : columns) cells.push_back(c.value(row));
      table.rows.push_back(std::move(cells));
    }
    return table;
  }
};

// Where a GPU's figures came from, for the report's provenance.
struct HardwareOrigin {
  std::string id;
  std::string origin;
};

// What every command returns: the inputs it was computed from, its results as tables (and
// optionally further structured JSON), notes for the reader, and the hardware files it used.
struct Report {
  std::string kind;  // the schema is "roofline.<kind>.v<schema_version>"
  int schema_version = 1;
  nlohmann::json inputs = nlohmann::json::object();
  std::vector<Table> tables;
  nlohmann::json extra_results = nlohmann::json::object();  // merged into "results" in JSON
  std::vector<std::string> notes;
  std::vector<HardwareOrigin> hardware;

  [[nodiscard]] std::string schema() const;
};

// Renders a report. Human tables by default; JSON is the whole report; CSV is the first table
// (scripts read one table; use JSON for the rest).
class Printer {
 public:
  virtual ~Printer() = default;
  virtual void print(const Report& report, std::ostream& out) const = 0;
};

[[nodiscard]] std::unique_ptr<Printer> make_printer(Format format);

// The JSON form of a report (also used by tests).
[[nodiscard]] nlohmann::json to_json(const Report& report);

// Writes one CSV field (quoted when needed) or a number in shortest round-trip form.
void write_csv_cell(std::string& out, const Cell& cell);

}  // namespace roofline
