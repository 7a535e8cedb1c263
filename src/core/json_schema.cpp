#include "roofline/core/json_schema.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <regex>
#include <stdexcept>
#include <string_view>

#include "roofline/core/text.hpp"

namespace roofline {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 23> supported_keywords{"$schema",
                                                              "$id",
                                                              "$ref",
                                                              "title",
                                                              "description",
                                                              "definitions",
                                                              "type",
                                                              "const",
                                                              "enum",
                                                              "properties",
                                                              "required",
                                                              "additionalProperties",
                                                              "minProperties",
                                                              "items",
                                                              "minItems",
                                                              "maxItems",
                                                              "pattern",
                                                              "minLength",
                                                              "maxLength",
                                                              "minimum",
                                                              "maximum",
                                                              "exclusiveMinimum",
                                                              "exclusiveMaximum"};

bool keyword_supported(const std::string& key) {
  for (std::string_view k : supported_keywords) {
    if (k == key) return true;
  }
  return false;
}

std::string type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    default: return "binary";
  }
}

bool has_type(const json& value, const std::string& type) {
  if (type == "number") return value.is_number();
  if (type == "integer") {
    if (value.is_number_integer()) return true;
    // 3.0 is an integer in JSON Schema's sense.
    return value.is_number_float() && std::isfinite(value.get<double>()) &&
           value.get<double>() == std::floor(value.get<double>());
  }
  if (type == "string") return value.is_string();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  throw std::logic_error("unknown JSON Schema type '" + type + "'");
}

// JSON Schema counts a string's length in Unicode code points; JSON text is UTF-8, where every
// code point starts with a byte that is not a continuation byte (10xxxxxx).
std::size_t code_points(std::string_view text) {
  std::size_t count = 0;
  for (const char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0U) != 0x80U) ++count;
  }
  return count;
}

// A keyword's value must have the form the validator implements: a keyword it cannot evaluate
// as written is refused when the validator is built, like an unknown one.
void check_keyword_form(const std::string& key, const json& sub, const std::string& where) {
  const auto refuse = [&](std::string_view form) {
    throw std::logic_error(fmt::format("JSON Schema keyword '{}' at {} must be {}", key, where, form));
  };
  if (key == "type" && !(sub.is_string() && (sub == "number" || sub == "integer" || sub == "string" ||
                                             sub == "object" || sub == "array" || sub == "boolean" || sub == "null")))
    refuse("one type name");
  if ((key == "minLength" || key == "maxLength" || key == "minItems" || key == "maxItems" || key == "minProperties") &&
      !(sub.is_number_integer() && sub.get<std::int64_t>() >= 0))
    refuse("a non-negative integer");
  if ((key == "minimum" || key == "maximum" || key == "exclusiveMinimum" || key == "exclusiveMaximum") &&
      !sub.is_number())
    refuse("a number");
  if ((key == "properties" || key == "definitions") && !sub.is_object()) refuse("an object");
  if ((key == "additionalProperties" || key == "items") && !sub.is_object() && !sub.is_boolean())
    refuse("a schema (an object or a boolean)");
  if ((key == "pattern" || key == "$ref") && !sub.is_string()) refuse("a string");
  if ((key == "required" || key == "enum") && !sub.is_array()) refuse("an array");
  if (key == "required") {
    for (const json& name : sub) {
      if (!name.is_string()) refuse("an array of strings");
    }
  }
}

std::string short_text(const json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

}  // namespace

SchemaValidator::SchemaValidator(json schema) : schema_(std::move(schema)) {
  prepare(schema_, "#");
}

void SchemaValidator::prepare(const json& schema, const std::string& where) {
  if (schema.is_boolean()) return;
  if (!schema.is_object()) throw std::logic_error("schema at " + where + " is not an object");
  for (const auto& [key, sub] : schema.items()) {
    if (!keyword_supported(key)) throw std::logic_error("unsupported JSON Schema keyword '" + key + "' at " + where);
    check_keyword_form(key, sub, where);
    if (key == "properties" || key == "definitions") {
      for (const auto& [name, child] : sub.items()) prepare(child, where + "/" + key + "/" + name);
    } else if (key == "additionalProperties" || key == "items") {
      prepare(sub, where + "/" + key);
    } else if (key == "pattern") {
      const auto& text = sub.get_ref<const std::string&>();
      if (!patterns_.contains(text)) {
        try {
          patterns_.emplace(text, std::basic_regex<char, PatternTraits>(text, std::regex::ECMAScript));
        } catch (const std::regex_error& e) {
          throw std::logic_error(fmt::format("pattern '{}' at {} is not a regular expression std::regex reads ({})",
                                             text, where, e.what()));
        }
      }
    }
  }
}

const json& SchemaValidator::resolve(const json& schema) const {
  const json* current = &schema;
  for (int depth = 0; current->is_object() && current->contains("$ref"); ++depth) {
    if (depth > 32) throw std::logic_error("$ref chain too deep");
    const std::string ref = (*current)["$ref"].get<std::string>();
    if (!ref.starts_with("#")) throw std::logic_error("only local $ref is supported: " + ref);
    current = &schema_.at(json::json_pointer(ref.substr(1)));
  }
  return *current;
}

std::vector<SchemaViolation> SchemaValidator::validate(const json& document) const {
  std::vector<SchemaViolation> out;
  validate_node(schema_, document, "", out);
  return out;
}

void SchemaValidator::validate_node(const json& raw_schema, const json& value, const std::string& pointer,
                                    std::vector<SchemaViolation>& out) const {
  const json& schema = resolve(raw_schema);
  if (schema.is_boolean()) {
    if (!schema.get<bool>()) out.push_back({pointer, "is not allowed here"});
    return;
  }
  const auto fail = [&](std::string message) { out.push_back({pointer, std::move(message)}); };

  if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    fail("must be a finite number");
    return;
  }
  if (auto it = schema.find("type"); it != schema.end()) {
    const auto type = it->get<std::string>();
    if (!has_type(value, type)) {
      fail(fmt::format("must be of type {}, not {}", type, type_name(value)));
      return;
    }
  }
  if (auto it = schema.find("const"); it != schema.end() && value != *it) {
    fail(fmt::format("must be {}, not {}", it->dump(), short_text(value)));
  }
  if (auto it = schema.find("enum"); it != schema.end()) {
    bool found = false;
    for (const json& option : *it) found = found || option == value;
    if (!found) fail(fmt::format("must be one of {}, not {}", it->dump(), short_text(value)));
  }
  if (value.is_number()) {
    const double number = value.get<double>();
    if (auto it = schema.find("minimum"); it != schema.end() && number < it->get<double>()) {
      fail(fmt::format("must be at least {}, not {}", it->dump(), value.dump()));
    }
    if (auto it = schema.find("maximum"); it != schema.end() && number > it->get<double>()) {
      fail(fmt::format("must be at most {}, not {}", it->dump(), value.dump()));
    }
    if (auto it = schema.find("exclusiveMinimum"); it != schema.end() && number <= it->get<double>()) {
      fail(fmt::format("must be greater than {}, not {}", it->dump(), value.dump()));
    }
    if (auto it = schema.find("exclusiveMaximum"); it != schema.end() && number >= it->get<double>()) {
      fail(fmt::format("must be less than {}, not {}", it->dump(), value.dump()));
    }
  }
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    const std::size_t length = code_points(text);
    if (auto it = schema.find("minLength"); it != schema.end() && length < it->get<std::size_t>()) {
      fail(fmt::format("must have at least {} characters", it->get<std::size_t>()));
    }
    if (auto it = schema.find("maxLength"); it != schema.end() && length > it->get<std::size_t>()) {
      fail(fmt::format("must have at most {} characters", it->get<std::size_t>()));
    }
    if (auto it = schema.find("pattern"); it != schema.end()) {
      const auto& source = it->get_ref<const std::string&>();
      const auto pattern = patterns_.find(source);
      if (pattern == patterns_.end()) throw std::logic_error("pattern at " + pointer + " was not compiled");
      // libstdc++'s matcher recurses once per character a repetition consumes (about 250 bytes of
      // stack each): a 30,000-character id overflowed the 8 MiB main stack. Longer strings are
      // refused before they reach it; 1,024 characters need about 256 KiB.
      if (text.size() > max_pattern_checked_bytes) {
        fail(fmt::format("is {} bytes long, more than the {} a string checked against a pattern may have", text.size(),
                         max_pattern_checked_bytes));
      } else if (!std::regex_search(text, pattern->second)) {
        fail(fmt::format("'{}' does not match {}", text, source));
      }
    }
  }
  if (value.is_array()) {
    if (auto it = schema.find("minItems"); it != schema.end() && value.size() < it->get<std::size_t>()) {
      fail(fmt::format("must have at least {} items", it->get<std::size_t>()));
    }
    if (auto it = schema.find("maxItems"); it != schema.end() && value.size() > it->get<std::size_t>()) {
      fail(fmt::format("must have at most {} items", it->get<std::size_t>()));
    }
    if (auto it = schema.find("items"); it != schema.end()) {
      for (std::size_t i = 0; i < value.size(); ++i)
        validate_node(*it, value[i], pointer + "/" + std::to_string(i), out);
    }
  }
  if (value.is_object()) {
    if (auto it = schema.find("minProperties"); it != schema.end() && value.size() < it->get<std::size_t>()) {
      fail(fmt::format("must have at least {} entries", it->get<std::size_t>()));
    }
    if (auto it = schema.find("required"); it != schema.end()) {
      for (const json& name : *it) {
        if (!value.contains(name.get<std::string>())) {
          out.push_back({pointer + "/" + json_pointer_token(name.get<std::string>()), "is required but missing"});
        }
      }
    }
    const json* properties = schema.contains("properties") ? &schema["properties"] : nullptr;
    const json* additional = schema.contains("additionalProperties") ? &schema["additionalProperties"] : nullptr;
    for (const auto& [key, child] : value.items()) {
      const std::string child_pointer = pointer + "/" + json_pointer_token(key);
      if (properties != nullptr && properties->contains(key)) {
        validate_node((*properties)[key], child, child_pointer, out);
      } else if (additional != nullptr) {
        if (additional->is_boolean() && !additional->get<bool>()) {
          std::vector<std::string> known;
          if (properties != nullptr) {
            for (const auto& [name, unused] : properties->items()) known.push_back(name);
          }
          std::string message = "is not a known key";
          if (auto guess = closest_match(key, known)) message += fmt::format(" (did you mean '{}'?)", *guess);
          out.push_back({child_pointer, message});
        } else {
          validate_node(*additional, child, child_pointer, out);
        }
      }
    }
  }
}

std::string json_pointer_token(std::string_view key) {
  std::string out;
  for (const char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

}  // namespace roofline
