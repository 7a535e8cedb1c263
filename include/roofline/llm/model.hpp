#pragma once

// LLM architectures: the shapes that decide weight bytes, KV-cache bytes and the FLOPs of every
// layer. Two readers make them: the presets of models/*.json (roofline/model_presets.hpp) and a
// Hugging Face config.json (roofline/hf_config.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/core/dtype.hpp"
#include "roofline/model/ops.hpp"  // NormKind

namespace roofline {

// Bounds on sizes, far beyond any real model or deployment, that keep every element count of a
// step within 64-bit integers (a larger value is bad input, exit 2).
inline constexpr std::int64_t max_tokens = std::int64_t{1} << 24;  // context, prompt, output, sequence
inline constexpr std::int64_t max_batch = std::int64_t{1} << 20;   // concurrent requests
inline constexpr std::int64_t max_width = std::int64_t{1} << 24;   // hidden, feed-forward, expert width
inline constexpr std::int64_t max_heads = 4096;                    // heads, KV heads, head dims
inline constexpr std::int64_t max_vocab = std::int64_t{1} << 27;
inline constexpr std::int64_t max_experts = 4096;

enum class AttentionKind : std::uint8_t { gqa, mla };
enum class FfnKind : std::uint8_t { gated, plain };

[[nodiscard]] std::string_view name_of(AttentionKind kind);
[[nodiscard]] std::string_view name_of(FfnKind kind);

// What the queries of one layer see: every earlier token (full), the last `span` tokens (a
// sliding window: Mistral, Gemma 2/3, gpt-oss, Cohere2), or the tokens of their own block of
// `span` positions (chunked attention: Llama 4).
enum class AttentionScope : std::uint8_t { full, sliding, chunked };
[[nodiscard]] std::string_view name_of(AttentionScope scope);

struct LayerAttention {
  AttentionScope scope = AttentionScope::full;
  std::int64_t span = 0;  // the window W or the chunk C; 0 for full
  // False on a NoPE layer (Llama 4's every fourth): its queries and keys get no rotary embedding,
  // so the step has no rope op there.
  bool rope = true;

  // Tokens of a `context`-token request this layer keeps in its cache: all, the window, or the
  // current chunk (at most C: engines allocate a chunk per request).
  [[nodiscard]] std::int64_t cached_tokens(std::int64_t context) const;
  // Keys the newest query attends to at `context` tokens (decode): the window, or the tokens of its
  // chunk so far ((context - 1) mod C + 1).
  [[nodiscard]] std::int64_t decode_keys(std::int64_t context) const;
  // Query-key pairs of a causal prefill of `tokens` tokens, the diagonal included: N (N + 1) / 2 for
  // full attention; a window of W: W (W + 1) / 2 + (N - W) W once N > W; chunks of C: each chunk's
  // own triangle.
  [[nodiscard]] double prefill_pairs(std::int64_t tokens) const;
  [[nodiscard]] std::string describe() const;  // "full", "sliding 4096", "chunked 8192", "full, NoPE"
  friend bool operator==(const LayerAttention&, const LayerAttention&) = default;
};

struct AttentionSpec {
  AttentionKind kind = AttentionKind::gqa;
  std::int64_t heads = 0;
  // Grouped-query attention (MHA when kv_heads == heads, MQA when 1).
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  bool qkv_bias = false;
  // A learned sink logit per head and layer (gpt-oss): one more term in each softmax row. Counted
  // as parameters (heads per layer); its FLOPs (an exp per query and head) and bytes are not costed.
  bool sinks = false;
  // Every layer's window where the model has one for all (Mistral 7B v0.1); a model whose layers
  // differ lists them in ModelSpec::layer_attention instead.
  std::optional<std::int64_t> sliding_window;
  // Multi-head latent attention (DeepSeek-V2/V3): the cache holds kv_lora_rank + qk_rope_head_dim
  // values per token and layer, shared by all heads.
  std::int64_t q_lora_rank = 0;  // 0: queries are projected from the hidden state directly
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;

  // Width of one query (and key) head: head_dim, or nope + rope for MLA.
  [[nodiscard]] std::int64_t qk_head_dim() const;
  // Width of one value (and attention output) head.
  [[nodiscard]] std::int64_t value_head_dim() const;
};

struct FfnSpec {
  FfnKind kind = FfnKind::gated;
  std::int64_t intermediate = 0;  // width of a dense feed-forward layer
  std::string activation = "silu";
};

struct MoeSpec {
  std::int64_t experts = 0;
  std::int64_t experts_per_token = 0;
  std::int64_t shared_experts = 0;
  std::int64_t expert_intermediate = 0;
  std::int64_t dense_layers = 0;  // leading layers with a dense feed-forward layer
  // Where dense and expert layers interleave (Llama 4 Maverick: transformers' moe_layers), one flag
  // per layer, true on an expert layer; empty: the layers after the leading dense ones.
  std::vector<bool> expert_layers;
};

struct ModelSpec {
  std::string id;
  std::vector<std::string> aliases;
  std::string name;
  std::string source_title;
  std::string source_url;
  std::string origin;  // "bundled:models/<id>.json", a path, or "hf-config:<path>"

  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t vocab = 0;
  bool tied_embeddings = false;
  std::optional<std::int64_t> max_context;
  NormKind norm = NormKind::rmsnorm;
  AttentionSpec attention;
  FfnSpec ffn;
  std::optional<MoeSpec> moe;
  // One entry per layer where the layers' attention differs (gpt-oss, Gemma 2/3, Cohere2, Llama 4);
  // empty: every layer as attention.sliding_window says.
  std::vector<LayerAttention> layer_attention;
  // The formats the checkpoint stores its weights in (Hugging Face quantization_config): the
  // deployment's default where --weights is not given.
  struct CheckpointFormat {
    std::optional<DType> linear;   // the transformer blocks' projections (unset: left unquantized)
    std::optional<DType> experts;  // the routed experts (unset: as linear)
    std::string description;       // what the config said, for the report
  };
  std::optional<CheckpointFormat> checkpoint;
  // The multi-token-prediction module the checkpoint ships (DeepSeek-V3's num_nextn_predict_layers:
  // speculation's drafter without --draft-model), and the acceptance of each draft position its
  // authors state, where they do: plan then tries speculation with it unless told otherwise.
  struct MtpModule {
    std::int64_t layers = 0;
    std::vector<double> acceptance;  // empty: none stated
    std::string acceptance_source;   // where the rates are stated
  };
  std::optional<MtpModule> mtp;

  std::optional<double> stated_total_parameters;
  std::optional<double> stated_active_parameters;

  // Layers whose feed-forward part is a mixture of experts (the others are dense).
  [[nodiscard]] std::int64_t moe_layers() const;
  [[nodiscard]] std::int64_t dense_layers() const { return layers - moe_layers(); }
  // Whether layer `index` (0-based) is an expert layer.
  [[nodiscard]] bool moe_layer(std::int64_t index) const;
  // The first layer of that kind (expert or dense); `layers` where there is none.
  [[nodiscard]] std::int64_t first_layer(bool moe_layer) const;
  // Layer `index`'s attention (0-based).
  [[nodiscard]] LayerAttention attention_of(std::int64_t index) const;
  // Tokens of a request's context the KV cache keeps in its fullest layer (a window caps it):
  // min(context, cache_bound()).
  [[nodiscard]] std::int64_t cached_tokens(std::int64_t context) const;
  // The most tokens of a request any layer keeps (its widest window or chunk); nullopt where a layer
  // keeps the whole context. A simulator reads it once and caps each request's context by it.
  [[nodiscard]] std::optional<std::int64_t> cache_bound() const;
  // Tokens cached summed over layers [first, first + count): a request's KV bytes are this times
  // the bytes per token and layer.
  [[nodiscard]] double cached_token_layers(std::int64_t context, std::int64_t first, std::int64_t count) const;
  [[nodiscard]] double cached_token_layers(std::int64_t context) const {
    return cached_token_layers(context, 0, layers);
  }
  // Whether any layer's attention is windowed or chunked.
  [[nodiscard]] bool windowed() const;
};

// Parameter counts derived from the shapes (elements, not bytes). Biases are counted where the
// model has them; norms have one weight vector (rmsnorm) or weight and bias (layernorm).
struct ParameterCounts {
  double embedding = 0;            // vocab x hidden
  double lm_head = 0;              // vocab x hidden, 0 when tied
  double attention_per_layer = 0;  // projections (and biases, MLA's latent norms)
  double norms_per_layer = 0;      // the two norms of a layer
  double dense_ffn_per_layer = 0;  // a dense feed-forward layer
  double expert = 0;               // one routed or shared expert
  double router_per_layer = 0;     // hidden x experts
  double final_norm = 0;
  double total = 0;   // everything stored
  double active = 0;  // what one token uses: shared + experts_per_token routed experts

  // Parameters per transformer layer, feed-forward included.
  [[nodiscard]] double dense_layer() const { return attention_per_layer + norms_per_layer + dense_ffn_per_layer; }
};
[[nodiscard]] ParameterCounts count_parameters(const ModelSpec& model);

// The rules of a model the schema cannot state (kind-specific fields, divisibility, the size
// bounds above), shared by both readers (roofline/model_presets.hpp, roofline/hf_config.hpp).
// Throws InputError "<origin>: <key>: <problem>".
void check_model(const ModelSpec& model, const std::string& origin);

}  // namespace roofline
