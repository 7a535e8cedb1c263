#pragma once

// Hugging Face config.json (transformers' PretrainedConfig as saved next to the weights) read as
// a ModelSpec.

#include <filesystem>
#include <string>
#include <string_view>

#include "roofline/llm/model.hpp"

namespace roofline {

// Supported: llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, deepseek_v2/v3 and
// other model_types that share their keys; a "text_config" block (multimodal checkpoints) is
// read instead of the top level. Throws InputError naming the file and the key at fault.
[[nodiscard]] ModelSpec read_hf_config(const std::filesystem::path& path);
[[nodiscard]] ModelSpec parse_hf_config(std::string_view text, const std::string& origin);

}  // namespace roofline
