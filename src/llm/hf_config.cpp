// Hugging Face config.json: the shapes of a checkpoint, read into a ModelSpec.
#include "roofline/llm/hf_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"

namespace roofline {
namespace {

using nlohmann::json;

// How each supported model_type stores what the keys do not say.
struct HfFamily {
  std::string_view model_type;
  bool qkv_bias;             // the attention projections carry biases regardless of the config
  bool tied_by_default;      // transformers' default for tie_word_embeddings in this class
  bool window_needs_switch;  // sliding_window counts only when use_sliding_window is true
};

constexpr std::array<HfFamily, 9> hf_families{{
    {"llama", false, false, false},
    {"mistral", false, false, false},
    {"mixtral", false, false, false},
    {"qwen2", true, false, true},
    {"qwen2_moe", true, false, true},
    {"qwen3", false, false, true},
    {"qwen3_moe", false, false, true},
    {"deepseek_v2", false, false, false},
    {"deepseek_v3", false, false, false},
}};

class HfReader {
 public:
  HfReader(const json& config, std::string origin) : c_(config), origin_(std::move(origin)) {}

  [[noreturn]] void fail(std::string_view key, const std::string& problem) const {
    throw InputError(fmt::format("{}: key '{}' {}", origin_, key, problem));
  }

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

std::string hf_model_id(const json& top, const std::string& origin) {
  std::string name;
  if (top.contains("_name_or_path") && top.at("_name_or_path").is_string()) {
    name = top.at("_name_or_path").get<std::string>();
  }
  if (name.empty()) name = std::filesystem::path(origin).parent_path().filename().string();
  if (name.empty()) name = "config";
  return "hf:" + name;
}

}  // namespace

ModelSpec parse_hf_config(std::string_view text, const std::string& origin) {
  const json top = parse_json_document(text, origin);
  if (!top.is_object()) throw InputError(fmt::format("{}: not a JSON object", origin));
  // Multimodal checkpoints keep the language model's shapes in text_config.
  const bool nested = top.contains("text_config") && top.at("text_config").is_object();
  const json& config = nested ? top.at("text_config") : top;
  const HfReader r(config, nested ? origin + " (text_config)" : origin);

  std::optional<std::string> model_type = r.string("model_type");
  if (!model_type && nested) model_type = HfReader(top, origin).string("model_type");
  if (!model_type) r.fail("model_type", "is missing");
  const auto family = std::find_if(hf_families.begin(), hf_families.end(),
                                   [&](const HfFamily& f) { return f.model_type == *model_type; });
  if (family == hf_families.end()) {
    std::vector<std::string> known;
    for (const HfFamily& f : hf_families) known.emplace_back(f.model_type);
    r.fail("model_type", fmt::format("is '{}', which is not supported (supported: {}); describe the model in a "
                                     "models/*.json file and load it with --models-dir",
                                     *model_type, fmt::join(known, ", ")));
  }

  ModelSpec m;
  m.id = hf_model_id(top, origin);
  m.name = m.id.substr(3);
  m.source_title = fmt::format("Hugging Face config.json ({})", *model_type);
  m.source_url = origin;
  m.origin = "hf-config:" + origin;
  m.layers = r.positive("num_hidden_layers");
  m.hidden = r.positive("hidden_size");
  m.vocab = r.positive("vocab_size");
  m.tied_embeddings = r.boolean("tie_word_embeddings", family->tied_by_default);
  m.max_context = r.optional_positive("max_position_embeddings");
  m.norm = NormKind::rmsnorm;

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
    a.qkv_bias = family->qkv_bias || r.boolean("attention_bias", false);
    if (family->window_needs_switch) {
      if (r.boolean("use_sliding_window", false)) {
        r.fail("use_sliding_window",
               "is true: Qwen windows only the layers from max_window_layers on, which is "
               "not modelled");
      }
    } else {
      a.sliding_window = r.optional_positive("sliding_window");
    }
  }

  m.ffn.kind = FfnKind::gated;
  m.ffn.intermediate = r.positive("intermediate_size");
  m.ffn.activation = r.string("hidden_act").value_or("silu");
  if (m.ffn.activation != "silu") {
    r.fail("hidden_act", fmt::format("is '{}'; the supported families use gated SiLU (SwiGLU)", m.ffn.activation));
  }

  // Mixture of experts, under each family's names.
  std::optional<std::int64_t> experts = r.optional_positive("num_local_experts");  // mixtral
  if (!experts) experts = r.optional_positive("num_experts");                      // qwen2_moe, qwen3_moe
  if (!experts) experts = r.optional_positive("n_routed_experts");                 // deepseek
  if (experts) {
    MoeSpec e;
    e.experts = *experts;
    e.experts_per_token = r.positive("num_experts_per_tok");
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
    if (r.non_negative("moe_layer_freq", 1) != 1) r.fail("moe_layer_freq", "other than 1 is not modelled");
    if (r.non_negative("decoder_sparse_step", 1) != 1) r.fail("decoder_sparse_step", "other than 1 is not modelled");
    if (r.has("mlp_only_layers") &&
        !(config.at("mlp_only_layers").is_array() && config.at("mlp_only_layers").empty())) {
      r.fail("mlp_only_layers", "lists dense layers between expert layers, which is not modelled");
    }
    m.moe = e;
  }
  check_model(m, origin);
  return m;
}

ModelSpec read_hf_config(const std::filesystem::path& path) {
  return parse_hf_config(read_input_file(path), path.string());
}

}  // namespace roofline
