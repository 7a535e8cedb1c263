#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "roofline/llm/deployment.hpp"
#include "roofline/llm/hf_config.hpp"
#include "roofline/llm/model_presets.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli {

// How a command names its model: a preset (--model, with --models-dir for user files) or a
// Hugging Face config.json (--hf-config).
struct ModelOptions {
  std::optional<std::string> model;
  std::optional<std::string> hf_config;
  std::vector<std::string> models_dirs;
};

void add_model_options(CLI::App& command, ModelOptions& options);

// The model the flags name; exactly one of --model and --hf-config is required (InputError).
// Notes about user files replacing presets go to stderr.
[[nodiscard]] ModelSpec resolve_model(const ModelOptions& options);

// The registry of presets and --models-dir files (for commands that list models).
[[nodiscard]] ModelRegistry load_models(const ModelOptions& options);

// The model's description for a report's inputs: id, where it came from, its shapes.
[[nodiscard]] nlohmann::json model_summary(const ModelSpec& model);

// Parses a data type flag and checks it is a storage format a deployment can use.
[[nodiscard]] DType parse_storage_dtype(const std::string& text, std::string_view flag);

// A positive integer flag value (sizes, counts), at most `limit`; throws InputError naming the flag.
void require_positive(std::int64_t value, std::string_view flag, std::int64_t limit = max_tokens);

}  // namespace roofline::cli
