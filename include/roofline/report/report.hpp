#pragma once

#include <array>
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

enum class Format : std::uint8_t { table, json, csv, markdown, html };
inline constexpr std::array<std::string_view, 5> format_names{"table", "json", "csv", "markdown", "html"};

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

// A chart of the report as a standalone SVG document, drawn from the report's own tables (the
// plot area does it), so that a chart can only show the numbers the tables hold. Only the HTML
// printer shows figures; a command draws them only when that is the format asked for.
struct Figure {
  std::string id;  // a fragment name: letters, digits and '-'
  std::string title;
  std::string svg;      // a whole <svg> element, no XML declaration
  std::string caption;  // how to read it: what the marks are and where their numbers come from
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
  std::vector<Figure> figures;

  [[nodiscard]] std::string schema() const;
  // The table named `name`; InputError naming --table and listing the tables there are.
  [[nodiscard]] const Table& table(std::string_view name) const;
};

// Renders a report. Human tables by default; JSON is the whole report; CSV is one table (the
// first, or the one --table names: scripts read one table); markdown is every table as a pipe
// table (nvbench's style); HTML is one self-contained page with the report's charts, whose printer
// lives with the charts (plot/html.hpp).
class Printer {
 public:
  virtual ~Printer() = default;
  virtual void print(const Report& report, std::ostream& out) const = 0;
};

struct PrintOptions {
  Format format = Format::table;
  // Only this table (by its JSON name) in table, markdown and CSV output; JSON and HTML show the
  // whole report and refuse it.
  std::optional<std::string> table;
};

// Every format but HTML. The options' form throws InputError for a --table the format cannot take;
// the table itself is looked up when the report is printed.
[[nodiscard]] std::unique_ptr<Printer> make_printer(Format format);
[[nodiscard]] std::unique_ptr<Printer> make_printer(const PrintOptions& options);

// A cell as the human table shows it: "-" for no value, "yes"/"no", numbers with `decimals`
// (scientific beyond 1e12 or below the last decimal).
[[nodiscard]] std::string human_cell(const Cell& cell, int decimals);
// True for a number cell (right-aligned in every human format).
[[nodiscard]] bool numeric_cell(const Cell& cell);

// The JSON form of a report (also used by tests).
[[nodiscard]] nlohmann::json to_json(const Report& report);

// What built this binary, as every JSON report's "tool_build" states it: the commit and whether
// the tree was dirty when CMake configured, the build type and compiler, CUDA's and MPI's versions
// ("off" where not built in), and the SHA-256 fingerprint of the bundled hardware and model files.
[[nodiscard]] nlohmann::json tool_build();

// Writes one CSV field (quoted when needed) or a number in shortest round-trip form.
void write_csv_cell(std::string& out, const Cell& cell);

}  // namespace roofline
