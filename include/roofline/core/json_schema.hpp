#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

// Strings longer than this (in bytes) are refused rather than matched against a "pattern":
// std::regex recurses per character (see validate_node).
inline constexpr std::size_t max_pattern_checked_bytes = 1024;

struct SchemaViolation {
  std::string pointer;  // JSON pointer of the offending value ("" is the document root)
  std::string message;
};

// Validates documents against a JSON Schema (draft-07) restricted to the keywords the project's
// schemas use: $ref (local), type, const, enum, properties, required, additionalProperties,
// minProperties, items (one schema for every item), minItems, maxItems, pattern, minLength,
// maxLength (in code points, as JSON Schema counts), minimum, maximum, exclusiveMinimum,
// exclusiveMaximum; "type" names one type. Annotations ($schema, $id, title, description) are
// ignored; any other keyword, or a keyword in a form not listed (a list of types, items as a
// tuple), is rejected when the validator is built, so that a schema can never rely on a rule that
// is silently skipped. Numbers must also be finite. tests/tools/json_schema_suite.cpp runs the
// JSON-Schema-Test-Suite against exactly these keywords.
// std::regex_traits<char>, except that a character's primary sort key (used only by equivalence
// classes, [[=a=]]) is computed directly as the C locale's: the character, lower-cased. libstdc++
// computes it through two locale facets and a strxfrm for each of the 256 characters of every
// bracket expression it compiles, which made compiling a schema's patterns cost more than
// validating a document.
struct PatternTraits : std::regex_traits<char> {
  template <typename Iterator>
  [[nodiscard]] string_type transform_primary(Iterator first, Iterator last) const {
    string_type key(first, last);
    for (char& c : key) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return key;
  }
};

class SchemaValidator {
 public:
  explicit SchemaValidator(nlohmann::json schema);

  [[nodiscard]] std::vector<SchemaViolation> validate(const nlohmann::json& document) const;

 private:
  // Checks every keyword is supported and compiles each "pattern" once (compiling a std::regex
  // costs more than validating a whole document).
  void prepare(const nlohmann::json& schema, const std::string& where);
  void validate_node(const nlohmann::json& schema, const nlohmann::json& value, const std::string& pointer,
                     std::vector<SchemaViolation>& out) const;
  [[nodiscard]] const nlohmann::json& resolve(const nlohmann::json& schema) const;

  nlohmann::json schema_;
  std::map<std::string, std::basic_regex<char, PatternTraits>, std::less<>> patterns_;
};

// `key` as one reference token of a JSON Pointer (RFC 6901: '~' as "~0", '/' as "~1").
[[nodiscard]] std::string json_pointer_token(std::string_view key);

}  // namespace roofline
