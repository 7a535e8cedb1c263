#include <limits>

#include "catch.hpp"
#include "roofline/core/json_schema.hpp"

using namespace roofline;
using nlohmann::json;

namespace {
const json schema = json::parse(R"({
  "type": "object",
  "additionalProperties": false,
  "required": ["n", "name"],
  "properties": {
    "n": {"type": "integer", "exclusiveMinimum": 0, "maximum": 10},
    "x": {"$ref": "#/definitions/positive"},
    "name": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2},
    "kind": {"enum": ["a", "b"]},
    "list": {"type": "array", "minItems": 1, "items": {"type": "string"}},
    "map": {"type": "object", "minProperties": 1, "additionalProperties": {"type": "number"}}
  },
  "definitions": {"positive": {"type": "number", "exclusiveMinimum": 0}}
})");

std::vector<std::string> pointers(const json& doc) {
  std::vector<std::string> out;
  for (const auto& v : SchemaValidator(schema).validate(doc)) out.push_back(v.pointer + ": " + v.message);
  return out;
}
}  // namespace

TEST_CASE("a valid document has no violations") {
  CHECK(pointers(json::parse(R"({"n": 3, "name": "ab", "x": 0.5, "kind": "a", "list": ["q"], "map": {"k": 1}})"))
            .empty());
  // 4.0 is an integer in JSON Schema's sense.
  CHECK(pointers(json::parse(R"({"n": 4.0, "name": "ab"})")).empty());
}

TEST_CASE("each keyword reports its violation at the right pointer") {
  CHECK(pointers(json::parse(R"({"name": "ab"})")) == std::vector<std::string>{"/n: is required but missing"});
  CHECK(pointers(json::parse(R"({"n": 0, "name": "ab"})")) ==
        std::vector<std::string>{"/n: must be greater than 0, not 0"});
  CHECK(pointers(json::parse(R"({"n": 11, "name": "ab"})")) ==
        std::vector<std::string>{"/n: must be at most 10, not 11"});
  CHECK(pointers(json::parse(R"({"n": 1.5, "name": "ab"})")) ==
        std::vector<std::string>{"/n: must be of type integer, not number"});
  CHECK(pointers(json::parse(R"({"n": 1, "name": "a"})")) ==
        std::vector<std::string>{"/name: must have at least 2 characters"});
  CHECK(pointers(json::parse(R"({"n": 1, "name": "AB"})")) ==
        std::vector<std::string>{"/name: 'AB' does not match ^[a-z]+$"});
  CHECK(pointers(json::parse(R"({"n": 1, "name": "ab", "x": -1})")) ==
        std::vector<std::string>{"/x: must be greater than 0, not -1"});
  CHECK(pointers(json::parse(R"({"n": 1, "name": "ab", "kind": "c"})")) ==
        std::vector<std::string>{"/kind: must be one of [\"a\",\"b\"], not \"c\""});
  CHECK(pointers(json::parse(R"({"n": 1, "name": "ab", "list": []})")) ==
        std::vector<std::string>{"/list: must have at least 1 items"});
  CHECK(pointers(json::parse(R"({"n": 1, "name": "ab", "list": [3]})")) ==
        std::vector<std::string>{"/list/0: must be of type string, not integer"});
  CHECK(pointers(json::parse(R"({"n": 1, "name": "ab", "map": {"k": "v"}})")) ==
        std::vector<std::string>{"/map/k: must be of type number, not string"});
  CHECK(pointers(json::parse(R"({"n": 1, "name": "ab", "nme": 1})")) ==
        std::vector<std::string>{"/nme: is not a known key (did you mean 'name'?)"});
}

TEST_CASE("non-finite numbers are rejected") {
  // A document built in code can hold infinity or NaN, which JSON cannot spell.
  json doc = json::parse(R"({"n": 1, "name": "ab"})");
  doc["x"] = std::numeric_limits<double>::infinity();
  CHECK(pointers(doc) == std::vector<std::string>{"/x: must be a finite number"});
  doc["x"] = std::numeric_limits<double>::quiet_NaN();
  CHECK(pointers(doc) == std::vector<std::string>{"/x: must be a finite number"});
}

TEST_CASE("a schema with an unsupported keyword is refused up front") {
  CHECK_THROWS_AS(SchemaValidator(json::parse(R"({"oneOf": []})")), std::logic_error);
}
