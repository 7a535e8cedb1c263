// The published config.json of each family in tests/data/hf/ (SOURCES.md says where each comes
// from): parameter counts against the model card, KV bytes per token derived by hand, the
// per-layer attention pattern, the checkpoint's weight format, and the Hugging Face cache layout.
#include <cmath>
#include <filesystem>

#include "catch.hpp"
#include "fixture.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/decoder_step.hpp"
#include "roofline/llm/deployment.hpp"
#include "roofline/llm/hf_config.hpp"
#include "roofline/serve/step_cost.hpp"

using namespace roofline;
using Catch::Matchers::Contains;

namespace {

const std::filesystem::path hf_data = std::filesystem::path(ROOFLINE_SOURCE_DIR) / "tests" / "data" / "hf";

ModelSpec family(const std::string& name) {
  return read_hf_config(hf_data / name / "config.json");
}

std::string read_error(std::string_view text) {
  try {
    (void)parse_hf_config(text, "config.json");
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no error for " << text);
  return {};
}

}  // namespace

TEST_CASE("gpt-oss-20b: 32 experts with mxfp4 weights, sliding and full layers alternating") {
  const ModelSpec m = family("gpt-oss-20b");
  CHECK(m.id == (hf_data / "gpt-oss-20b" / "config.json").string());  // no HF id in the file: its path
  REQUIRE(m.moe);
  CHECK(m.moe->experts == 32);
  CHECK(m.moe->experts_per_token == 4);
  CHECK(m.attention.qkv_bias);
  // layer_types: even layers slide over 128 tokens, odd ones see everything.
  REQUIRE(m.layer_attention.size() == 24);
  CHECK(m.attention_of(0) == LayerAttention{AttentionScope::sliding, 128});
  CHECK(m.attention_of(1) == LayerAttention{});
  CHECK(m.max_context == 131072);  // yarn 32 x 4096 = max_position_embeddings

  // OpenAI, gpt-oss-120b & gpt-oss-20b Model Card (arXiv:2508.10925), section 2: 20.9B parameters
  // in all, 3.6B active per token (the card leaves the embedding table, a lookup, out of the
  // active count; the unembedding is in it). Derived: attention 24 x (2880 x 4096 x 2 + 2880 x
  // 512 x 2 + 5,120 biases) = 637.1M; experts 24 x 32 x 3 x 2880^2 = 19,110.3M; routers 2.2M;
  // embedding and head 2 x 201,088 x 2880 = 1,158.3M; total 20,908.05M. Active: 4 of 32 experts
  // = 2,388.8M, so 4,186.5M - the 579.1M embedding = 3,607.4M. (Expert and o_proj biases and
  // the attention sinks, 0.03% together, are not counted.)
  const ParameterCounts p = count_parameters(m);
  CHECK(p.total == Approx(20.9e9).epsilon(0.005));
  CHECK(p.active - p.embedding == Approx(3.6e9).epsilon(0.005));

  // KV per token and layer, bf16: 2 (K, V) x 8 heads x 64 x 2 B = 2,048 B. At 8,192 tokens the 12
  // full layers keep 8,192 tokens and the 12 sliding ones 128: 99,840 token-layers, 204,472,320 B.
  CHECK(kv_bytes_per_token_layer(m, DType::bf16) == 2048);
  CHECK(m.cached_token_layers(8192) == 12 * 8192 + 12 * 128);
  DeploymentConfig config;
  REQUIRE(m.checkpoint);
  CHECK_FALSE(m.checkpoint->linear);  // attention, router, embeddings and head stay bf16
  CHECK(m.checkpoint->experts == DType::mxfp4);
  config.expert_weights = m.checkpoint->experts;
  const MemoryPlan plan = plan_memory(m, fixture::gpus().find("h100"), shard(m, 1, 1), config, 8192);
  CHECK(plan.kv_bytes_per_request_model == Approx(204472320.0));
  // Weights: experts 19,110,297,600 x 4.25 bits = 10,152,345,600 B, attention 637,009,920 x 2 B,
  // embedding and head 1,158,266,880 x 2 B, norms, biases, routers and sink logits 2,477,376 x 2 B:
  // 13,747,853,952 B = 12.80 GiB (the card: the 20b model "runs within 16GB of memory").
  CHECK(plan.weight_bytes_model == Approx(13747853952.0).epsilon(1e-12));
}

TEST_CASE("gemma-3-27b-it: the text model of the multimodal config, five sliding layers of six") {
  const ModelSpec m = family("gemma-3-27b-it");
  CHECK(m.vocab == 262208);  // Gemma3TextConfig's default: the config leaves it out
  CHECK(m.tied_embeddings);
  CHECK(m.ffn.activation == "gelu_tanh");
  CHECK(m.max_context == 131072);
  REQUIRE(m.layer_attention.size() == 62);
  // sliding_window_pattern 6 (the default): layers 5, 11, ..., 59 attend to all, the 52 others to
  // the last 1,024 tokens.
  CHECK(m.attention_of(4) == LayerAttention{AttentionScope::sliding, 1024});
  CHECK(m.attention_of(5) == LayerAttention{});
  CHECK(m.attention_of(61) == LayerAttention{AttentionScope::sliding, 1024});

  // Gemma Team, Gemma 3 Technical Report (arXiv:2503.19786), table 1, 27B: 1,416M embedding and
  // 25,600M non-embedding parameters (the 417M vision encoder is not modelled). Derived: per layer
  // 5376 x 4096 x 2 + 5376 x 2048 x 2 (attention) + 3 x 5376 x 21504 (gated GeLU) + 2 x 5376
  // (norms) = 412,887,552, x 62 = 25,599.0M; embedding 262,208 x 5376 = 1,409.6M, tied. (Gemma's
  // two extra norms per layer and the q/k norms, 0.7M, are not counted.)
  const ParameterCounts p = count_parameters(m);
  CHECK(p.total - p.embedding == Approx(25600e6).epsilon(0.005));
  CHECK(p.total == Approx(1416e6 + 25600e6).epsilon(0.005));
  CHECK(p.active == p.total);

  // KV per token and layer, bf16: 2 x 16 heads x 128 x 2 B = 8,192 B. At 131,072 tokens: 10 full
  // layers x 131,072 + 52 x 1,024 = 1,363,968 token-layers, 11,173,642,240 B per request (all 62
  // layers full would hold 66.6 GB).
  CHECK(kv_bytes_per_token_layer(m, DType::bf16) == 8192);
  CHECK(m.cached_token_layers(131072) == 1363968);
  const MemoryPlan plan = plan_memory(m, fixture::gpus().find("h100"), shard(m, 1, 1), DeploymentConfig{}, 131072);
  CHECK(plan.kv_bytes_per_request_model == Approx(11173642240.0));
  CHECK_FALSE(m.checkpoint);
}

TEST_CASE("phi-3-mini-4k-instruct: Llama shapes with fused projections and a 2,047-token window") {
  const ModelSpec m = family("phi-3-mini-4k-instruct");
  CHECK(m.attention.sliding_window == 2047);
  CHECK(m.layer_attention.empty());
  CHECK(m.max_context == 4096);
  // microsoft/Phi-3-mini-4k-instruct model page: model size 3.82B params. Derived: per layer
  // 4 x 3072^2 (qkv_proj and o_proj, 32 heads of 96) + 3 x 3072 x 8192 (gate_up_proj, down_proj) +
  // 2 x 3072 = 113,252,352, x 32 = 3,624.1M; embedding and head 2 x 32,064 x 3072 = 197.0M; 3,821.1M.
  CHECK(count_parameters(m).total == Approx(3.82e9).epsilon(0.005));
  // KV per token and layer, bf16: 2 x 32 x 96 x 2 B = 12,288 B; the window keeps 2,047 tokens.
  CHECK(kv_bytes_per_token_layer(m, DType::bf16) == 12288);
  CHECK(m.cached_tokens(4096) == 2047);
  CHECK(m.cache_bound() == 2047);
}

TEST_CASE("per-layer attention: decode reads each layer's window, prefill counts the pairs its mask keeps") {
  const LayerAttention full{};
  const LayerAttention window{AttentionScope::sliding, 128};
  const LayerAttention chunk{AttentionScope::chunked, 8192};
  // Decode at 10,000 tokens: all of them, the last 128, and 10,000 - 8,192 = 1,808 of the chunk.
  CHECK(full.decode_keys(10000) == 10000);
  CHECK(window.decode_keys(10000) == 128);
  CHECK(chunk.decode_keys(10000) == 1808);
  CHECK(chunk.decode_keys(8192) == 8192);
  CHECK(chunk.cached_tokens(10000) == 8192);
  // A model of a window and a chunk layer keeps at most the wider span; one full layer keeps all.
  ModelSpec mixed;
  mixed.layers = 2;
  mixed.layer_attention = {window, chunk};
  CHECK(mixed.cache_bound() == 8192);
  CHECK(mixed.cached_tokens(10000) == 8192);
  mixed.layer_attention = {window, full};
  CHECK_FALSE(mixed.cache_bound().has_value());
  CHECK(mixed.cached_tokens(10000) == 10000);
  // Prefill of 1,000 tokens: 1,000 x 1,001 / 2 = 500,500 pairs; a window of 128: 128 x 129 / 2 +
  // 872 x 128 = 119,872; chunks of 8,192 hold the whole prompt: 500,500.
  CHECK(full.prefill_pairs(1000) == 500500);
  CHECK(window.prefill_pairs(1000) == 119872);
  CHECK(chunk.prefill_pairs(1000) == 500500);
  // Two chunks of 4 in 10 tokens: 2 x 10 + 2 x 3 / 2 = 23.
  CHECK(LayerAttention{AttentionScope::chunked, 4}.prefill_pairs(10) == 23);

  // The step keeps one group per attention: gpt-oss's 12 sliding and 12 full MoE layers.
  const ModelSpec m = family("gpt-oss-20b");
  const std::vector<DecoderLayer> step =
      describe_step(m, shard(m, 1, 1), StepFormats{}, StepShape{StepPhase::decode, 1, 4096});
  REQUIRE(step.size() == 3);
  CHECK(step[0].count == 12);
  CHECK(step[0].attention == window);
  CHECK(step[1].count == 12);
  CHECK(step[1].attention == full);
  const auto attention_op = [](const DecoderLayer& layer) {
    for (const DecoderOp& op : layer.ops) {
      if (op.kind == OpKind::attention) return std::get<AttentionShape>(op.shape);
    }
    FAIL("no attention op");
    return AttentionShape{};
  };
  CHECK(attention_op(step[0]).kv_seq == 128);
  CHECK(attention_op(step[1]).kv_seq == 4096);
  // Prefill FLOPs: 4 x 64 (head dim) x 64 heads x pairs; a window of 128 over 1,000 tokens keeps
  // 119,872 of the 500,500 pairs.
  const std::vector<DecoderLayer> prefill =
      describe_step(m, shard(m, 1, 1), StepFormats{}, StepShape{StepPhase::prefill, 1000, 1000});
  const auto attention_flops = [](const DecoderLayer& layer) {
    for (const DecoderOp& op : layer.ops) {
      if (op.kind == OpKind::attention) return op.cost.flops;
    }
    return 0.0;
  };
  CHECK(attention_flops(prefill[0]) == Approx(4.0 * 64 * 64 * 119872));
  CHECK(attention_flops(prefill[1]) == Approx(4.0 * 64 * 64 * 500500));
}

TEST_CASE("quantization_config: each method's format, and one line naming what is not understood") {
  const std::string base =
      R"("model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
         "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256)";
  const auto read = [&](const std::string& quant) {
    return parse_hf_config("{" + base + R"(, "quantization_config": )" + quant + "}", "config.json");
  };
  // DeepSeek-V3's: fp8 e4m3 with 128 x 128 block scales.
  const ModelSpec fp8 = read(R"({"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                 "weight_block_size": [128, 128]})");
  REQUIRE(fp8.checkpoint);
  CHECK(fp8.checkpoint->linear == DType::fp8_e4m3);
  CHECK_THAT(fp8.checkpoint->description, Contains("128 x 128"));
  CHECK(read(R"({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true})").checkpoint->linear ==
        DType::int4_g128);
  CHECK(read(R"({"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": false})").checkpoint->linear ==
        DType::int4_g128);
  CHECK(read(R"({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights":
                 {"num_bits": 4, "type": "float", "group_size": 16}}}})")
            .checkpoint->linear == DType::nvfp4);
  CHECK(read(R"({"quant_method": "modelopt", "quant_algo": "NVFP4"})").checkpoint->linear == DType::nvfp4);
  CHECK_THAT(
      read_error("{" + base + R"(, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 32}})"),
      Contains("key 'quantization_config.group_size' group_size 32 is not modelled"));
  CHECK_THAT(read_error("{" + base + R"(, "quantization_config": {"quant_method": "bitsandbytes"}})"),
             Contains("key 'quantization_config.quant_method' 'bitsandbytes' is not modelled"));
  // A ModelOpt checkpoint's hf_quant_config.json, where config.json has no quantization_config.
  HfReadOptions side;
  side.quant_side_file = R"({"quantization": {"quant_algo": "NVFP4", "group_size": 16}})";
  const ModelSpec modelopt = parse_hf_config("{" + base + "}", "config.json", side);
  REQUIRE(modelopt.checkpoint);
  CHECK(modelopt.checkpoint->linear == DType::nvfp4);
}

TEST_CASE("families read by architectures, and the key a reader does not understand") {
  // Kimi-K2 ships DeepSeek-V3's architecture under model_type kimi_k2.
  const ModelSpec kimi = parse_hf_config(
      R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2", "hidden_size": 7168,
          "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_attention_heads": 64,
          "num_hidden_layers": 61, "vocab_size": 163840, "q_lora_rank": 1536, "kv_lora_rank": 512,
          "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 384,
          "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 1})",
      "config.json");
  CHECK(kimi.attention.kind == AttentionKind::mla);
  CHECK(kimi.moe->experts == 384);
  CHECK_FALSE(kimi.mtp);  // no num_nextn_predict_layers
  CHECK_THAT(read_error(R"({"model_type": "mamba", "hidden_size": 8, "num_hidden_layers": 2})"),
             Contains("key 'model_type' is 'mamba', which is not supported"));
  CHECK_THAT(read_error(R"({"model_type": "gemma3_text", "hidden_size": 64, "intermediate_size": 128,
                            "num_attention_heads": 4, "num_hidden_layers": 2, "head_dim": 16,
                            "layer_types": ["sliding_attention", "linear_attention"]})"),
             Contains("key 'layer_types[1]' is 'linear_attention', which is not modelled"));
}

TEST_CASE("the Hugging Face cache: an id resolves through refs/main, --revision picks a snapshot") {
  const std::vector<std::filesystem::path> caches{hf_data / "none", hf_data / "cache"};
  const std::filesystem::path main = find_in_hf_cache("openai/gpt-oss-20b", std::nullopt, caches);
  CHECK(main.parent_path().filename() == "1111111111111111111111111111111111111111");
  const std::filesystem::path pinned =
      find_in_hf_cache("openai/gpt-oss-20b", "2222222222222222222222222222222222222222", caches);
  CHECK(pinned.parent_path().filename() == "2222222222222222222222222222222222222222");
  // No refs/main: the only snapshot.
  CHECK(find_in_hf_cache("google/gemma-3-27b-it", std::nullopt, caches).parent_path().filename() ==
        "3333333333333333333333333333333333333333");
  // The model's id is the Hugging Face id of the cache path, not the snapshot's hash.
  CHECK(read_hf_config(main).id == "openai/gpt-oss-20b");
  try {
    (void)find_in_hf_cache("meta-llama/Llama-3.1-8B", std::nullopt, caches);
    FAIL("found a model the cache does not hold");
  } catch (const InputError& e) {
    CHECK_THAT(std::string(e.what()), Contains("huggingface-cli download meta-llama/Llama-3.1-8B config.json"));
    CHECK_THAT(std::string(e.what()), Contains("models--meta-llama--Llama-3.1-8B"));
  }
  CHECK_THROWS_AS(find_in_hf_cache("openai/gpt-oss-20b", "../../etc", caches), InputError);
  CHECK(looks_like_hf_id("meta-llama/Llama-3.1-8B"));
  CHECK_FALSE(looks_like_hf_id("llama-3.1-8b"));
  CHECK_FALSE(looks_like_hf_id("./dir/config.json"));
}

TEST_CASE("Llama 4 and Gemma 2 keys: chunked attention with NoPE layers, alternating windows") {
  // Llama 4 Scout's text keys (no published config.json was found to carry over: SOURCES.md).
  std::string no_rope;
  for (int i = 0; i < 12; ++i) no_rope += std::string(i == 0 ? "" : ", ") + "1, 1, 1, 0";
  const ModelSpec scout = parse_hf_config(
      R"({"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
          "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40,
          "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 16, "num_experts_per_tok": 1,
          "interleave_moe_layer_step": 1, "attention_chunk_size": 8192, "vocab_size": 202048,
          "no_rope_layers": [)" +
          no_rope + "]}",
      "config.json");
  REQUIRE(scout.moe);
  CHECK(scout.moe->shared_experts == 1);
  CHECK(scout.moe->expert_intermediate == 8192);
  CHECK(scout.dense_layers() == 0);
  // Every fourth layer (a NoPE layer) attends to the whole context, the others within 8,192-token
  // chunks: at 32,768 tokens, 12 x 32,768 + 36 x 8,192 = 688,128 token-layers.
  CHECK(scout.attention_of(2) == LayerAttention{AttentionScope::chunked, 8192});
  CHECK(scout.attention_of(3) == LayerAttention{AttentionScope::full, 0, false});
  CHECK(scout.cached_token_layers(32768) == 688128);
  // Active: per layer attention 5120 x 5120 x 2 + 5120 x 1024 x 2 = 62,914,560, one routed and the
  // shared expert 2 x 3 x 5120 x 8192 = 251,658,240, router 81,920, norms 10,240: 314,664,960, x 48
  // = 15,103.9M; embedding and head 2 x 202,048 x 5120 = 2,069.0M: 17,172.9M (the card: 17B active).
  CHECK(count_parameters(scout).active == Approx(17172889600.0 + 5120).epsilon(1e-6));

  // Maverick interleaves: an expert layer every second layer, dense ones of intermediate_size_mlp.
  const ModelSpec maverick = parse_hf_config(
      R"({"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
          "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40,
          "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 128, "num_experts_per_tok": 1,
          "interleave_moe_layer_step": 2, "vocab_size": 202048})",
      "config.json");
  CHECK(maverick.dense_layers() == 24);
  CHECK(maverick.ffn.intermediate == 16384);
  // moe_layers, where a config lists them, says which: 4 layers, experts on 0 and 2.
  const std::string four_layers =
      R"({"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
          "intermediate_size_mlp": 16384, "num_hidden_layers": 4, "num_attention_heads": 40,
          "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 16, "num_experts_per_tok": 1,
          "vocab_size": 202048, "moe_layers": )";
  const ModelSpec listed = parse_hf_config(four_layers + "[0, 2]}", "config.json");
  CHECK(listed.moe_layer(0));
  CHECK_FALSE(listed.moe_layer(1));
  CHECK(listed.moe_layer(2));
  CHECK(listed.first_layer(false) == 1);
  CHECK(listed.dense_layers() == 2);
  // Experts on the last layers only are DeepSeek's order, leading dense layers: [2, 3].
  const ModelSpec last = parse_hf_config(four_layers + "[2, 3]}", "config.json");
  CHECK(last.moe->expert_layers.empty());
  CHECK(last.moe->dense_layers == 2);
  CHECK_THROWS_WITH(parse_hf_config(four_layers + "[4]}", "config.json"),
                    Contains("moe_layers") && Contains("must list layer indices below 4 (found 4)"));
  CHECK_THROWS_WITH(parse_hf_config(four_layers + "[]}", "config.json"),
                    Contains("moe_layers") && Contains("flags no expert layer"));

  // Gemma 2: even layers slide over sliding_window, odd ones attend to all.
  const ModelSpec gemma2 = parse_hf_config(
      R"({"model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336, "num_attention_heads": 16,
          "num_key_value_heads": 8, "head_dim": 256, "num_hidden_layers": 42, "sliding_window": 4096,
          "hidden_activation": "gelu_pytorch_tanh"})",
      "config.json");
  CHECK(gemma2.vocab == 256000);
  CHECK(gemma2.tied_embeddings);
  CHECK(gemma2.max_context == 8192);
  CHECK(gemma2.attention_of(0) == LayerAttention{AttentionScope::sliding, 4096});
  CHECK(gemma2.attention_of(1) == LayerAttention{});
}

TEST_CASE("Qwen3 and Qwen3-MoE: the 32B, 30B-A3B and 235B-A22B configs against their model cards") {
  // Qwen/Qwen3-32B model card: 32.8B parameters, 31.2B non-embedding. Derived: per layer attention
  // 5120 x 8192 x 2 + 5120 x 1024 x 2 = 94,371,840, gated FFN 3 x 5120 x 25600 = 393,216,000, norms
  // 10,240: 487,598,080, x 64 = 31,206,277,120; embedding and head 2 x 151,936 x 5120 = 1,555.8M;
  // 32,762.1M in all. (The per-head q/k norms, 16,384, are not counted.)
  const ModelSpec dense = family("qwen3-32b");
  const ParameterCounts d = count_parameters(dense);
  CHECK(d.total == Approx(32.8e9).epsilon(0.005));
  CHECK(d.total - d.embedding - d.lm_head == Approx(31.2e9).epsilon(0.005));
  CHECK(dense.max_context == 40960);
  // KV per token and layer, bf16: 2 x 8 heads x 128 x 2 B = 4,096 B; x 64 layers = 262,144 B.
  CHECK(kv_bytes_per_token_layer(dense, DType::bf16) == 4096);

  // Qwen/Qwen3-30B-A3B model card: 30.5B in all, 3.3B activated, 29.9B non-embedding. Derived: per
  // layer attention 2048 x 4096 x 2 + 2048 x 512 x 2 = 18,874,368, router 2048 x 128 = 262,144,
  // norms 4,096, experts 128 x 3 x 2048 x 768 = 603,979,776; x 48 and the embedding and head 2 x
  // 151,936 x 2048 = 622.3M: 30,532.1M. Active: 8 experts = 37,748,736 per layer, 48 x 56,889,344
  // + 622,331,904 (embedding, head, final norm) = 3,353,020,416, 1.6% above the card's 3.3B. The
  // card's figure is 3.35B cut to one decimal, not rounded (that gives 3.4B): no modelled part is
  // missing, and 3.35B is within 0.5% of the derived count.
  const ModelSpec a3b = family("qwen3-30b-a3b");
  REQUIRE(a3b.moe);
  CHECK(a3b.moe->experts == 128);
  CHECK(a3b.moe->experts_per_token == 8);
  CHECK(a3b.moe->shared_experts == 0);
  const ParameterCounts small = count_parameters(a3b);
  CHECK(small.total == Approx(30.5e9).epsilon(0.005));
  CHECK(small.total - small.embedding - small.lm_head == Approx(29.9e9).epsilon(0.005));
  CHECK(small.active == 3353020416.0);
  CHECK(small.active == Approx(3.35e9).epsilon(0.005));
  CHECK(std::floor(small.active / 1e8) == 33);  // 3.3B, as the card writes it
  // KV per token and layer, bf16: 2 x 4 heads x 128 x 2 B = 2,048 B.
  CHECK(kv_bytes_per_token_layer(a3b, DType::bf16) == 2048);

  // Qwen/Qwen3-235B-A22B model card: 235B in all, 22B activated, 234B non-embedding. Derived: per
  // layer attention 4096 x 8192 x 2 + 4096 x 512 x 2 = 71,303,168, router 524,288, norms 8,192,
  // experts 128 x 3 x 4096 x 1536 = 2,415,919,104; x 94 and 2 x 151,936 x 4096 = 1,244.7M:
  // 235,093.6M. Active: 8 experts, 150,994,944 per layer: 22,190.7M (0.9% above "22B", within its
  // rounding).
  const ModelSpec big = family("qwen3-235b-a22b");
  const ParameterCounts b = count_parameters(big);
  CHECK(b.total == Approx(235e9).epsilon(0.005));
  CHECK(b.total - b.embedding - b.lm_head == Approx(234e9).epsilon(0.005));
  CHECK(b.active == Approx(22e9).epsilon(0.01));
  CHECK(kv_bytes_per_token_layer(big, DType::bf16) == 2048);
}

TEST_CASE("Llama 4 Scout and Maverick: chunked attention, NoPE layers by the class default, interleaved experts") {
  // Neither config lists no_rope_layers: Llama4TextConfig's default makes every fourth layer a
  // NoPE layer (no_rope_layer_interval 4), which attends to the whole context without rotary
  // embeddings; the 36 others attend within chunks of 8,192.
  const ModelSpec scout = family("llama-4-scout-17b-16e-instruct");
  REQUIRE(scout.layer_attention.size() == 48);
  CHECK(scout.attention_of(0) == LayerAttention{AttentionScope::chunked, 8192});
  CHECK(scout.attention_of(3) == LayerAttention{AttentionScope::full, 0, false});
  CHECK(scout.attention_of(47) == LayerAttention{AttentionScope::full, 0, false});
  // At 32,768 tokens: 12 x 32,768 + 36 x 8,192 = 688,128 token-layers; KV per token and layer,
  // bf16: 2 x 8 heads x 128 x 2 B = 4,096 B.
  CHECK(scout.cached_token_layers(32768) == 688128);
  CHECK(kv_bytes_per_token_layer(scout, DType::bf16) == 4096);
  CHECK(scout.max_context == 10485760);  // max_position_embeddings; the rope scaling stretches 8,192 to 131,072
  // meta-llama/Llama-4-Scout-17B-16E-Instruct model card: 17B active, 109B in all. Derived: per
  // layer attention 62,914,560, 16 routed + 1 shared expert of 3 x 5120 x 8192 = 125,829,120 each,
  // router 81,920, norms 10,240; x 48 = 105,700,884,480; embedding and head 2 x 202,048 x 5120 =
  // 2,069.0M: 107,769,861,120 of the text model, 1.1% below 109B. The card's total is the whole
  // checkpoint, vision encoder included, which is not modelled. Its vision_config (as published,
  // copied in NVIDIA/TensorRT-LLM's test_modeling_llama_min_latency.py; the test file's copy leaves
  // it out: hidden 1408, 34 layers, MLP 5632, patches of 14 at 336, pixel shuffle 0.5 into 4096 x
  // 4096, projected to 5120) holds 871,932,416: per layer four
  // 1408^2 projections with biases, fc1 and fc2 of 1408 x 5632 with biases and two layer norms,
  // 23,807,872, x 34 = 809,467,648; patch embedding 3 x 14^2 x 1408 = 827,904; positions 577 x
  // 1408 = 812,416; class token and the pre/post norms 7,040; adapter 5632 x 4096 + 4096^2 =
  // 39,845,888; projector 4096 x 5120 = 20,971,520. Text + vision = 108,641,793,536, 0.33% below
  // "109B", within its rounding. Active: one routed and the shared expert: 17,172.9M (1.0% above
  // "17B", within its rounding).
  const ParameterCounts s = count_parameters(scout);
  CHECK(s.total == 107769861120.0);
  const double scout_vision = 871932416.0;
  CHECK(s.total + scout_vision == Approx(109e9).epsilon(0.005));
  CHECK(s.active == Approx(17e9).epsilon(0.011));

  // Maverick: an expert layer every second layer (interleave_moe_layer_step 2), the 24 others
  // dense with intermediate_size_mlp 16,384. The card: 17B active, 400B in all. Derived: 24 dense
  // layers x (62,914,560 + 3 x 5120 x 16384 + 10,240) = 7,549,992,960; 24 expert layers x
  // (62,914,560 + 129 x 125,829,120 + 655,360 + 10,240) = 391,092,879,360; embedding and head
  // 2,069.0M: 400,711.8M (+0.18%), 401,583.8M with Scout's vision encoder (+0.40%; the same
  // vision_config). Active: 17,184.7M (+1.1%, within "17B"'s rounding).
  const ModelSpec maverick = family("llama-4-maverick-17b-128e-instruct");
  CHECK(maverick.dense_layers() == 24);
  const ParameterCounts v = count_parameters(maverick);
  CHECK(v.total == Approx(400e9).epsilon(0.005));
  CHECK(v.total + scout_vision == Approx(400e9).epsilon(0.005));
  CHECK(v.active == Approx(17e9).epsilon(0.011));
  CHECK(maverick.max_context == 1048576);
  // Which layers: transformers' Llama4TextConfig makes moe_layers range(step - 1, 48, step), the
  // odd layers 1, 3, ..., 47; the even ones are dense.
  CHECK_FALSE(maverick.moe_layer(0));
  CHECK(maverick.moe_layer(1));
  CHECK(maverick.moe_layer(47));
  CHECK(maverick.first_layer(true) == 1);
  // PP 5 splits the 48 layers 10, 10, 10, 9, 9 (layers 0-9, 10-19, 20-29, 30-38, 39-47): 5 expert
  // layers in each of the first three (the odd ones), 4 in layers 30-38 (31, 33, 35, 37) and 5 in
  // 39-47 (39, ..., 47).
  const std::vector<StageLayers> stages = stage_layers(maverick, 5);
  REQUIRE(stages.size() == 5);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(stages[i].moe == 5);
    CHECK(stages[i].dense == 5);
  }
  CHECK(stages[3].first_layer == 30);
  CHECK(stages[3].moe == 4);
  CHECK(stages[3].dense == 5);
  CHECK(stages[4].moe == 5);
  CHECK(stages[4].dense == 4);
  // PP 4: every stage 6 dense + 6 expert layers; stage 1 (no embedding, no head) holds 6 x
  // (314,583,040 + 16,295,536,640) = 99,660,718,080 parameters (the layers above), not the 24 dense
  // layers' 7.5B of stages 0 and 1 that counting dense layers first gave.
  const std::vector<StageLayers> four = stage_layers(maverick, 4);
  REQUIRE(four.size() == 4);
  CHECK(four[1].moe == 6);
  CHECK(stage_weight_elements(maverick, shard(maverick, 1, 4), four[1]).total() == 99660718080.0);

  // The step: a NoPE layer has no rope op; a chunked layer keeps its own.
  const std::vector<DecoderLayer> step =
      describe_step(scout, shard(scout, 1, 1), StepFormats{}, StepShape{StepPhase::decode, 1, 16384});
  const auto has_rope = [](const DecoderLayer& layer) {
    return std::any_of(layer.ops.begin(), layer.ops.end(), [](const DecoderOp& op) { return op.kind == OpKind::rope; });
  };
  REQUIRE(step.size() == 3);
  CHECK(step[0].count == 36);
  CHECK(has_rope(step[0]));
  CHECK(step[1].count == 12);
  CHECK_FALSE(has_rope(step[1]));
}

TEST_CASE("Kimi-K2: DeepSeek-V3's architecture under model_type kimi_k2, fp8 block scales") {
  const ModelSpec kimi = family("kimi-k2-instruct");
  CHECK(kimi.attention.kind == AttentionKind::mla);
  REQUIRE(kimi.moe);
  CHECK(kimi.moe->experts == 384);
  CHECK(kimi.moe->shared_experts == 1);
  CHECK(kimi.dense_layers() == 1);
  REQUIRE(kimi.checkpoint);
  CHECK(kimi.checkpoint->linear == DType::fp8_e4m3);
  CHECK(kimi.max_context == 131072);  // yarn: 32 x 4,096
  CHECK_FALSE(kimi.mtp);              // num_nextn_predict_layers 0
  // Kimi K2 technical report (arXiv:2507.20534): 1.04T parameters, 32.6B activated. Derived: per
  // layer MLA 7168 x 1536 + 1536 + 1536 x 64 x 192 + 7168 x 576 + 512 + 512 x 64 x 256 + 64 x 128 x
  // 7168 = 101,124,096 (x 61); the dense layer 3 x 7168 x 18432; 60 expert layers of 385 experts of
  // 3 x 7168 x 2048 and a router of 7168 x 384; embedding and head 2 x 163,840 x 7168:
  // 1,026,408,209,408, 1.3% below the report's 1.04T and 2.6% above the "1T" of the Hugging Face
  // card: the two published figures differ by 4% themselves, and neither is itemised. The same
  // count gives DeepSeek-V3 (the architecture, 128 heads, 256 experts, 3 dense layers, vocab
  // 129,280) 671,026,404,352 against its stated 671B; and the config has no MTP layer
  // (num_nextn_predict_layers 0) that the report could be counting (one more layer of this shape,
  // 17.06B, would make 1,043.5B). The gap is the report's, stated here, not tuned. Active, 8 routed
  // + 1 shared: 32.86B, 0.8% above 32.6B.
  const ParameterCounts p = count_parameters(kimi);
  CHECK(p.total == 1026408209408.0);
  CHECK(p.total == Approx(1.04e12).epsilon(0.014));
  CHECK(count_parameters(fixture::models().find("deepseek-v3")).total == 671026404352.0);
  CHECK(p.active == Approx(32.6e9).epsilon(0.01));
  // KV per token and layer, bf16: (512 latent + 64 rotary key) x 2 B = 1,152 B.
  CHECK(kv_bytes_per_token_layer(kimi, DType::bf16) == 1152);
}

TEST_CASE("gpt-oss-120b: 128 experts, alternating windows, attention sinks") {
  const ModelSpec m = family("gpt-oss-120b");
  REQUIRE(m.moe);
  CHECK(m.moe->experts == 128);
  CHECK(m.attention.sinks);
  REQUIRE(m.layer_attention.size() == 36);
  CHECK(m.attention_of(0) == LayerAttention{AttentionScope::sliding, 128});
  CHECK(m.attention_of(1) == LayerAttention{});
  // OpenAI, gpt-oss-120b & gpt-oss-20b Model Card (arXiv:2508.10925), table 1: 116.83B parameters
  // in all, 5.13B active (the embedding table left out). Derived: attention 36 x (2880 x 4096 x 2 +
  // 2880 x 512 x 2 + 5,120 biases + 64 sink logits) = 955.7M; experts 36 x 128 x 3 x 2880^2 =
  // 114,661.8M; routers 13.3M; norms 0.2M; embedding and head 2 x 201,088 x 2880 = 1,158.3M:
  // 116,789.2M (-0.03%). Active: 4 of 128 experts, 3,583.2M, so 5,710.6M - the 579.1M embedding =
  // 5,131.5M (+0.03%).
  const ParameterCounts p = count_parameters(m);
  CHECK(p.total == Approx(116.83e9).epsilon(0.005));
  CHECK(p.active - p.embedding == Approx(5.13e9).epsilon(0.005));
  // The sinks: 64 per layer, 2,304 in all (4.6 kB of bf16); no FLOPs or bytes are costed for them.
  CHECK(p.attention_per_layer == 2880.0 * 4096 * 2 + 2880.0 * 512 * 2 + 4096 + 2 * 512 + 64);
  // KV per token and layer, bf16: 2 x 8 heads x 64 x 2 B = 2,048 B; at 131,072 tokens 18 full
  // layers x 131,072 + 18 x 128 = 2,361,600 token-layers.
  CHECK(kv_bytes_per_token_layer(m, DType::bf16) == 2048);
  CHECK(m.cached_token_layers(131072) == 2361600);
  REQUIRE(m.checkpoint);
  CHECK(m.checkpoint->experts == DType::mxfp4);
  const std::vector<DecoderLayer> step =
      describe_step(m, shard(m, 1, 1), StepFormats{}, StepShape{StepPhase::decode, 1, 4096});
  for (const DecoderOp& op : step[0].ops) {
    if (op.kind == OpKind::attention) CHECK_THAT(op.shape_text, Contains("sink logits (not costed)"));
  }
}

TEST_CASE("gemma-2-2b-it: alternating 4,096-token windows, tied embeddings, against the Gemma 2 report") {
  const ModelSpec m = family("gemma-2-2b-it");
  CHECK(m.tied_embeddings);
  CHECK(m.ffn.activation == "gelu_tanh");
  CHECK(m.max_context == 8192);
  REQUIRE(m.layer_attention.size() == 26);
  CHECK(m.attention_of(0) == LayerAttention{AttentionScope::sliding, 4096});
  CHECK(m.attention_of(1) == LayerAttention{});
  // Gemma Team, Gemma 2 (arXiv:2408.00118), table 2, 2B: 590,118,912 embedding and 2,024,517,888
  // non-embedding parameters. Derived: per layer 2304 x 2048 x 2 + 2304 x 1024 x 2 (attention) + 3 x
  // 2304 x 9216 (gated GeLU) + 2 x 2304 (norms) = 77,861,376, x 26 + the final norm = 2,024,398,080
  // (Gemma's two extra norms per layer, 119,808, are not counted); embedding 256,000 x 2304 =
  // 589,824,000 (the report counts a vocabulary of 256,128), tied.
  const ParameterCounts p = count_parameters(m);
  CHECK(p.total - p.embedding == Approx(2024517888.0).epsilon(0.005));
  CHECK(p.embedding == Approx(590118912.0).epsilon(0.005));
  // KV per token and layer, bf16: 2 x 4 heads x 256 x 2 B = 4,096 B; at 8,192 tokens 13 full
  // layers x 8,192 + 13 x 4,096 = 159,744 token-layers.
  CHECK(kv_bytes_per_token_layer(m, DType::bf16) == 4096);
  CHECK(m.cached_token_layers(8192) == 159744);
}

TEST_CASE("serve's step cost: each attention group with its own window, not the first group's") {
  // gpt-oss-20b: 12 layers slide over 128 tokens, 12 see everything. The same model with every
  // layer full is the reference: decode at 8,192 cached tokens costs half of its all-full figure
  // at 8,192 and half of it at 128; a 100-token prefill stays within the window and costs the same.
  const ModelSpec m = family("gpt-oss-20b");
  ModelSpec all_full = m;
  all_full.layer_attention.clear();
  const GpuSpec& h100 = fixture::gpus().find("h100");
  DeploymentConfig config;
  config.expert_weights = DType::mxfp4;
  const TimeOptions time;
  StepCoster windowed(m, h100, config, time, 8192);
  StepCoster full(all_full, h100, config, time, 8192);
  CHECK(windowed.decode_attention_s(1, 8192) ==
        Approx(full.decode_attention_s(1, 8192) / 2 + full.decode_attention_s(1, 128) / 2).epsilon(1e-12));
  // Four requests of 8,192 each: the sliding layers read 4 x 128 keys.
  CHECK(windowed.decode_attention_s(4, 4 * 8192) ==
        Approx(full.decode_attention_s(4, 4 * 8192) / 2 + full.decode_attention_s(4, 4 * 128) / 2).epsilon(1e-12));
  CHECK(windowed.prefill_attention_s({100, 0}) == Approx(full.prefill_attention_s({100, 0})).epsilon(1e-12));
  // 4,096 new tokens after 4,096 cached: the sliding layers read 128 + 4,096 keys and keep
  // 4,096 x 128 of the 4,096 x 4,096 + 4,096 x 4,097 / 2 pairs; they cost less than full ones.
  CHECK(windowed.prefill_attention_s({4096, 4096}) < full.prefill_attention_s({4096, 4096}));
}

TEST_CASE("Cohere2 and GLM-4.5 keys: every fourth layer full, DeepSeek-style experts with dense first layers") {
  // No published config.json of either was found to carry over (SOURCES.md): these are their
  // families' keys at the sizes their cards give (Command R7B; GLM-4.5), and the counts below are
  // derived here from those keys, not checked against the cards.
  const ModelSpec cohere = parse_hf_config(
      R"({"architectures": ["Cohere2ForCausalLM"], "model_type": "cohere2", "hidden_size": 4096,
          "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
          "num_key_value_heads": 8, "vocab_size": 256000, "sliding_window": 4096, "sliding_window_pattern": 4,
          "max_position_embeddings": 132096, "tie_word_embeddings": true})",
      "config.json");
  // (i + 1) a multiple of 4 attends to all: layers 3, 7, ..., 31 (8), the 24 others to 4,096 tokens.
  REQUIRE(cohere.layer_attention.size() == 32);
  CHECK(cohere.attention_of(2) == LayerAttention{AttentionScope::sliding, 4096});
  CHECK(cohere.attention_of(3) == LayerAttention{});
  CHECK(cohere.attention_of(31) == LayerAttention{});
  // At 8,192 tokens: 8 x 8,192 + 24 x 4,096 = 163,840 token-layers; KV per token and layer, bf16:
  // 2 x 8 heads x 128 x 2 B = 4,096 B.
  CHECK(cohere.cached_token_layers(8192) == 163840);
  CHECK(kv_bytes_per_token_layer(cohere, DType::bf16) == 4096);
  CHECK(cohere.tied_embeddings);
  CHECK(cohere.max_context == 132096);
  // Per layer: attention 4096 x 4096 x 2 + 4096 x 1024 x 2 = 41,943,040, gated FFN 3 x 4096 x 14336
  // = 176,160,768, norms 2 x 4096 (Cohere's parallel block has one; 4,096 a layer over): 218,112,000,
  // x 32 = 6,979,584,000; the tied embedding 256,000 x 4096 = 1,048,576,000: 8,028,160,000.
  const ParameterCounts c = count_parameters(cohere);
  CHECK(c.total == Approx(8028160000.0 + 4096).epsilon(1e-6));

  const ModelSpec glm = parse_hf_config(
      R"({"architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", "hidden_size": 5120,
          "intermediate_size": 12288, "moe_intermediate_size": 1536, "num_hidden_layers": 92,
          "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128, "attention_bias": true,
          "n_routed_experts": 160, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
          "partial_rotary_factor": 0.5, "vocab_size": 151552, "max_position_embeddings": 131072,
          "num_nextn_predict_layers": 1, "tie_word_embeddings": false})",
      "config.json");
  REQUIRE(glm.moe);
  CHECK(glm.moe->experts == 160);
  CHECK(glm.moe->shared_experts == 1);
  CHECK(glm.moe->experts_per_token == 8);
  CHECK(glm.dense_layers() == 3);
  CHECK(glm.attention.qkv_bias);
  CHECK(glm.layer_attention.empty());  // no window: every layer attends to all
  // KV per token and layer, bf16: 2 x 8 x 128 x 2 B = 4,096 B.
  CHECK(kv_bytes_per_token_layer(glm, DType::bf16) == 4096);
  // Per layer attention 5120 x 12288 x 2 + 5120 x 1024 x 2 + the q, k, v biases 14,336 =
  // 136,329,216, norms 10,240; 3 dense FFNs 3 x 5120 x 12288 = 188,743,680; 89 expert layers of 160
  // routed and 1 shared 3 x 5120 x 1536 = 23,592,960 each (3,798,466,560) and a router 819,200;
  // embedding and head 2 x 151,552 x 5120 = 1,551,892,480; the final norm 5,120: 352,797,791,232.
  // (The multi-token-prediction layer, num_nextn_predict_layers, is not modelled: docs/llm.md.)
  // Active: 8 routed and the shared expert, 9 x 23,592,960 = 212,336,640 a layer: 33,632,228,352.
  const ParameterCounts g = count_parameters(glm);
  CHECK(g.total == Approx(352797791232.0).epsilon(1e-12));
  CHECK(g.active == Approx(33632228352.0).epsilon(1e-12));
}

TEST_CASE("MTP layers: DeepSeek-V3's num_nextn_predict_layers read, its model file's acceptance and source") {
  // deepseek-ai/DeepSeek-V3's config.json states num_nextn_predict_layers 1 and no acceptance rate:
  // the reader keeps the layer count only (plan then names the flags rather than assuming a rate).
  const ModelSpec v3 = parse_hf_config(
      R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
          "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_attention_heads": 128,
          "num_hidden_layers": 61, "vocab_size": 129280, "q_lora_rank": 1536, "kv_lora_rank": 512,
          "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 256,
          "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
          "num_nextn_predict_layers": 1})",
      "config.json");
  REQUIRE(v3.mtp);
  CHECK(v3.mtp->layers == 1);
  CHECK(v3.mtp->acceptance.empty());
  // The bundled file adds the paper's rate (85-90% for the second token: the lower end) and its source.
  const ModelSpec& bundled = fixture::models().find("deepseek-v3");
  REQUIRE(bundled.mtp);
  CHECK(bundled.mtp->layers == 1);
  CHECK(bundled.mtp->acceptance == std::vector<double>{0.85});
  CHECK_THAT(bundled.mtp->acceptance_source, Contains("section 5.4.3"));
  CHECK_FALSE(fixture::models().find("mixtral-8x7b").mtp);
  CHECK_THAT(read_error(R"({"model_type": "deepseek_v3", "hidden_size": 64, "intermediate_size": 128,
                            "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 256, "kv_lora_rank": 16,
                            "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16,
                            "num_nextn_predict_layers": -1})"),
             Contains("num_nextn_predict_layers"));
}
