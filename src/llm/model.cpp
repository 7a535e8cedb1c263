#include "roofline/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "roofline/embedded_file.hpp"
#include "roofline/error.hpp"
#include "roofline/input_file.hpp"
#include "roofline/json_schema.hpp"
#include "roofline/text.hpp"

namespace roofline {
namespace {

using nlohmann::json;

const SchemaValidator& model_validator() {
  static const SchemaValidator validator(model_schema());
  return validator;
}

// nlohmann's messages start with "[json.exception.parse_error.101] "; the rest is for people.
std::string json_error_text(const json::exception& e) {
  std::string what = e.what();
  if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
  return what;
}

json parse_json(std::string_view text, const std::string& origin) {
  check_json_depth(text, origin);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: malformed JSON: {}", origin, json_error_text(e)));
  }
}

// Rules of a model document the schema cannot express; each names the key at fault.
void check_model(const ModelSpec& m, const std::string& origin) {
  const auto fail = [&](std::string_view key, const std::string& problem) {
    throw InputError(fmt::format("{}: {}: {}", origin, key, problem));
  };
  const AttentionSpec& a = m.attention;
  const auto at_most = [&](std::int64_t value, std::int64_t limit, std::string_view key) {
    if (value > limit) fail(key, fmt::format("{} is more than the {} roofline models", value, limit));
  };
  at_most(m.layers, 10000, "/layers");
  at_most(m.hidden, max_width, "/hidden_size");
  at_most(m.vocab, max_vocab, "/vocab_size");
  at_most(m.ffn.intermediate, max_width, "/ffn/intermediate_size");
  at_most(a.heads, max_heads, "/attention/heads");
  at_most(a.head_dim, max_heads, "/attention/head_dim");
  at_most(a.q_lora_rank, max_width, "/attention/q_lora_rank");
  at_most(a.kv_lora_rank, max_width, "/attention/kv_lora_rank");
  at_most(a.qk_nope_head_dim, max_heads, "/attention/qk_nope_head_dim");
  at_most(a.qk_rope_head_dim, max_heads, "/attention/qk_rope_head_dim");
  at_most(a.v_head_dim, max_heads, "/attention/v_head_dim");
  if (a.sliding_window) at_most(*a.sliding_window, max_tokens, "/attention/sliding_window");
  if (m.moe) {
    at_most(m.moe->experts, max_experts, "/moe/experts");
    at_most(m.moe->shared_experts, max_experts, "/moe/shared_experts");
    at_most(m.moe->expert_intermediate, max_width, "/moe/expert_intermediate_size");
  }
  if (a.kind == AttentionKind::gqa) {
    if (a.kv_heads == 0) fail("/attention/kv_heads", "required when kind is gqa");
    if (a.head_dim == 0) fail("/attention/head_dim", "required when kind is gqa");
    if (a.heads % a.kv_heads != 0) {
      fail("/attention/kv_heads", fmt::format("{} does not divide the {} query heads", a.kv_heads, a.heads));
    }
    if (a.kv_lora_rank != 0 || a.qk_rope_head_dim != 0 || a.qk_nope_head_dim != 0 || a.v_head_dim != 0 ||
        a.q_lora_rank != 0) {
      fail("/attention", "latent-attention fields (kv_lora_rank, ...) need kind mla");
    }
  } else {
    if (a.kv_lora_rank == 0) fail("/attention/kv_lora_rank", "required when kind is mla");
    if (a.qk_nope_head_dim == 0) fail("/attention/qk_nope_head_dim", "required when kind is mla");
    if (a.qk_rope_head_dim == 0) fail("/attention/qk_rope_head_dim", "required when kind is mla");
    if (a.v_head_dim == 0) fail("/attention/v_head_dim", "required when kind is mla");
    if (a.kv_heads != 0 || a.head_dim != 0) {
      fail("/attention", "kv_heads and head_dim belong to kind gqa; mla caches a latent shared by all heads");
    }
    if (a.sliding_window) fail("/attention/sliding_window", "not modelled together with kind mla");
  }
  if (m.moe) {
    if (m.moe->experts_per_token > m.moe->experts) {
      fail("/moe/experts_per_token",
           fmt::format("{} is more than the {} experts", m.moe->experts_per_token, m.moe->experts));
    }
    if (m.moe->dense_layers >= m.layers) {
      fail("/moe/dense_layers", fmt::format("{} leaves no expert layer of {}", m.moe->dense_layers, m.layers));
    }
  }
}

std::int64_t get_int(const json& parent, const char* key, std::int64_t fallback = 0) {
  return parent.contains(key) ? parent.at(key).get<std::int64_t>() : fallback;
}

ModelSpec spec_from_document(const json& d, const std::string& origin) {
  ModelSpec m;
  m.id = d.at("id").get<std::string>();
  if (d.contains("aliases")) m.aliases = d.at("aliases").get<std::vector<std::string>>();
  m.name = d.at("name").get<std::string>();
  m.source_title = d.at("source").at("title").get<std::string>();
  m.source_url = d.at("source").at("url").get<std::string>();
  m.origin = origin;
  m.layers = d.at("layers").get<std::int64_t>();
  m.hidden = d.at("hidden_size").get<std::int64_t>();
  m.vocab = d.at("vocab_size").get<std::int64_t>();
  m.tied_embeddings = d.at("tied_embeddings").get<bool>();
  if (d.contains("max_context")) m.max_context = d.at("max_context").get<std::int64_t>();
  m.norm = d.at("norm").get<std::string>() == "layernorm" ? NormKind::layernorm : NormKind::rmsnorm;

  const json& a = d.at("attention");
  m.attention.kind = a.at("kind").get<std::string>() == "mla" ? AttentionKind::mla : AttentionKind::gqa;
  m.attention.heads = a.at("heads").get<std::int64_t>();
  m.attention.kv_heads = get_int(a, "kv_heads");
  m.attention.head_dim = get_int(a, "head_dim");
  m.attention.qkv_bias = a.contains("qkv_bias") && a.at("qkv_bias").get<bool>();
  if (a.contains("sliding_window")) m.attention.sliding_window = a.at("sliding_window").get<std::int64_t>();
  m.attention.q_lora_rank = get_int(a, "q_lora_rank");
  m.attention.kv_lora_rank = get_int(a, "kv_lora_rank");
  m.attention.qk_nope_head_dim = get_int(a, "qk_nope_head_dim");
  m.attention.qk_rope_head_dim = get_int(a, "qk_rope_head_dim");
  m.attention.v_head_dim = get_int(a, "v_head_dim");

  const json& f = d.at("ffn");
  m.ffn.kind = f.at("kind").get<std::string>() == "plain" ? FfnKind::plain : FfnKind::gated;
  m.ffn.intermediate = f.at("intermediate_size").get<std::int64_t>();
  if (f.contains("activation")) m.ffn.activation = f.at("activation").get<std::string>();

  if (d.contains("moe")) {
    const json& e = d.at("moe");
    m.moe = MoeSpec{e.at("experts").get<std::int64_t>(), e.at("experts_per_token").get<std::int64_t>(),
                    get_int(e, "shared_experts"), e.at("expert_intermediate_size").get<std::int64_t>(),
                    get_int(e, "dense_layers")};
  }
  if (d.contains("parameters_stated")) {
    const json& p = d.at("parameters_stated");
    m.stated_total_parameters = p.at("total").get<double>();
    if (p.contains("active")) m.stated_active_parameters = p.at("active").get<double>();
  }
  check_model(m, origin);
  return m;
}

// ---- Hugging Face config.json ----------------------------------------------------------------

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

std::string_view name_of(AttentionKind kind) {
  return kind == AttentionKind::mla ? "mla" : "gqa";
}
std::string_view name_of(FfnKind kind) {
  return kind == FfnKind::plain ? "plain" : "gated";
}

std::int64_t AttentionSpec::qk_head_dim() const {
  return kind == AttentionKind::mla ? qk_nope_head_dim + qk_rope_head_dim : head_dim;
}

std::int64_t AttentionSpec::value_head_dim() const {
  return kind == AttentionKind::mla ? v_head_dim : head_dim;
}

std::int64_t ModelSpec::cached_tokens(std::int64_t context) const {
  return attention.sliding_window ? std::min(context, *attention.sliding_window) : context;
}

ParameterCounts count_parameters(const ModelSpec& m) {
  ParameterCounts p;
  const auto h = static_cast<double>(m.hidden);
  const AttentionSpec& a = m.attention;
  const double norm_width = m.norm == NormKind::layernorm ? 2.0 : 1.0;  // weight (and bias)
  p.embedding = static_cast<double>(m.vocab) * h;
  p.lm_head = m.tied_embeddings ? 0.0 : p.embedding;
  const auto heads = static_cast<double>(a.heads);
  if (a.kind == AttentionKind::gqa) {
    const double q = heads * static_cast<double>(a.head_dim);
    const double kv = static_cast<double>(a.kv_heads * a.head_dim);
    p.attention_per_layer = h * q + 2.0 * h * kv + q * h;
    if (a.qkv_bias) p.attention_per_layer += q + 2.0 * kv;
  } else {
    // DeepSeek-V2/V3: W_DQ (hidden -> q_lora) with its norm, W_UQ (q_lora -> heads x qk),
    // W_DKV + W_KR (hidden -> kv_lora + rope), the latent's norm, W_UK + W_UV (kv_lora ->
    // heads x (nope + v)), W_O (heads x v -> hidden).
    const auto qk = static_cast<double>(a.qk_head_dim());
    const auto q_rank = static_cast<double>(a.q_lora_rank);
    const auto kv_rank = static_cast<double>(a.kv_lora_rank);
    const double q_proj = a.q_lora_rank > 0 ? h * q_rank + q_rank + q_rank * heads * qk : h * heads * qk;
    p.attention_per_layer = q_proj + h * (kv_rank + static_cast<double>(a.qk_rope_head_dim)) + kv_rank +
                            kv_rank * heads * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim) +
                            heads * static_cast<double>(a.v_head_dim) * h;
  }
  p.norms_per_layer = 2.0 * norm_width * h;
  p.final_norm = norm_width * h;
  const double matrices = m.ffn.kind == FfnKind::gated ? 3.0 : 2.0;
  p.dense_ffn_per_layer = matrices * h * static_cast<double>(m.ffn.intermediate);

  const double per_layer_common = p.attention_per_layer + p.norms_per_layer;
  const auto dense = static_cast<double>(m.dense_layers());
  const auto sparse = static_cast<double>(m.moe_layers());
  p.total = dense * p.dense_layer() + sparse * per_layer_common + p.embedding + p.lm_head + p.final_norm;
  p.active = p.total;
  if (m.moe) {
    p.expert = matrices * h * static_cast<double>(m.moe->expert_intermediate);
    p.router_per_layer = h * static_cast<double>(m.moe->experts);
    const double stored = static_cast<double>(m.moe->experts + m.moe->shared_experts) * p.expert;
    const double used = static_cast<double>(m.moe->experts_per_token + m.moe->shared_experts) * p.expert;
    p.total += sparse * (stored + p.router_per_layer);
    p.active += sparse * (used + p.router_per_layer);
  }
  return p;
}

const json& model_schema() {
  static const json schema = [] {
    for (const EmbeddedFile& file : bundled_model_files()) {
      if (file.path == "models/schema.json") return json::parse(file.contents);
    }
    throw std::logic_error("models/schema.json is not embedded");
  }();
  return schema;
}

ModelSpec load_model_document(std::string_view text, const std::string& origin) {
  const json document = parse_json(text, origin);
  const std::vector<SchemaViolation> violations = model_validator().validate(document);
  if (!violations.empty()) {
    std::string message;
    for (const SchemaViolation& v : violations) {
      if (!message.empty()) message += "\n";
      message += fmt::format("{}: {}: {}", origin, v.pointer.empty() ? "/" : v.pointer, v.message);
    }
    throw InputError(message);
  }
  return spec_from_document(document, origin);
}

ModelSpec parse_hf_config(std::string_view text, const std::string& origin) {
  const json top = parse_json(text, origin);
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

void ModelRegistry::add(ModelSpec model) {
  const auto same = std::find_if(models_.begin(), models_.end(), [&](const ModelSpec& m) { return m.id == model.id; });
  if (same != models_.end()) {
    notes_.push_back(fmt::format("{} replaces {} (same id '{}')", model.origin, same->origin, model.id));
    *same = std::move(model);
    return;
  }
  models_.push_back(std::move(model));
}

ModelRegistry ModelRegistry::load(const std::vector<std::filesystem::path>& directories) {
  ModelRegistry registry;
  for (const EmbeddedFile& file : bundled_model_files()) {
    if (file.path.ends_with("schema.json")) continue;
    registry.add(load_model_document(file.contents, "bundled:" + std::string(file.path)));
  }
  for (const std::filesystem::path& dir : directories) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      throw InputError(fmt::format("--models-dir {}: not a readable directory", dir.string()));
    }
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".json" && entry.path().filename() != "schema.json")
        files.push_back(entry.path());
    }
    if (ec) throw InputError(fmt::format("--models-dir {}: {}", dir.string(), ec.message()));
    std::sort(files.begin(), files.end());
    std::set<std::string> ids_in_dir;
    for (const auto& path : files) {
      ModelSpec model = load_model_document(read_input_file(path), path.string());
      if (!ids_in_dir.insert(model.id).second) {
        throw InputError(fmt::format("{}: id '{}' is defined twice in {}", path.string(), model.id, dir.string()));
      }
      registry.add(std::move(model));
    }
  }
  std::map<std::string, std::string> owner;
  for (const ModelSpec& m : registry.models_) owner.emplace(m.id, m.id);
  for (const ModelSpec& m : registry.models_) {
    for (const std::string& alias : m.aliases) {
      auto [it, inserted] = owner.emplace(alias, m.id);
      if (!inserted && it->second != m.id) {
        throw InputError(fmt::format("{}: alias '{}' already names '{}'", m.origin, alias, it->second));
      }
    }
  }
  return registry;
}

const ModelSpec& ModelRegistry::find(std::string_view name) const {
  const std::string wanted = to_lower(name);
  for (const ModelSpec& m : models_) {
    if (m.id == wanted) return m;
  }
  for (const ModelSpec& m : models_) {
    if (std::find(m.aliases.begin(), m.aliases.end(), wanted) != m.aliases.end()) return m;
  }
  std::vector<std::string> names;
  std::vector<std::string> ids;
  for (const ModelSpec& m : models_) {
    names.push_back(m.id);
    ids.push_back(m.id);
    names.insert(names.end(), m.aliases.begin(), m.aliases.end());
  }
  std::string message = fmt::format("--model: unknown model '{}'", name);
  if (auto guess = closest_match(wanted, names)) message += fmt::format(" (did you mean '{}'?)", *guess);
  message += fmt::format("; known: {} (or --hf-config config.json, or --models-dir DIR)", fmt::join(ids, ", "));
  throw InputError(message);
}

}  // namespace roofline
