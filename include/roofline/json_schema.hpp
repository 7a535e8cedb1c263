#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

namespace roofline {

struct SchemaViolation {
  std::string pointer;  // JSON pointer of the offending value ("" is the document root)
  std::string message;
};

// Validates documents against a JSON Schema (draft-07) restricted to the keywords the project's
// schemas use: $ref (local), type, const, enum, properties, required, additionalProperties,
// minProperties, items, minItems, maxItems, pattern, minLength, minimum, maximum,
// exclusiveMinimum, exclusiveMaximum. Annotations ($schema, $id, title, description) are
// ignored; any other keyword is rejected when the validator is built, so that a schema can
// never rely on a rule that is silently skipped. Numbers must also be finite.
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
  std::map<std::string, std::regex, std::less<>> patterns_;
};

}  // namespace roofline
