#pragma once

#include <span>
#include <string_view>

namespace roofline {

// A data file compiled into the binary, so that the tool works without its source tree.
struct EmbeddedFile {
  std::string_view path;  // relative to the project root, e.g. "hardware/h100-sxm.json"
  std::string_view contents;
  // The document's top-level "id" and "aliases", read when the binary was built, so that a registry
  // finds a bundled file by name without parsing them all; empty for a file without an id (a
  // schema, or one that is not valid JSON, which the registry then parses to report).
  std::string_view id;
  std::span<const std::string_view> aliases;
};

// The bundled hardware database: hardware/*.json and hardware/schema.json.
std::span<const EmbeddedFile> bundled_hardware_files();

// The bundled LLM architecture presets: models/*.json and models/schema.json.
std::span<const EmbeddedFile> bundled_model_files();

}  // namespace roofline
