// Hugging Face config.json: the shapes of a checkpoint, read into a ModelSpec, and the local cache
// that holds it.
#include "roofline/llm/hf_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <functional>

#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"

namespace roofline {
namespace {

using nlohmann::json;

// Where a family's layers take their attention when the config has no layer_types.
enum class WindowRule : std::uint8_t {
  uniform,       // sliding_window, where set, applies to every layer (Mistral, Phi-3)
  switched,      // sliding_window counts only when use_sliding_window is true (Qwen)
  alternating,   // even layers sliding, odd full (Gemma 2)
  every_nth,     // sliding except every sliding_window_pattern-th layer (Gemma 3, Cohere2)
  none,          // no window (DeepSeek, GLM)
  chunked_nope,  // chunked attention except the NoPE layers, which attend to all (Llama 4)
  listed,        // layer_types is required (gpt-oss)
};

// How each supported model_type stores what the keys do not say (transformers' class defaults).
struct HfFamily {
  std::string_view model_type;
  bool qkv_bias;         // the attention projections carry biases regardless of the config
  bool tied_by_default;  // transformers' default for tie_word_embeddings in this class
  WindowRule window;
  std::int64_t window_pattern = 0;     // default sliding_window_pattern (every_nth)
  std::int64_t default_vocab = 0;      // vocab_size where the config leaves it out (0: required)
  std::int64_t default_positions = 0;  // max_position_embeddings where left out (0: unknown)
  std::int64_t default_window = 0;     // sliding_window where left out
  std::string_view default_activation = "silu";
};

constexpr std::array<HfFamily, 17> hf_families{{
    {"llama", false, false, WindowRule::uniform},
    {"mistral", false, false, WindowRule::uniform},
    {"mixtral", false, false, WindowRule::uniform},
    {"qwen2", true, false, WindowRule::switched},
    {"qwen2_moe", true, false, WindowRule::switched},
    {"qwen3", false, false, WindowRule::switched},
    {"qwen3_moe", false, false, WindowRule::switched},
    {"deepseek_v2", false, false, WindowRule::none},
    {"deepseek_v3", false, false, WindowRule::none},
    {"glm4_moe", false, false, WindowRule::none},
    {"phi3", false, false, WindowRule::uniform},
    {"gpt_oss", true, false, WindowRule::listed},
    {"gemma2", false, true, WindowRule::alternating, 0, 256000, 8192, 4096, "gelu_pytorch_tanh"},
    // Gemma3TextConfig: vocab 262,208, 131,072 positions, a window of 4,096 on five layers of six.
    {"gemma3_text", false, true, WindowRule::every_nth, 6, 262208, 131072, 4096, "gelu_pytorch_tanh"},
    {"gemma3", false, true, WindowRule::every_nth, 6, 262208, 131072, 4096, "gelu_pytorch_tanh"},
    {"cohere2", false, true, WindowRule::every_nth, 4, 0, 0, 4096},
    {"llama4_text", false, false, WindowRule::chunked_nope},
}};

// model_types read as another family: the multimodal wrappers' text models and DeepSeek-V3's
// architecture under other names, found by `architectures`.
struct HfArchitecture {
  std::string_view architecture;
  std::string_view model_type;
};
constexpr std::array<HfArchitecture, 8> hf_architectures{{
    {"DeepseekV3ForCausalLM", "deepseek_v3"},
    {"DeepseekV2ForCausalLM", "deepseek_v2"},
    {"LlamaForCausalLM", "llama"},
    {"MistralForCausalLM", "mistral"},
    {"Qwen2ForCausalLM", "qwen2"},
    {"Qwen3ForCausalLM", "qwen3"},
    {"Qwen3MoeForCausalLM", "qwen3_moe"},
    {"Phi3ForCausalLM", "phi3"},
}};

class HfReader {
 public:
  HfReader(const json& config, std::string origin) : c_(config), origin_(std::move(origin)) {}

  [[noreturn]] void fail(std::string_view key, const std::string& problem) const {
    throw InputError(fmt::format("{}: key '{}' {}", origin_, key, problem));
  }

  [[nodiscard]] const json& config() const { return c_; }
  [[nodiscard]] bool has(const char* key) const { return c_.contains(key) && !c_.at(key).is_null(); }

  [[nodiscard]] std::int64_t positive(const char* key) const {
    if (!has(key)) fail(key, "is missing");
    return positive_value(key);
  }
  [[nodiscard]] std::optional<std::int64_t> optional_positive(const char* key) const {
    if (!has(key)) return std::nullopt;
    return positive_value(key);
  }
  [[nodiscard]] std::int64_t non_negative(const char* key, std::int64_t fallback) const {
    if (!has(key)) return fallback;
    const json& v = c_.at(key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0) {
      fail(key, fmt::format("must be a non-negative integer (found {})", v.dump()));
    }
    return v.get<std::int64_t>();
  }
  [[nodiscard]] bool boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!c_.at(key).is_boolean()) fail(key, fmt::format("must be true or false (found {})", c_.at(key).dump()));
    return c_.at(key).get<bool>();
  }
  [[nodiscard]] std::optional<std::string> string(const char* key) const {
    if (!has(key)) return std::nullopt;
    if (!c_.at(key).is_string()) fail(key, fmt::format("must be a string (found {})", c_.at(key).dump()));
    return c_.at(key).get<std::string>();
  }
  [[nodiscard]] std::optional<double> number(const json& parent, const char* key, std::string_view path) const {
    if (!parent.contains(key) || parent.at(key).is_null()) return std::nullopt;
    const json& v = parent.at(key);
    if (!v.is_number() || v.get<double>() <= 0)
      fail(path, fmt::format("must be a positive number (found {})", v.dump()));
    return v.get<double>();
  }
  [[nodiscard]] const json* array(const char* key) const {
    if (!has(key)) return nullptr;
    if (!c_.at(key).is_array()) fail(key, fmt::format("must be a list (found {})", c_.at(key).dump()));
    return &c_.at(key);
  }

 private:
  [[nodiscard]] std::int64_t positive_value(const char* key) const {
    const json& v = c_.at(key);
    // Integers only: 4096.0 would be accepted by Python but is not what transformers writes.
    if (!v.is_number_integer() || v.get<std::int64_t>() <= 0) {
      fail(key, fmt::format("must be a positive integer (found {})", v.dump()));
    }
    return v.get<std::int64_t>();
  }

  const json& c_;
  std::string origin_;
};

// The id in a cache path: .../models--ORG--NAME/snapshots/<revision>/config.json.
std::optional<std::string> id_from_cache_path(const std::filesystem::path& path) {
  const std::filesystem::path snapshot = path.parent_path();
  const std::filesystem::path snapshots = snapshot.parent_path();
  if (snapshots.filename() != "snapshots") return std::nullopt;
  const std::string repo = snapshots.parent_path().filename().string();
  if (!repo.starts_with("models--")) return std::nullopt;
  const std::string rest = repo.substr(8);
  const std::size_t dash = rest.find("--");
  if (dash == std::string::npos || dash == 0 || dash + 2 >= rest.size()) return std::nullopt;
  return rest.substr(0, dash) + "/" + rest.substr(dash + 2);
}

std::string hf_model_id(const json& top, const std::string& origin, const HfReadOptions& options) {
  if (options.id) return *options.id;
  if (auto cached = id_from_cache_path(origin)) return *cached;
  if (top.contains("_name_or_path") && top.at("_name_or_path").is_string()) {
    const std::string name = top.at("_name_or_path").get<std::string>();
    if (looks_like_hf_id(name)) return name;
  }
  return origin;
}

// Activation names of transformers' ACT2FN that the step models, as the presets name them.
std::optional<std::string> activation_name(std::string_view hf) {
  if (hf == "silu" || hf == "swish") return "silu";
  if (hf == "gelu_pytorch_tanh" || hf == "gelu_new" || hf == "gelu_fast") return "gelu_tanh";
  if (hf == "gelu") return "gelu";
  return std::nullopt;
}

LayerAttention parse_layer_type(const HfReader& r, std::string_view type, std::size_t index,
                                std::optional<std::int64_t> window, std::optional<std::int64_t> chunk) {
  const std::string key = fmt::format("layer_types[{}]", index);
  if (type == "full_attention") return {};
  if (type == "sliding_attention") {
    if (!window) r.fail("sliding_window", fmt::format("is missing and {} is sliding_attention", key));
    return {AttentionScope::sliding, *window};
  }
  if (type == "chunked_attention") {
    if (!chunk) r.fail("attention_chunk_size", fmt::format("is missing and {} is chunked_attention", key));
    return {AttentionScope::chunked, *chunk};
  }
  r.fail(key, fmt::format("is '{}', which is not modelled (full_attention, sliding_attention, chunked_attention are)",
                          type));
}

// The layers' attention: layer_types where the config lists them, else the family's rule.
void read_attention_pattern(const HfReader& r, const HfFamily& family, ModelSpec& m) {
  std::optional<std::int64_t> window = r.optional_positive("sliding_window");
  if (!window && family.default_window > 0 && !r.config().contains("sliding_window")) {
    window = family.default_window;
  }
  const std::optional<std::int64_t> chunk = r.optional_positive("attention_chunk_size");
  std::vector<LayerAttention> layers;
  if (const json* types = r.array("layer_types")) {
    if (static_cast<std::int64_t>(types->size()) != m.layers) {
      r.fail("layer_types", fmt::format("lists {} layers; num_hidden_layers is {}", types->size(), m.layers));
    }
    for (std::size_t i = 0; i < types->size(); ++i) {
      if (!(*types)[i].is_string()) r.fail("layer_types", "must list strings");
      layers.push_back(parse_layer_type(r, (*types)[i].get<std::string>(), i, window, chunk));
    }
  } else {
    switch (family.window) {
      case WindowRule::none: break;
      case WindowRule::uniform: m.attention.sliding_window = window; return;
      case WindowRule::switched:
        if (r.boolean("use_sliding_window", false)) {
          r.fail("use_sliding_window",
                 "is true: Qwen windows only the layers from max_window_layers on, which is not modelled");
        }
        return;
      case WindowRule::listed: r.fail("layer_types", "is missing: this family lists each layer's attention");
      case WindowRule::alternating:
        // transformers' Gemma 2: layer i slides when i is even.
        for (std::int64_t i = 0; i < m.layers; ++i) {
          layers.push_back(i % 2 == 0 ? LayerAttention{AttentionScope::sliding, *window} : LayerAttention{});
        }
        break;
      case WindowRule::every_nth: {
        // transformers' Gemma 3 and Cohere2: layer i attends to all when (i + 1) is a multiple of
        // sliding_window_pattern.
        const std::int64_t every = r.optional_positive("sliding_window_pattern").value_or(family.window_pattern);
        if (!window) r.fail("sliding_window", "is missing");
        for (std::int64_t i = 0; i < m.layers; ++i) {
          layers.push_back((i + 1) % every == 0 ? LayerAttention{} : LayerAttention{AttentionScope::sliding, *window});
        }
        break;
      }
      case WindowRule::chunked_nope: {
        // Llama 4: no_rope_layers[i] is 0 on the NoPE layers, which attend to the whole context
        // without rotary embeddings; the others attend within their chunk of attention_chunk_size.
        // Where the list is missing or empty, transformers' Llama4TextConfig makes every
        // no_rope_layer_interval-th layer (4 by default) a NoPE layer.
        if (!chunk) break;
        const json* rope = r.array("no_rope_layers");
        std::vector<bool> uses_rope;
        if (rope == nullptr || rope->empty()) {
          const std::int64_t interval = r.optional_positive("no_rope_layer_interval").value_or(4);
          for (std::int64_t i = 0; i < m.layers; ++i) uses_rope.push_back((i + 1) % interval != 0);
        } else {
          if (static_cast<std::int64_t>(rope->size()) != m.layers) {
            r.fail("no_rope_layers",
                   fmt::format("must list the {} layers (0 on the full-attention NoPE layers)", m.layers));
          }
          for (const json& flag : *rope) {
            if (!flag.is_number_integer()) r.fail("no_rope_layers", "must list 0s and 1s");
            uses_rope.push_back(flag.get<std::int64_t>() != 0);
          }
        }
        for (const bool with_rope : uses_rope) {
          layers.push_back(with_rope ? LayerAttention{AttentionScope::chunked, *chunk}
                                     : LayerAttention{AttentionScope::full, 0, false});
        }
        break;
      }
    }
  }
  const bool mixed =
      std::any_of(layers.begin(), layers.end(), [&](const LayerAttention& l) { return !(l == layers.front()); });
  if (layers.empty() || (!mixed && layers.front().scope == AttentionScope::full)) return;
  m.layer_attention = std::move(layers);
}

// The longest context: max_position_embeddings, or the rope-scaled length where rope_scaling
// stretches the original one further (factor x original_max_position_embeddings).
std::optional<std::int64_t> read_max_context(const HfReader& r, const HfFamily& family) {
  std::optional<std::int64_t> positions = r.optional_positive("max_position_embeddings");
  if (!positions && family.default_positions > 0) positions = family.default_positions;
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    if (!r.has(key) || !r.config().at(key).is_object()) continue;
    const json& scaling = r.config().at(key);
    const std::optional<double> factor = r.number(scaling, "factor", fmt::format("{}.factor", key));
    const std::optional<double> original =
        r.number(scaling, "original_max_position_embeddings", fmt::format("{}.original_max_position_embeddings", key));
    if (factor && original) {
      const auto scaled = static_cast<std::int64_t>(*factor * *original);
      positions = std::max(positions.value_or(0), scaled);
    }
  }
  return positions;
}

// --- Checkpoint quantization -------------------------------------------------------------------

// Whether the modules a config leaves unquantized include the attention projections (gpt-oss,
// Kimi-K2.5's compressed-tensors, ModelOpt's exclude_modules): then only the experts change format.
bool leaves_attention(const json* modules) {
  if (modules == nullptr || !modules->is_array()) return false;
  return std::any_of(modules->begin(), modules->end(), [](const json& m) {
    return m.is_string() && m.get<std::string>().find("self_attn") != std::string::npos;
  });
}

const json* member(const json& parent, const char* key) {
  return parent.contains(key) && !parent.at(key).is_null() ? &parent.at(key) : nullptr;
}

ModelSpec::CheckpointFormat scoped(DType type, const json* unquantized, std::string description, bool moe) {
  ModelSpec::CheckpointFormat f;
  f.description = std::move(description);
  if (moe && leaves_attention(unquantized)) {
    f.experts = type;
    f.description += "; attention, router, embeddings and head left in 16 bits";
  } else {
    f.linear = type;
    f.description += "; embeddings, head and norms left in 16 bits";
  }
  return f;
}

// One 4-bit integer format: groups of 128 (int4_g128, a 16-bit scale per group counted) is modelled.
DType int4_groups(const std::function<void(const std::string&)>& fail, std::int64_t group) {
  if (group != 128) fail(fmt::format("group_size {} is not modelled: int4_g128 (groups of 128) is", group));
  return DType::int4_g128;
}

ModelSpec::CheckpointFormat read_quantization(const json& q, const std::string& where, bool moe) {
  const auto fail = [&](std::string_view key, const std::string& problem) {
    throw InputError(fmt::format("{}: key '{}' {}", where, key, problem));
  };
  if (!q.is_object()) fail("quantization_config", "must be an object");
  const json* method_value = member(q, "quant_method");
  if (method_value == nullptr || !method_value->is_string()) fail("quantization_config.quant_method", "is missing");
  const std::string method = method_value->get<std::string>();
  const auto int_of = [&](const json& parent, const char* key, std::string_view path) -> std::int64_t {
    const json* v = member(parent, key);
    if (v == nullptr || !v->is_number_integer()) fail(path, "is missing or not an integer");
    return v->get<std::int64_t>();
  };
  if (method == "fp8") {
    const json* fmt_value = member(q, "fmt");
    const bool e5m2 = fmt_value != nullptr && fmt_value->is_string() && fmt_value->get<std::string>() == "e5m2";
    std::string text = fmt::format("quantization_config fp8 {}", e5m2 ? "e5m2" : "e4m3");
    if (const json* block = member(q, "weight_block_size")) {
      if (!block->is_array() || block->size() != 2 || !(*block)[0].is_number_integer() ||
          !(*block)[1].is_number_integer()) {
        fail("quantization_config.weight_block_size", fmt::format("must be [rows, columns] (found {})", block->dump()));
      }
      const auto rows = (*block)[0].get<std::int64_t>();
      const auto cols = (*block)[1].get<std::int64_t>();
      text += fmt::format(", one fp32 scale per {} x {} block (4 bytes per {} weights, not counted)", rows, cols,
                          rows * cols);
    } else {
      text += ", per-tensor scales";
    }
    return scoped(e5m2 ? DType::fp8_e5m2 : DType::fp8_e4m3, member(q, "modules_to_not_convert"), text, moe);
  }
  if (method == "mxfp4") {
    return scoped(DType::mxfp4, member(q, "modules_to_not_convert"),
                  "quantization_config mxfp4 (E2M1, an E8M0 scale per 32, counted)", moe);
  }
  if (method == "awq" || method == "gptq") {
    const std::string prefix = "quantization_config.";
    if (const std::int64_t bits = int_of(q, "bits", prefix + "bits"); bits != 4) {
      fail(prefix + "bits", fmt::format("{} is not modelled: 4-bit {} is", bits, method));
    }
    const DType type = int4_groups([&](const std::string& p) { fail(prefix + "group_size", p); },
                                   int_of(q, "group_size", prefix + "group_size"));
    return scoped(type, member(q, "modules_to_not_convert"),
                  fmt::format("quantization_config {} int4, groups of 128 (an fp16 scale per group counted)", method),
                  moe);
  }
  if (method == "compressed-tensors") {
    const json* groups = member(q, "config_groups");
    if (groups == nullptr || !groups->is_object() || groups->empty()) {
      fail("quantization_config.config_groups", "is missing");
    }
    const json& weights = groups->begin()->contains("weights") ? groups->begin()->at("weights") : json();
    const std::string path = fmt::format("quantization_config.config_groups.{}.weights", groups->begin().key());
    if (!weights.is_object()) fail(path, "is missing");
    const std::int64_t bits = int_of(weights, "num_bits", path + ".num_bits");
    const json* type_value = member(weights, "type");
    const std::string type = type_value != nullptr && type_value->is_string() ? type_value->get<std::string>() : "int";
    const json* group_value = member(weights, "group_size");
    DType format = DType::bf16;
    if (type == "float" && bits == 8) {
      format = DType::fp8_e4m3;
    } else if (type == "float" && bits == 4) {
      if (group_value == nullptr || !group_value->is_number_integer() || group_value->get<std::int64_t>() != 16) {
        fail(path + ".group_size", "must be 16 for 4-bit floats (nvfp4)");
      }
      format = DType::nvfp4;
    } else if (type == "int" && bits == 4) {
      if (group_value == nullptr || !group_value->is_number_integer()) fail(path + ".group_size", "is missing");
      format =
          int4_groups([&](const std::string& p) { fail(path + ".group_size", p); }, group_value->get<std::int64_t>());
    } else if (type == "int" && bits == 8) {
      format = DType::int8;
    } else {
      fail(path, fmt::format("{} {}-bit weights are not modelled", type, bits));
    }
    return scoped(format, member(q, "ignore"),
                  fmt::format("quantization_config compressed-tensors {} {}-bit ({})", type, bits, name_of(format)),
                  moe);
  }
  if (method == "modelopt") {
    const json* algo = member(q, "quant_algo");
    if (algo == nullptr || !algo->is_string()) fail("quantization_config.quant_algo", "is missing");
    const std::string name = algo->get<std::string>();
    if (name != "NVFP4" && name != "FP8")
      fail("quantization_config.quant_algo", fmt::format("'{}' is not modelled", name));
    return scoped(
        name == "NVFP4" ? DType::nvfp4 : DType::fp8_e4m3, member(q, "exclude_modules"),
        fmt::format("ModelOpt {} ({})", name, name == "NVFP4" ? "E2M1, an E4M3 scale per 16, counted" : "fp8"), moe);
  }
  throw InputError(
      fmt::format("{}: key 'quantization_config.quant_method' '{}' is not modelled (fp8, mxfp4, awq, gptq, "
                  "compressed-tensors, modelopt are)",
                  where, method));
}

// A ModelOpt hf_quant_config.json: {"quantization": {"quant_algo": ..., "exclude_modules": [...]}}.
ModelSpec::CheckpointFormat read_modelopt_file(std::string_view text, const std::string& origin, bool moe) {
  const json file = parse_json_document(text, origin);
  if (!file.is_object() || !file.contains("quantization") || !file.at("quantization").is_object()) {
    throw InputError(fmt::format("{}: key 'quantization' is missing", origin));
  }
  json q = file.at("quantization");
  q["quant_method"] = "modelopt";
  ModelSpec::CheckpointFormat f = read_quantization(q, origin, moe);
  f.description = "hf_quant_config.json " + f.description;
  return f;
}

const HfFamily* family_named(std::string_view model_type) {
  const auto it = std::find_if(hf_families.begin(), hf_families.end(),
                               [&](const HfFamily& f) { return f.model_type == model_type; });
  return it == hf_families.end() ? nullptr : &*it;
}

// The family of a model_type, or of the first `architectures` entry it knows.
const HfFamily& find_family(const HfReader& r, const json& top, const std::string& model_type) {
  if (model_type == "llama4") return *family_named("llama4_text");
  if (const HfFamily* f = family_named(model_type)) return *f;
  for (const json* list : {r.array("architectures"), member(top, "architectures")}) {
    if (list == nullptr || !list->is_array()) continue;
    for (const json& name : *list) {
      if (!name.is_string()) continue;
      for (const HfArchitecture& a : hf_architectures) {
        if (a.architecture == name.get<std::string>()) return *family_named(a.model_type);
      }
    }
  }
  std::vector<std::string> known;
  for (const HfFamily& f : hf_families) known.emplace_back(f.model_type);
  r.fail("model_type", fmt::format("is '{}', which is not supported (supported: {}, or an architectures entry "
                                   "such as DeepseekV3ForCausalLM); describe the model in a models/*.json file and "
                                   "load it with --models-dir",
                                   model_type, fmt::join(known, ", ")));
}

void read_moe(const HfReader& r, const HfFamily& family, ModelSpec& m) {
  std::optional<std::int64_t> experts = r.optional_positive("num_local_experts");  // mixtral, gpt-oss, llama4
  if (!experts) experts = r.optional_positive("num_experts");                      // qwen2_moe, qwen3_moe
  if (!experts) experts = r.optional_positive("n_routed_experts");                 // deepseek, glm4_moe
  if (!experts) return;
  const bool llama4 = family.model_type == "llama4_text";
  MoeSpec e;
  e.experts = *experts;
  // gpt-oss states it twice (num_experts_per_tok and experts_per_token).
  e.experts_per_token =
      r.has("num_experts_per_tok") ? r.positive("num_experts_per_tok") : r.positive("experts_per_token");
  e.expert_intermediate = r.optional_positive("moe_intermediate_size").value_or(m.ffn.intermediate);
  e.shared_experts = r.non_negative("n_shared_experts", 0);
  if (auto shared = r.optional_positive("shared_expert_intermediate_size")) {
    if (*shared % e.expert_intermediate != 0) {
      r.fail("shared_expert_intermediate_size",
             fmt::format("{} is not a whole number of experts of {}", *shared, e.expert_intermediate));
    }
    e.shared_experts = *shared / e.expert_intermediate;
  }
  e.dense_layers = r.non_negative("first_k_dense_replace", 0);
  if (llama4) {
    // Llama 4: experts of intermediate_size, one shared expert of the same width, and dense layers
    // of intermediate_size_mlp between the expert layers: those moe_layers lists, or, as
    // transformers' Llama4TextConfig makes it, every interleave_moe_layer_step-th layer from layer
    // step - 1 (Maverick, step 2: the odd layers 1, 3, ..., 47; Scout, step 1: all of them).
    e.shared_experts = 1;
    std::vector<bool> expert(static_cast<std::size_t>(m.layers), false);
    if (const json* listed = r.array("moe_layers")) {
      for (const json& index : *listed) {
        if (!index.is_number_integer() || index.get<std::int64_t>() < 0 || index.get<std::int64_t>() >= m.layers) {
          r.fail("moe_layers", fmt::format("must list layer indices below {} (found {})", m.layers, index.dump()));
        }
        expert[index.get<std::size_t>()] = true;
      }
    } else {
      const std::int64_t step = r.optional_positive("interleave_moe_layer_step").value_or(1);
      for (std::int64_t i = step - 1; i < m.layers; i += step) expert[static_cast<std::size_t>(i)] = true;
    }
    const auto first_expert = std::find(expert.begin(), expert.end(), true);
    if (first_expert == expert.end()) r.fail("moe_layers", "flags no expert layer");
    if (std::all_of(first_expert, expert.end(), [](bool flag) { return flag; })) {
      e.dense_layers = first_expert - expert.begin();  // dense layers first, as DeepSeek's
    } else {
      e.expert_layers = std::move(expert);
    }
    m.ffn.intermediate = r.optional_positive("intermediate_size_mlp").value_or(m.ffn.intermediate);
  } else {
    if (r.non_negative("moe_layer_freq", 1) != 1) r.fail("moe_layer_freq", "other than 1 is not modelled");
  }
  if (r.non_negative("decoder_sparse_step", 1) != 1) r.fail("decoder_sparse_step", "other than 1 is not modelled");
  if (r.has("mlp_only_layers") &&
      !(r.config().at("mlp_only_layers").is_array() && r.config().at("mlp_only_layers").empty())) {
    r.fail("mlp_only_layers", "lists dense layers between expert layers, which is not modelled");
  }
  m.moe = e;
}

}  // namespace

bool looks_like_hf_id(std::string_view name) {
  const std::size_t slash = name.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 >= name.size()) return false;
  if (name.find('/', slash + 1) != std::string_view::npos) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) {
                       return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                              c == '_' || c == '.' || c == '/';
                     }) &&
         name.front() != '.';
}

ModelSpec parse_hf_config(std::string_view text, const std::string& origin, const HfReadOptions& options) {
  const json top = parse_json_document(text, origin);
  if (!top.is_object()) throw InputError(fmt::format("{}: not a JSON object", origin));
  // Multimodal checkpoints keep the language model's shapes in text_config.
  const bool nested = top.contains("text_config") && top.at("text_config").is_object();
  const json& config = nested ? top.at("text_config") : top;
  const HfReader r(config, nested ? origin + " (text_config)" : origin);

  std::optional<std::string> model_type = r.string("model_type");
  if (!model_type && nested) model_type = HfReader(top, origin).string("model_type");
  if (!model_type) r.fail("model_type", "is missing");
  const HfFamily& family = find_family(r, top, *model_type);

  ModelSpec m;
  m.id = hf_model_id(top, origin, options);
  m.name = m.id;
  m.source_title = fmt::format("Hugging Face config.json ({})", *model_type);
  m.source_url = origin;
  m.origin = "hf-config:" + origin;
  m.layers = r.positive("num_hidden_layers");
  m.hidden = r.positive("hidden_size");
  m.vocab = family.default_vocab > 0 && !r.has("vocab_size") ? family.default_vocab : r.positive("vocab_size");
  m.tied_embeddings = r.boolean("tie_word_embeddings", family.tied_by_default);
  m.max_context = read_max_context(r, family);
  m.norm = NormKind::rmsnorm;
  // DeepSeek-V3's multi-token-prediction layers (Kimi-K2 states 0): the drafter speculation can use.
  // The config states no acceptance rate, so plan names the flags rather than trying it.
  if (const std::int64_t mtp = r.non_negative("num_nextn_predict_layers", 0); mtp > 0) {
    m.mtp = ModelSpec::MtpModule{mtp, {}, {}};
  }

  AttentionSpec& a = m.attention;
  a.heads = r.positive("num_attention_heads");
  const bool latent = r.has("kv_lora_rank");
  if (latent) {
    a.kind = AttentionKind::mla;
    a.q_lora_rank = r.non_negative("q_lora_rank", 0);
    a.kv_lora_rank = r.positive("kv_lora_rank");
    a.qk_nope_head_dim = r.positive("qk_nope_head_dim");
    a.qk_rope_head_dim = r.positive("qk_rope_head_dim");
    a.v_head_dim = r.positive("v_head_dim");
  } else {
    a.kind = AttentionKind::gqa;
    // transformers: num_key_value_heads defaults to num_attention_heads (multi-head attention).
    a.kv_heads = r.optional_positive("num_key_value_heads").value_or(a.heads);
    if (auto head_dim = r.optional_positive("head_dim")) {
      a.head_dim = *head_dim;
    } else {
      if (m.hidden % a.heads != 0) {
        r.fail("head_dim", fmt::format("is missing and hidden_size {} is not a multiple of num_attention_heads {}",
                                       m.hidden, a.heads));
      }
      a.head_dim = m.hidden / a.heads;
    }
    if (a.heads % a.kv_heads != 0) {
      r.fail("num_key_value_heads", fmt::format("{} does not divide num_attention_heads {}", a.kv_heads, a.heads));
    }
    a.qkv_bias = family.qkv_bias || r.boolean("attention_bias", false);
    // transformers' GptOssAttention always holds its per-head sink logits; no key states them.
    a.sinks = family.model_type == "gpt_oss";
    read_attention_pattern(r, family, m);
  }

  m.ffn.kind = FfnKind::gated;
  m.ffn.intermediate = r.positive("intermediate_size");
  // Gemma names it hidden_activation (and may keep a legacy hidden_act beside it).
  const char* act_key = r.has("hidden_activation") ? "hidden_activation" : "hidden_act";
  const std::string act = r.string(act_key).value_or(std::string(family.default_activation));
  const std::optional<std::string> activation = activation_name(act);
  if (!activation) {
    r.fail(act_key, fmt::format("is '{}', which is not modelled (silu, gelu, gelu_pytorch_tanh are)", act));
  }
  m.ffn.activation = *activation;
  read_moe(r, family, m);

  // Checkpoint quantization: config.json's quantization_config (top level, or in text_config),
  // else a ModelOpt hf_quant_config.json beside it.
  const json* quant = member(top, "quantization_config");
  if (quant == nullptr) quant = member(config, "quantization_config");
  if (quant != nullptr) {
    m.checkpoint = read_quantization(*quant, origin, m.moe.has_value());
  } else if (options.quant_side_file) {
    m.checkpoint = read_modelopt_file(*options.quant_side_file, origin + " (hf_quant_config.json)", m.moe.has_value());
  }
  check_model(m, origin);
  return m;
}

ModelSpec read_hf_config(const std::filesystem::path& path, const HfReadOptions& options) {
  HfReadOptions with_side = options;
  const std::filesystem::path side = path.parent_path() / "hf_quant_config.json";
  std::error_code ec;
  if (!with_side.quant_side_file && std::filesystem::is_regular_file(side, ec)) {
    with_side.quant_side_file = read_input_file(side);
  }
  return parse_hf_config(read_input_file(path), path.string(), with_side);
}

std::vector<std::filesystem::path> hf_cache_dirs() {
  std::vector<std::filesystem::path> dirs;
  if (const char* hub = std::getenv("HF_HUB_CACHE"); hub != nullptr && *hub != '\0') dirs.emplace_back(hub);
  if (const char* home = std::getenv("HF_HOME"); home != nullptr && *home != '\0') {
    dirs.push_back(std::filesystem::path(home) / "hub");
  }
  if (const char* user = std::getenv("HOME"); user != nullptr && *user != '\0') {
    dirs.push_back(std::filesystem::path(user) / ".cache" / "huggingface" / "hub");
  }
  return dirs;
}

std::filesystem::path find_in_hf_cache(std::string_view id, const std::optional<std::string>& revision,
                                       const std::vector<std::filesystem::path>& caches) {
  namespace fs = std::filesystem;
  const std::string name(id);
  const std::size_t slash = name.find('/');
  const std::string repo = "models--" + name.substr(0, slash) + "--" + name.substr(slash + 1);
  const auto safe = [](const std::string& rev) {
    return !rev.empty() && rev.find('/') == std::string::npos && rev.find("..") == std::string::npos;
  };
  if (revision && !safe(*revision)) {
    throw InputError(fmt::format("--revision {}: not a commit or a branch name", *revision));
  }
  std::vector<std::string> looked;
  for (const fs::path& cache : caches) {
    const fs::path root = cache / repo;
    std::error_code ec;
    looked.push_back(root.string());
    if (!fs::is_directory(root, ec)) continue;
    std::string wanted = revision.value_or("main");
    // A branch or tag name resolves through refs/<name> to a commit.
    if (std::ifstream ref(root / "refs" / wanted); ref) {
      std::string commit;
      ref >> commit;
      if (safe(commit)) wanted = commit;
    }
    const fs::path snapshots = root / "snapshots";
    fs::path config = snapshots / wanted / "config.json";
    if (!revision && !fs::is_regular_file(config, ec)) {
      // No refs/main: the only snapshot, if there is one.
      std::vector<fs::path> found;
      for (const auto& entry : fs::directory_iterator(snapshots, ec)) {
        if (fs::is_regular_file(entry.path() / "config.json", ec)) found.push_back(entry.path() / "config.json");
      }
      if (found.size() == 1) config = found.front();
      if (found.size() > 1) {
        throw InputError(fmt::format("--model {}: {} holds {} snapshots and no refs/main; choose one with --revision",
                                     name, snapshots.string(), found.size()));
      }
    }
    if (fs::is_regular_file(config, ec)) return config;
    throw InputError(fmt::format(
        "--model {}: {} has no config.json for revision '{}' (run: huggingface-cli download "
        "{} config.json{})",
        name, root.string(), revision.value_or("main"), name, revision ? " --revision " + *revision : std::string()));
  }
  throw InputError(
      fmt::format("--model {}: not a preset, and not in the Hugging Face cache (looked in {}); no "
                  "network is used: run huggingface-cli download {} config.json, or give --model a "
                  "config.json or its directory",
                  name,
                  looked.empty() ? std::string("no cache: HF_HUB_CACHE, HF_HOME and HOME unset")
                                 : fmt::format("{}", fmt::join(looked, ", ")),
                  name));
}

}  // namespace roofline
