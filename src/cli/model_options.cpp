#include "model_options.hpp"

#include <fmt/format.h>

#include <iostream>

#include "roofline/core/error.hpp"

namespace roofline::cli {

void add_model_options(CLI::App& command, ModelOptions& options) {
  command.add_option("--model", options.model, "Model preset id or alias (see models/*.json)")->group("Model");
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

ModelSpec resolve_model(const ModelOptions& options) {
  if (options.model && options.hf_config) {
    throw InputError("--model and --hf-config: give one of them, not both");
  }
  if (options.hf_config) return read_hf_config(*options.hf_config);
  if (!options.model) throw InputError("--model or --hf-config is required");
  return load_models(options).find(*options.model);
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
