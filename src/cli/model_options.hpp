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

// How a command names its model: --model takes a preset id or alias (with --models-dir for user
// files), a config.json or the directory that holds it, `-` (a config.json on stdin), or a Hugging
// Face id looked up in the local Hugging Face cache (at --revision); --hf-config a config.json.
struct ModelOptions {
  std::optional<std::string> model;
  std::optional<std::string> hf_config;
  std::optional<std::string> revision;
  std::vector<std::string> models_dirs;
  bool allow_long_context = false;  // --allow-long-context (commands with --context)
};

void add_model_options(CLI::App& command, ModelOptions& options);
// --allow-long-context, for the commands that check a sequence against the model's context (check_context).
void add_context_limit_option(CLI::App& command, ModelOptions& options);

// The model the flags name; exactly one of --model and --hf-config is required (InputError).
// Notes about user files replacing presets go to stderr. Never uses the network.
[[nodiscard]] ModelSpec resolve_model(const ModelOptions& options);

// `tokens` of one sequence (`flags` names where they come from: --context, --seq, --prompt-tokens +
// --output-tokens) beyond the model's longest (max_position_embeddings, or its rope-scaled length)
// are bad input unless --allow-long-context; then the returned note says so (else empty).
[[nodiscard]] std::string check_context(const ModelSpec& model, std::int64_t tokens, const ModelOptions& options,
                                        std::string_view flags = "--context");

// The formats the checkpoint stores (ModelSpec::checkpoint) become the deployment's weight formats
// where --weights was not given. Returns the report's note on which format it used (empty for a
// model without checkpoint formats).
[[nodiscard]] std::string apply_checkpoint_format(const ModelSpec& model, bool weights_flag_given,
                                                  DeploymentConfig& config);

// The registry of presets and --models-dir files (for commands that list models).
[[nodiscard]] ModelRegistry load_models(const ModelOptions& options);

// The model's description for a report's inputs: id, where it came from, its shapes.
[[nodiscard]] nlohmann::json model_summary(const ModelSpec& model);

// Parses a data type flag and checks it is a storage format a deployment can use.
[[nodiscard]] DType parse_storage_dtype(const std::string& text, std::string_view flag);

// A positive integer flag value (sizes, counts), at most `limit`; throws InputError naming the flag.
void require_positive(std::int64_t value, std::string_view flag, std::int64_t limit = max_tokens);

}  // namespace roofline::cli
