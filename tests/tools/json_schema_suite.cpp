// Runs the JSON-Schema-Test-Suite (Debian package json-schema-test-suite, draft 7) against
// roofline's validator (src/core/json_schema.cpp) for the keywords the validator claims. A case
// whose schema uses a keyword or a form the validator refuses when it is built (a std::logic_error:
// anyOf, a list of types, a remote $ref) is outside what it claims and is counted as skipped; every
// other case must give the suite's answer. Exit 0 when all agree, 1 on a disagreement, 77 (CTest:
// skipped) when the suite is not installed.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "roofline/core/json_schema.hpp"

namespace {

// One file per keyword the validator implements (roofline/core/json_schema.hpp), plus boolean
// schemas, which it also accepts.
constexpr const char* claimed_files[] = {
    "type",          "const",         "enum",     "properties",       "required",         "additionalProperties",
    "minProperties", "items",         "minItems", "maxItems",         "pattern",          "minLength",
    "maxLength",     "minimum",       "maximum",  "exclusiveMinimum", "exclusiveMaximum", "ref",
    "definitions",   "boolean_schema"};

struct Tally {
  int passed = 0;
  int failed = 0;
  int skipped = 0;
};

void run_file(const std::filesystem::path& file, Tally& tally) {
  std::ifstream in(file);
  const nlohmann::json groups = nlohmann::json::parse(in);
  for (const nlohmann::json& group : groups) {
    const std::string description = group.at("description").get<std::string>();
    std::optional<roofline::SchemaValidator> validator;
    try {
      validator.emplace(group.at("schema"));
    } catch (const std::logic_error& e) {
      tally.skipped += static_cast<int>(group.at("tests").size());
      std::cout << fmt::format("skip  {}: {} ({})\n", file.stem().string(), description, e.what());
      continue;
    }
    for (const nlohmann::json& test : group.at("tests")) {
      const std::string name = test.at("description").get<std::string>();
      bool valid = false;
      try {
        valid = validator->validate(test.at("data")).empty();
      } catch (const std::logic_error& e) {
        // A $ref the validator cannot follow is found only while validating.
        ++tally.skipped;
        std::cout << fmt::format("skip  {}: {}: {} ({})\n", file.stem().string(), description, name, e.what());
        continue;
      }
      if (valid == test.at("valid").get<bool>()) {
        ++tally.passed;
      } else {
        ++tally.failed;
        std::cout << fmt::format("FAIL  {}: {}: {}: the suite says {}, roofline says {}\n", file.stem().string(),
                                 description, name, test.at("valid").get<bool>() ? "valid" : "invalid",
                                 valid ? "valid" : "invalid");
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path suite =
      argc > 1 ? std::filesystem::path(argv[1]) : "/usr/share/json-schema-test-suite/tests/draft7";
  if (!std::filesystem::is_directory(suite)) {
    std::cout << suite.string() << ": not installed (apt-get install json-schema-test-suite); skipped\n";
    return 77;
  }
  Tally tally;
  for (const char* keyword : claimed_files) {
    const std::filesystem::path file = suite / (std::string(keyword) + ".json");
    if (!std::filesystem::exists(file)) {
      std::cout << fmt::format("skip  {}: not in this version of the suite\n", keyword);
      continue;
    }
    run_file(file, tally);
  }
  std::cout << fmt::format(
      "{} cases agree with the suite, {} disagree, {} skipped (outside what the validator claims)\n", tally.passed,
      tally.failed, tally.skipped);
  return tally.failed == 0 && tally.passed > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
