#pragma once

// The "summary" table of the llm and serve reports: one figure a row, with its JSON key, its unit and
// how it was derived.

#include <array>
#include <string>

#include "roofline/report/report.hpp"

namespace roofline::cli {

struct SummaryRow {
  std::string key;
  std::string quantity;
  Cell value;
  std::string unit;
  std::string derivation;
};

inline constexpr std::array<ColumnOf<SummaryRow>, 5> summary_columns{{
    {{"key", "key", 0}, [](const SummaryRow& r) { return Cell{r.key}; }},
    {{"quantity", "quantity", 0}, [](const SummaryRow& r) { return Cell{r.quantity}; }},
    {{"value", "value", 2}, [](const SummaryRow& r) { return r.value; }},
    {{"unit", "unit", 0}, [](const SummaryRow& r) { return Cell{r.unit}; }},
    {{"derivation", "how", 0}, [](const SummaryRow& r) { return Cell{r.derivation}; }},
}};

}  // namespace roofline::cli
