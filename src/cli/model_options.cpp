#include "model_options.hpp"

#include <fmt/format.h>

#include <iostream>
#include <iterator>

#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"

namespace roofline::cli {

void add_model_options(CLI::App& command, ModelOptions& options) {
  command
      .add_option("--model", options.model,
                  "Model: a preset id or alias (models/*.json), a Hugging Face id found in the local Hugging Face "
                  "cache (HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub; never downloaded), a config.json or "
                  "its directory, or - for a config.json on stdin")
      ->group("Model");
  command
      .add_option("--revision", options.revision,
                  "With a Hugging Face id: the snapshot to read (a commit, or a name under refs/; default main)")
      ->group("Model");
  command
      .add_option("--hf-config", options.hf_config,
                  "Read the model from a Hugging Face config.json instead of a preset")
      ->group("Model");
  command
      .add_option("--models-dir", options.models_dirs,
                  "Also load model presets (*.json, models/schema.json) from DIR; a file with a bundled id "
                  "replaces it")
      ->group("Model");
}

ModelRegistry load_models(const ModelOptions& options) {
  std::vector<std::filesystem::path> dirs(options.models_dirs.begin(), options.models_dirs.end());
  ModelRegistry registry = ModelRegistry::load(dirs);
  for (const std::string& note : registry.notes()) std::cerr << "roofline: note: " << note << '\n';
  return registry;
}

void add_context_limit_option(CLI::App& command, ModelOptions& options) {
  command
      .add_flag("--allow-long-context", options.allow_long_context,
                "Accept a sequence (--context, --seq, or prompt + output) beyond the model's longest "
                "(max_position_embeddings or its rope-scaled length)")
      ->group("Model");
}

namespace {

// A config.json named by path: the file, or the config.json of a directory.
ModelSpec read_config_path(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return read_hf_config(path / "config.json");
  return read_hf_config(path);
}

}  // namespace

ModelSpec resolve_model(const ModelOptions& options) {
  if (options.model && options.hf_config) {
    throw InputError("--model and --hf-config: give one of them, not both");
  }
  const bool hf_id = options.model && looks_like_hf_id(*options.model);
  if (options.revision && !hf_id) {
    throw InputError("--revision: only with --model ORG/NAME (a Hugging Face id in the local cache)");
  }
  if (options.hf_config) return read_hf_config(*options.hf_config);
  if (!options.model) throw InputError("--model or --hf-config is required");
  const std::string& name = *options.model;
  if (name == "-") {
    const std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    if (text.size() > max_spec_file_bytes) {
      throw InputError(fmt::format("--model -: {} bytes on stdin, more than the {} a config.json may have", text.size(),
                                   max_spec_file_bytes));
    }
    return parse_hf_config(text, "<stdin>");
  }
  const ModelRegistry registry = load_models(options);
  if (!options.revision) {
    if (const ModelSpec* preset = registry.try_find(name)) return *preset;
  }
  std::error_code ec;
  if (!hf_id || std::filesystem::exists(name, ec)) {
    if (std::filesystem::exists(name, ec)) return read_config_path(name);
    if (name.find('/') != std::string::npos || name.ends_with(".json")) {
      throw InputError(fmt::format("--model {}: no such file or directory (and not an ORG/NAME id)", name));
    }
    return registry.find(name);  // unknown: the message with suggestions
  }
  HfReadOptions cached;
  cached.id = name;
  return read_hf_config(find_in_hf_cache(name, options.revision, hf_cache_dirs()), cached);
}

std::string check_context(const ModelSpec& model, std::int64_t tokens, const ModelOptions& options,
                          std::string_view flags) {
  if (!model.max_context || tokens <= *model.max_context) return {};
  const std::string what =
      fmt::format("{} {}: more than the {} tokens {} supports", flags, tokens, *model.max_context, model.id);
  if (!options.allow_long_context) {
    throw InputError(what + " (max_position_embeddings or its rope-scaled length; --allow-long-context to go on)");
  }
  return what + "; accepted by --allow-long-context: the model was not trained that long";
}

std::string apply_checkpoint_format(const ModelSpec& model, bool weights_flag_given, DeploymentConfig& config) {
  if (!model.checkpoint) return {};
  if (weights_flag_given) {
    const bool same = model.checkpoint->linear == config.weights &&
                      model.checkpoint->experts.value_or(config.weights) == config.weights;
    return fmt::format("weights: --weights {}, {} the checkpoint's ({})", name_of(config.weights), same ? "as" : "not",
                       model.checkpoint->description);
  }
  if (model.checkpoint->linear) config.weights = *model.checkpoint->linear;
  config.expert_weights = model.checkpoint->experts;
  return fmt::format("weights: the checkpoint's, {}", model.checkpoint->description);
}

nlohmann::json model_summary(const ModelSpec& m) {
  const ParameterCounts p = count_parameters(m);
  nlohmann::json attention = {{"kind", name_of(m.attention.kind)}, {"heads", m.attention.heads}};
  if (m.attention.kind == AttentionKind::gqa) {
    attention["kv_heads"] = m.attention.kv_heads;
    attention["head_dim"] = m.attention.head_dim;
  } else {
    attention["kv_lora_rank"] = m.attention.kv_lora_rank;
    attention["qk_rope_head_dim"] = m.attention.qk_rope_head_dim;
  }
  attention["sliding_window"] = m.attention.sliding_window ? nlohmann::json(*m.attention.sliding_window) : nullptr;
  if (!m.layer_attention.empty()) {
    // The per-layer pattern, as runs of equal layers: [{"attention": "sliding 128", "layers": 1}, ...].
    nlohmann::json runs = nlohmann::json::array();
    for (const LayerAttention& layer : m.layer_attention) {
      const std::string name = layer.describe();
      if (!runs.empty() && runs.back()["attention"] == name) {
        runs.back()["layers"] = runs.back()["layers"].get<std::int64_t>() + 1;
      } else {
        runs.push_back({{"attention", name}, {"layers", 1}});
      }
    }
    attention["layers"] = std::move(runs);
  }
  nlohmann::json summary = {{"id", m.id},
                            {"file", m.origin},
                            {"source", m.source_url},
                            {"layers", m.layers},
                            {"hidden_size", m.hidden},
                            {"attention", attention},
                            {"parameters_total", p.total},
                            {"parameters_active", p.active},
                            {"experts", m.moe ? nlohmann::json(m.moe->experts) : nullptr},
                            {"experts_per_token", m.moe ? nlohmann::json(m.moe->experts_per_token) : nullptr}};
  return summary;
}

DType parse_storage_dtype(const std::string& text, std::string_view flag) {
  const DType type = parse_dtype(text, flag);
  if (type == DType::tf32) {
    throw InputError(fmt::format("{} tf32: tf32 is a math mode, not a storage format (use fp32)", flag));
  }
  return type;
}

void require_positive(std::int64_t value, std::string_view flag, std::int64_t limit) {
  if (value < 1) throw InputError(fmt::format("{} {}: must be a positive integer", flag, value));
  if (value > limit) throw InputError(fmt::format("{} {}: more than the {} roofline models", flag, value, limit));
}

}  // namespace roofline::cli
