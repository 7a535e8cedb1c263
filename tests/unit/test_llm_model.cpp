// Model presets, the Hugging Face config reader and parameter counts.
#include "catch.hpp"
#include "fixture.hpp"
#include "roofline/core/embedded_file.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/hf_config.hpp"
#include "roofline/llm/model_presets.hpp"

using namespace roofline;
using Catch::Matchers::Contains;
using fixture::models;
using nlohmann::json;

namespace {

json bundled(std::string_view path) {
  for (const EmbeddedFile& file : bundled_model_files()) {
    if (file.path == path) return json::parse(file.contents);
  }
  FAIL("not bundled: " << path);
  return {};
}

std::string load_error(const json& document) {
  try {
    (void)load_model_document(document.dump(), "test.json");
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no error for " << document.dump());
  return {};
}

std::string hf_error(std::string_view text) {
  try {
    (void)parse_hf_config(text, "dir/config.json");
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no error for " << text);
  return {};
}

const char* llama_70b_config = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama", "_name_or_path": "meta-llama/Llama-3.1-70B",
  "hidden_size": 8192, "intermediate_size": 28672, "num_attention_heads": 64, "num_hidden_layers": 80,
  "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072, "hidden_act": "silu",
  "rms_norm_eps": 1e-05, "tie_word_embeddings": false, "attention_bias": false, "rope_theta": 500000.0})";

}  // namespace

TEST_CASE("a preset is found by an alias the build indexed, before any preset is parsed") {
  // models/llama-3.1-70b.json: "aliases": ["llama3.1-70b", "llama-3-70b", "llama3-70b", "llama-3.3-70b"].
  const ModelRegistry fresh = ModelRegistry::bundled_only();
  const ModelSpec& m = fresh.find("LLAMA-3.3-70B");
  CHECK(m.id == "llama-3.1-70b");
  CHECK(m.layers == 80);  // parsed on the way: the index entry holds names only
  CHECK(m.aliases == std::vector<std::string>{"llama3.1-70b", "llama-3-70b", "llama3-70b", "llama-3.3-70b",
                                              "meta-llama/llama-3.1-70b"});
  CHECK_THROWS_WITH(fresh.find("mistal-7b"), Contains("did you mean 'mistral-7b'?") &&
                                                 Contains("known: deepseek-v3, llama-3.1-405b, llama-3.1-70b"));
}

TEST_CASE("every preset loads, cites a source, and its parameter count matches the stated one") {
  REQUIRE(models().all().size() == 7);
  for (const ModelSpec& m : models().all()) {
    INFO(m.id);
    CHECK(m.origin == "bundled:models/" + m.id + ".json");
    CHECK(m.source_url.starts_with("https://"));
    REQUIRE(m.stated_total_parameters.has_value());
    const ParameterCounts p = count_parameters(m);
    // Stated counts are rounded to three digits (8.03B, 70.6B, 46.7B, 671B): within 0.5%.
    CHECK(p.total == Approx(*m.stated_total_parameters).epsilon(0.005));
    if (m.stated_active_parameters) CHECK(p.active == Approx(*m.stated_active_parameters).epsilon(0.02));
  }
}

TEST_CASE("Llama 3.1 8B has exactly 8,030,261,248 parameters") {
  // Per layer: q 4096x4096 = 16,777,216; k, v 2 x 4096x1024 = 8,388,608; o 16,777,216;
  // gate, up, down 3 x 4096x14336 = 176,160,768; two norms 8,192: 218,112,000 x 32 = 6,979,584,000.
  // Embedding and untied head 2 x 128256 x 4096 = 1,050,673,152; final norm 4,096.
  const ParameterCounts p = count_parameters(models().find("llama-3.1-8b"));
  CHECK(p.dense_layer() == 218112000.0);
  CHECK(p.total == 8030261248.0);
  CHECK(p.active == p.total);
}

TEST_CASE("Mixtral 8x7B: 46.7B stored, 12.9B used per token") {
  // Expert = 3 x 4096 x 14336 = 176,160,768. Per layer: attention 41,943,040 + norms 8,192 +
  // router 32,768 + 8 experts 1,409,286,144 = 1,451,270,144 (x 32 = 46,440,644,608); plus
  // embeddings 2 x 32000 x 4096 = 262,144,000 and the final norm 4,096: 46,702,792,704.
  // Active: 2 experts instead of 8: 46,702,792,704 - 32 x 6 x 176,160,768 = 12,879,925,248.
  const ParameterCounts p = count_parameters(models().find("mixtral"));
  CHECK(p.total == 46702792704.0);
  CHECK(p.active == 12879925248.0);
}

TEST_CASE("DeepSeek-V3: latent attention and 256 experts give 671B total, 37.6B active") {
  const ModelSpec& m = models().find("deepseek-v3");
  CHECK(m.attention.kind == AttentionKind::mla);
  CHECK(m.dense_layers() == 3);
  CHECK(m.moe_layers() == 58);
  const ParameterCounts p = count_parameters(m);
  // Attention per layer: W_DQ 7168x1536 + its norm 1536 + W_UQ 1536 x 128 x 192 + W_DKV/W_KR
  // 7168 x 576 + norm 512 + W_UK/W_UV 512 x 128 x 256 + W_O 128 x 128 x 7168 = 187,107,328.
  CHECK(p.attention_per_layer == 187107328.0);
  CHECK(p.total == Approx(671.026e9).epsilon(1e-5));
  CHECK(p.active == Approx(37.55e9).epsilon(1e-3));
}

TEST_CASE("a model is found by id or alias, case-insensitively, with a suggestion when not") {
  CHECK(models().find("LLaMA-3-70B").id == "llama-3.1-70b");
  CHECK(models().find("mixtral").id == "mixtral-8x7b");
  try {
    (void)models().find("llama-3.1-7b");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Contains("unknown model 'llama-3.1-7b'") && Contains("did you mean"));
  }
}

TEST_CASE("a model document that breaks a rule names the key") {
  json doc = bundled("models/llama-3.1-70b.json");
  SECTION("schema: a missing field") {
    doc.erase("layers");
    CHECK_THAT(load_error(doc), Contains("test.json") && Contains("layers"));
  }
  SECTION("kv_heads must divide heads") {
    doc["attention"]["kv_heads"] = 7;
    CHECK_THAT(load_error(doc), Contains("/attention/kv_heads") && Contains("does not divide the 64"));
  }
  SECTION("gqa needs head_dim") {
    doc["attention"].erase("head_dim");
    CHECK_THAT(load_error(doc), Contains("/attention/head_dim"));
  }
  SECTION("absurd sizes are refused") {
    doc["attention"]["heads"] = 8192;
    doc["attention"]["kv_heads"] = 8;
    CHECK_THAT(load_error(doc), Contains("/attention/heads: 8192 is more than the 4096 roofline models"));
  }
  SECTION("latent fields need kind mla") {
    doc["attention"]["kv_lora_rank"] = 512;
    CHECK_THAT(load_error(doc), Contains("need kind mla"));
  }
  SECTION("malformed JSON") {
    try {
      (void)load_model_document("{\"schema\": ", "broken.json");
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Contains("broken.json: malformed JSON"));
    }
  }
}

TEST_CASE("a Hugging Face config reads into the same shapes as the preset") {
  const ModelSpec hf = parse_hf_config(llama_70b_config, "dir/config.json");
  const ModelSpec& preset = models().find("llama-3.1-70b");
  CHECK(hf.id == "meta-llama/Llama-3.1-70B");  // _name_or_path: the Hugging Face id
  CHECK(hf.layers == preset.layers);
  CHECK(hf.attention.kv_heads == 8);
  CHECK(hf.attention.head_dim == 128);  // hidden 8192 / 64 heads
  CHECK(count_parameters(hf).total == count_parameters(preset).total);
}

TEST_CASE("Hugging Face families: Qwen2 biases, Mistral's window, Mixtral and DeepSeek experts") {
  SECTION("qwen2 has QKV biases and ignores a sliding_window that use_sliding_window disables") {
    const ModelSpec m = parse_hf_config(
        R"({"model_type": "qwen2", "hidden_size": 8192, "intermediate_size": 29568, "num_attention_heads": 64,
            "num_hidden_layers": 80, "num_key_value_heads": 8, "vocab_size": 152064, "sliding_window": 131072,
            "use_sliding_window": false, "max_window_layers": 70, "tie_word_embeddings": false})",
        "qwen.json");
    CHECK(m.attention.qkv_bias);
    CHECK_FALSE(m.attention.sliding_window.has_value());
    CHECK(count_parameters(m).total == count_parameters(models().find("qwen2.5-72b")).total);
  }
  SECTION("mistral keeps its window") {
    const ModelSpec m = parse_hf_config(
        R"({"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
            "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 32000, "sliding_window": 4096})",
        "mistral.json");
    REQUIRE(m.attention.sliding_window.has_value());
    CHECK(m.cached_tokens(32768) == 4096);
    CHECK(m.cached_tokens(1000) == 1000);
  }
  SECTION("mixtral's experts") {
    const ModelSpec m = parse_hf_config(
        R"({"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
            "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 32000, "num_local_experts": 8,
            "num_experts_per_tok": 2, "sliding_window": null})",
        "mixtral.json");
    REQUIRE(m.moe.has_value());
    CHECK(m.moe->expert_intermediate == 14336);
    CHECK(count_parameters(m).active == count_parameters(models().find("mixtral")).active);
  }
  SECTION("deepseek_v3's latent attention and shared expert") {
    const ModelSpec m = parse_hf_config(
        R"({"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432,
            "moe_intermediate_size": 2048, "num_attention_heads": 128, "num_key_value_heads": 128,
            "num_hidden_layers": 61, "vocab_size": 129280, "q_lora_rank": 1536, "kv_lora_rank": 512,
            "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 256,
            "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1,
            "tie_word_embeddings": false})",
        "ds.json");
    CHECK(m.attention.kind == AttentionKind::mla);
    CHECK(count_parameters(m).total == count_parameters(models().find("deepseek-v3")).total);
  }
  SECTION("a multimodal checkpoint's text_config") {
    json top = json::parse(llama_70b_config);
    const json wrapped = {{"model_type", "llava"}, {"text_config", top}};
    CHECK(parse_hf_config(wrapped.dump(), "vlm.json").layers == 80);
  }
}

TEST_CASE("a malformed Hugging Face config names the file and the key") {
  CHECK_THAT(hf_error("{\"model_type\": \"llama\", "), Contains("dir/config.json: malformed JSON"));
  CHECK_THAT(hf_error("[1, 2]"), Contains("dir/config.json: not a JSON object"));
  json c = json::parse(llama_70b_config);
  c.erase("num_attention_heads");
  CHECK_THAT(hf_error(c.dump()), Contains("dir/config.json: key 'num_attention_heads' is missing"));
  c = json::parse(llama_70b_config);
  c["hidden_size"] = "8192";
  CHECK_THAT(hf_error(c.dump()), Contains("key 'hidden_size' must be a positive integer (found \"8192\")"));
  c = json::parse(llama_70b_config);
  c["num_key_value_heads"] = 7;
  CHECK_THAT(hf_error(c.dump()), Contains("key 'num_key_value_heads' 7 does not divide"));
  c = json::parse(llama_70b_config);
  c["model_type"] = "mamba";
  c["architectures"] = {"MambaForCausalLM"};  // an architecture the reader knows would stand in for it
  CHECK_THAT(hf_error(c.dump()), Contains("key 'model_type' is 'mamba', which is not supported"));
  c = json::parse(llama_70b_config);
  c["hidden_act"] = "relu2";
  CHECK_THAT(hf_error(c.dump()), Contains("key 'hidden_act' is 'relu2', which is not modelled"));
}
