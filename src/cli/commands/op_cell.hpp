#pragma once

// Internal to the op subcommands: the cells and columns of their rows, shared by the report
// tables and the streamed CSV.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "roofline/report/report.hpp"

namespace roofline::cli::op_detail {

// Which outputs show a column: every one, JSON and CSV only (the human table stays narrow), only
// when an expected time is asked for (--efficiency or --calibration), or only with --calibration.
enum class Show : std::uint8_t { always, detail, expected, calibrated };

// A cell as the op commands produce it: like report.hpp's Cell, but text is a view (every text of
// an op row lives in a static table or in the command's plan), so producing a row allocates
// nothing. That matters when a sweep streams millions of rows; report tables convert (to_cell).
using OpCell = std::variant<std::monostate, bool, std::int64_t, double, std::string_view>;
[[nodiscard]] inline Cell to_cell(const OpCell& cell) {
  return std::visit(
      [](const auto& value) -> Cell {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::string_view>) {
          return Cell{std::string(value)};
        } else {
          return Cell{value};
        }
      },
      cell);
}

// Like report.hpp's ColumnOf: the header and how to read the value from a row, defined together.
template <class Row>
struct OpColumn {
  Column column;
  OpCell (*value)(const Row&);
  Show show = Show::always;
};

[[nodiscard]] inline OpCell number_if(bool valid, double value) {
  return valid ? OpCell{value} : OpCell{};
}
[[nodiscard]] inline OpCell text(std::string_view value) {
  return OpCell{value};
}
[[nodiscard]] inline OpCell integer(std::int64_t value) {
  return OpCell{value};
}

}  // namespace roofline::cli::op_detail
