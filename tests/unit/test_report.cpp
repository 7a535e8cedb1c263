#include <sstream>

#include "catch.hpp"
#include "roofline/core/error.hpp"
#include "roofline/report/report.hpp"

using namespace roofline;

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
  const std::vector<Row> rows{{"a", 3.35}, {"b,\"c\"", 12.0}};
  Report report;
  report.kind = "sample";
  report.inputs = {{"x", 1}};
  report.tables.push_back(Table::from_rows<Row>("rows", "Rows", columns, rows));
  report.notes.push_back("a note");
  report.hardware.push_back({"h100-sxm", "bundled:hardware/h100-sxm.json"});
  return report;
}

std::string render(Format format) {
  std::ostringstream out;
  make_printer(format)->print(sample(), out);
  return out.str();
}

}  // namespace

TEST_CASE("human tables align numbers right with the column's decimals") {
  CHECK(render(Format::table) ==
        "Rows\n"
        "name   value [TB/s]\n"
        "-----  ------------\n"
        "a              3.35\n"
        "b,\"c\"         12.00\n"
        "\n"
        "note: a note\n"
        "\n"
        "hardware: bundled hardware/<id>.json for h100-sxm\n");
}

TEST_CASE("CSV quotes fields that need it and prints numbers in shortest form") {
  CHECK(render(Format::csv) == "name,value_tbps\na,3.35\n\"b,\"\"c\"\"\",12\n");
}

TEST_CASE("JSON carries schema, version, inputs, hardware, results and notes") {
  const auto json = to_json(sample());
  CHECK(json.at("schema") == "roofline.sample.v1");
  CHECK(json.at("inputs").at("x") == 1);
  CHECK(json.at("results").at("rows").at(1).at("value_tbps") == 12.0);
  CHECK(json.at("hardware").at(0).at("file") == "bundled:hardware/h100-sxm.json");
  CHECK(json.at("notes").at(0) == "a note");
  CHECK(json.contains("tool_version"));
}

TEST_CASE("formats parse case-insensitively and others are bad input") {
  CHECK(parse_format("JSON") == Format::json);
  CHECK_THROWS_AS(parse_format("xml"), InputError);
}
