#pragma once

// Hugging Face config.json (transformers' PretrainedConfig as saved next to the weights) read as
// a ModelSpec, and the local Hugging Face cache that holds it. No network is ever used.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/llm/model.hpp"

namespace roofline {

// Supported model_types (docs/llm.md lists what each maps to): llama, mistral, mixtral, qwen2,
// qwen2_moe, qwen3, qwen3_moe, deepseek_v2/v3, gpt_oss, gemma2, gemma3 / gemma3_text, cohere2,
// phi3, llama4 / llama4_text, glm4_moe; another model_type is read as the family its
// `architectures` names (Kimi-K2's kimi_k2 as DeepseekV3ForCausalLM). A "text_config" block
// (multimodal checkpoints) is read instead of the top level. Throws InputError naming the file and
// the key at fault.
struct HfReadOptions {
  // The model's Hugging Face id where the caller knows it (the cache it came from); else the
  // cache layout of the path, then _name_or_path, then the path itself.
  std::optional<std::string> id;
  // A ModelOpt checkpoint's hf_quant_config.json next to config.json, as text.
  std::optional<std::string> quant_side_file;
};
[[nodiscard]] ModelSpec read_hf_config(const std::filesystem::path& path, const HfReadOptions& options = {});
[[nodiscard]] ModelSpec parse_hf_config(std::string_view text, const std::string& origin,
                                        const HfReadOptions& options = {});

// The Hugging Face cache directories, in the order they are searched: $HF_HUB_CACHE, $HF_HOME/hub,
// ~/.cache/huggingface/hub (those whose variable is set).
[[nodiscard]] std::vector<std::filesystem::path> hf_cache_dirs();

// Whether `name` has the form of a Hugging Face id (ORG/NAME).
[[nodiscard]] bool looks_like_hf_id(std::string_view name);

// config.json of `id` in the first cache that holds it: models--ORG--NAME/snapshots/<revision>/,
// where the revision is `revision` (a commit or a name under refs/), else refs/main, else the only
// snapshot. Throws InputError saying where it looked and how to get the file.
[[nodiscard]] std::filesystem::path find_in_hf_cache(std::string_view id, const std::optional<std::string>& revision,
                                                     const std::vector<std::filesystem::path>& caches);

}  // namespace roofline
