// The model presets: models/*.json (bundled, or from --models-dir) and their registry.
#include "roofline/llm/model_presets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"
#include "roofline/core/json_schema.hpp"
#include "roofline/core/text.hpp"

namespace roofline {
namespace {

using nlohmann::json;

const SchemaValidator& model_validator() {
  static const SchemaValidator validator(model_schema());
  return validator;
}

std::int64_t get_int(const json& parent, const char* key, std::int64_t fallback = 0) {
  return parent.contains(key) ? parent.at(key).get<std::int64_t>() : fallback;
}

// attention.layer_pattern (its entries checked by the schema) repeated over `layers` layers.
std::vector<LayerAttention> repeat_pattern(const json& pattern, std::int64_t layers) {
  std::vector<LayerAttention> cycle;
  for (const json& entry : pattern) {
    const std::string text = entry.get<std::string>();
    const std::size_t colon = text.find(':');
    if (colon == std::string::npos) {
      cycle.emplace_back();
      continue;
    }
    const AttentionScope scope = text.starts_with("sliding") ? AttentionScope::sliding : AttentionScope::chunked;
    cycle.push_back({scope, std::stoll(text.substr(colon + 1))});
  }
  std::vector<LayerAttention> all;
  for (std::int64_t i = 0; i < layers; ++i) all.push_back(cycle[static_cast<std::size_t>(i) % cycle.size()]);
  return all;
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
  if (a.contains("layer_pattern")) m.layer_attention = repeat_pattern(a.at("layer_pattern"), m.layers);
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
    m.moe = MoeSpec{.experts = e.at("experts").get<std::int64_t>(),
                    .experts_per_token = e.at("experts_per_token").get<std::int64_t>(),
                    .shared_experts = get_int(e, "shared_experts"),
                    .expert_intermediate = e.at("expert_intermediate_size").get<std::int64_t>(),
                    .dense_layers = get_int(e, "dense_layers"),
                    .expert_layers = {}};
  }
  if (d.contains("checkpoint")) {
    const json& c = d.at("checkpoint");
    ModelSpec::CheckpointFormat format;
    format.description = c.at("description").get<std::string>();
    if (c.contains("linear"))
      format.linear = parse_dtype(c.at("linear").get<std::string>(), origin + ": /checkpoint/linear");
    if (c.contains("experts")) {
      format.experts = parse_dtype(c.at("experts").get<std::string>(), origin + ": /checkpoint/experts");
    }
    m.checkpoint = format;
  }
  if (d.contains("mtp")) {
    const json& t = d.at("mtp");
    ModelSpec::MtpModule mtp;
    mtp.layers = t.at("layers").get<std::int64_t>();
    if (t.contains("acceptance")) {
      mtp.acceptance = t.at("acceptance").at("rates").get<std::vector<double>>();
      mtp.acceptance_source = t.at("acceptance").at("source").at("title").get<std::string>();
    }
    m.mtp = mtp;
  }
  if (d.contains("parameters_stated")) {
    const json& p = d.at("parameters_stated");
    m.stated_total_parameters = p.at("total").get<double>();
    if (p.contains("active")) m.stated_active_parameters = p.at("active").get<double>();
  }
  check_model(m, origin);
  return m;
}

}  // namespace

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
  const json document = parse_json_document(text, origin);
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

void ModelRegistry::add(ModelSpec model, std::string_view unparsed) {
  const auto same = std::find_if(models_.begin(), models_.end(), [&](const ModelSpec& m) { return m.id == model.id; });
  if (same != models_.end()) {
    notes_.push_back(fmt::format("{} replaces {} (same id '{}')", model.origin, same->origin, model.id));
    unparsed_[static_cast<std::size_t>(same - models_.begin())] = unparsed;
    *same = std::move(model);
    return;
  }
  models_.push_back(std::move(model));
  unparsed_.push_back(unparsed);
}

void ModelRegistry::add_bundled(const EmbeddedFile& file) {
  const std::string origin = "bundled:" + std::string(file.path);
  if (file.id.empty()) {
    // The build found no id: parse it now, to say what is wrong with it.
    add(load_model_document(file.contents, origin), {});
    return;
  }
  ModelSpec entry;
  entry.id = file.id;
  entry.aliases.assign(file.aliases.begin(), file.aliases.end());
  entry.origin = origin;
  add(std::move(entry), file.contents);
}

const ModelSpec& ModelRegistry::loaded(std::size_t index) const {
  ModelSpec& model = models_[index];
  if (unparsed_[index].empty()) return model;
  ModelSpec parsed = load_model_document(unparsed_[index], model.origin);
  if (parsed.id != model.id || parsed.aliases != model.aliases) {
    throw std::logic_error(model.origin + ": id or aliases differ from the build's index; rebuild");
  }
  model = std::move(parsed);
  unparsed_[index] = {};
  return model;
}

const std::vector<ModelSpec>& ModelRegistry::all() const {
  for (std::size_t i = 0; i < models_.size(); ++i) static_cast<void>(loaded(i));
  return models_;
}

ModelRegistry ModelRegistry::load(const std::vector<std::filesystem::path>& directories) {
  ModelRegistry registry;
  for (const EmbeddedFile& file : bundled_model_files()) {
    if (!file.path.ends_with("schema.json")) registry.add_bundled(file);
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
      registry.add(std::move(model), {});
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

const ModelSpec* ModelRegistry::try_find(std::string_view name) const {
  const std::string wanted = to_lower(name);
  for (std::size_t i = 0; i < models_.size(); ++i) {
    if (models_[i].id == wanted) return &loaded(i);
  }
  for (std::size_t i = 0; i < models_.size(); ++i) {
    const std::vector<std::string>& aliases = models_[i].aliases;
    if (std::find(aliases.begin(), aliases.end(), wanted) != aliases.end()) return &loaded(i);
  }
  return nullptr;
}

const ModelSpec& ModelRegistry::find(std::string_view name) const {
  if (const ModelSpec* model = try_find(name)) return *model;
  const std::string wanted = to_lower(name);
  std::vector<std::string> names;
  std::vector<std::string> ids;
  for (const ModelSpec& m : models_) {
    names.push_back(m.id);
    ids.push_back(m.id);
    names.insert(names.end(), m.aliases.begin(), m.aliases.end());
  }
  std::string message = fmt::format("--model: unknown model '{}'", name);
  if (auto guess = closest_match(wanted, names)) message += fmt::format(" (did you mean '{}'?)", *guess);
  message += fmt::format(
      "; known: {} (or a Hugging Face id ORG/NAME in the local cache, a config.json or its directory, or "
      "--models-dir DIR)",
      fmt::join(ids, ", "));
  throw InputError(message);
}

}  // namespace roofline
