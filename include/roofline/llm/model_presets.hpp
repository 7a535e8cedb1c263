#pragma once

// Model presets: models/*.json, validated by models/schema.json and embedded in the binary; users
// add their own with --models-dir.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/core/embedded_file.hpp"
#include "roofline/llm/model.hpp"

namespace roofline {

// Parses and validates a roofline model document (models/schema.json plus check_model). Throws
// InputError naming `origin` and the key.
[[nodiscard]] ModelSpec load_model_document(std::string_view text, const std::string& origin);

// The JSON Schema of model files (the embedded models/schema.json).
[[nodiscard]] const nlohmann::json& model_schema();

// Bundled presets, then *.json of each --models-dir (a user file with a bundled id replaces it).
//
// What is validated when (as for HardwareRegistry): every --models-dir file by load(); a bundled
// preset, indexed by the id and aliases the build read from it, the first time find() or all()
// asks for it. An alias naming two models is an error of load(). A first look-up fills the cache:
// share one registry between threads only after all() was called.
class ModelRegistry {
 public:
  [[nodiscard]] static ModelRegistry load(const std::vector<std::filesystem::path>& directories);
  [[nodiscard]] static ModelRegistry bundled_only() { return load({}); }

  // Every model, each parsed and validated.
  [[nodiscard]] const std::vector<ModelSpec>& all() const;
  // By id or alias, case-insensitively; throws InputError with a suggestion and the known ids.
  [[nodiscard]] const ModelSpec& find(std::string_view name) const;
  // By id or alias, case-insensitively; nullptr when no model has that name.
  [[nodiscard]] const ModelSpec* try_find(std::string_view name) const;
  [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }

 private:
  void add(ModelSpec model, std::string_view unparsed);
  void add_bundled(const EmbeddedFile& file);
  // The model at `index`, parsed and validated if it was still a bundled file's index entry.
  const ModelSpec& loaded(std::size_t index) const;

  // In registry order; a bundled preset not asked for yet holds only its id, aliases and origin,
  // and its file's text waits in unparsed_ (empty once parsed, and for user files).
  mutable std::vector<ModelSpec> models_;
  mutable std::vector<std::string_view> unparsed_;
  std::vector<std::string> notes_;
};

}  // namespace roofline
