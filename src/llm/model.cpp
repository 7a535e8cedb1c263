#include "roofline/llm/model.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "roofline/core/error.hpp"

namespace roofline {

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

std::string_view name_of(AttentionScope scope) {
  switch (scope) {
    case AttentionScope::full: return "full";
    case AttentionScope::sliding: return "sliding";
    case AttentionScope::chunked: return "chunked";
  }
  return "full";
}

std::int64_t LayerAttention::cached_tokens(std::int64_t context) const {
  return scope == AttentionScope::full ? context : std::min(context, span);
}

std::int64_t LayerAttention::decode_keys(std::int64_t context) const {
  switch (scope) {
    case AttentionScope::full: return context;
    case AttentionScope::sliding: return std::min(context, span);
    case AttentionScope::chunked: return (context - 1) % span + 1;
  }
  return context;
}

double LayerAttention::prefill_pairs(std::int64_t tokens) const {
  const auto triangle = [](double n) { return n * (n + 1) / 2; };
  const auto n = static_cast<double>(tokens);
  const auto w = static_cast<double>(span);
  switch (scope) {
    case AttentionScope::full: break;
    case AttentionScope::sliding: return tokens <= span ? triangle(n) : triangle(w) + (n - w) * w;
    case AttentionScope::chunked:
      return static_cast<double>(tokens / span) * triangle(w) + triangle(static_cast<double>(tokens % span));
  }
  return triangle(n);
}

std::string LayerAttention::describe() const {
  const std::string nope = rope ? "" : ", NoPE";
  if (scope == AttentionScope::full) return "full" + nope;
  return fmt::format("{} {}{}", name_of(scope), span, nope);
}

std::int64_t ModelSpec::moe_layers() const {
  if (!moe) return 0;
  if (moe->expert_layers.empty()) return std::max<std::int64_t>(layers - moe->dense_layers, 0);
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < layers; ++i) count += moe_layer(i) ? 1 : 0;
  return count;
}

bool ModelSpec::moe_layer(std::int64_t index) const {
  if (!moe) return false;
  if (moe->expert_layers.empty()) return index >= moe->dense_layers;
  return static_cast<std::size_t>(index) < moe->expert_layers.size() &&
         moe->expert_layers[static_cast<std::size_t>(index)];
}

std::int64_t ModelSpec::first_layer(bool moe_kind) const {
  for (std::int64_t i = 0; i < layers; ++i) {
    if (moe_layer(i) == moe_kind) return i;
  }
  return layers;
}

LayerAttention ModelSpec::attention_of(std::int64_t index) const {
  if (!layer_attention.empty()) return layer_attention.at(static_cast<std::size_t>(index));
  if (attention.sliding_window) return {AttentionScope::sliding, *attention.sliding_window};
  return {};
}

std::optional<std::int64_t> ModelSpec::cache_bound() const {
  std::int64_t most = 0;
  for (std::int64_t i = 0; i < layers; ++i) {
    const LayerAttention layer = attention_of(i);
    if (layer.scope == AttentionScope::full) return std::nullopt;
    most = std::max(most, layer.span);
  }
  return most;
}

std::int64_t ModelSpec::cached_tokens(std::int64_t context) const {
  const std::optional<std::int64_t> bound = cache_bound();
  return bound ? std::min(context, *bound) : context;
}

double ModelSpec::cached_token_layers(std::int64_t context, std::int64_t first, std::int64_t count) const {
  double sum = 0;
  for (std::int64_t i = first; i < first + count; ++i)
    sum += static_cast<double>(attention_of(i).cached_tokens(context));
  return sum;
}

bool ModelSpec::windowed() const {
  for (std::int64_t i = 0; i < layers; ++i) {
    if (attention_of(i).scope != AttentionScope::full) return true;
  }
  return false;
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
    if (a.sinks) p.attention_per_layer += heads;
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

void check_model(const ModelSpec& m, const std::string& origin) {
  const auto fail = [&](std::string_view key, const std::string& problem) {
    throw InputError(fmt::format("{}: {}: {}", origin, key, problem));
  };
  const AttentionSpec& a = m.attention;
  const auto at_most = [&](std::int64_t value, std::int64_t limit, std::string_view key) {
    if (value > limit) fail(key, fmt::format("{} is more than the {} roofline models", value, limit));
  };
  at_most(m.layers, 10000, "/layers");
  if (m.mtp) at_most(m.mtp->layers, 16, "/mtp/layers");  // speculation drafts at most 16 tokens
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
    if (!m.layer_attention.empty()) fail("/attention/layers", "not modelled together with kind mla");
  }
  if (!m.layer_attention.empty()) {
    if (static_cast<std::int64_t>(m.layer_attention.size()) != m.layers) {
      fail("/attention/layers", fmt::format("lists {} layers; the model has {}", m.layer_attention.size(), m.layers));
    }
    if (a.sliding_window) fail("/attention/sliding_window", "give either one window or the layers' pattern");
    for (const LayerAttention& layer : m.layer_attention) {
      if (layer.scope != AttentionScope::full && layer.span < 1) fail("/attention/layers", "a window needs its span");
      at_most(layer.span, max_tokens, "/attention/layers");
    }
  }
  if (m.moe) {
    if (m.moe->experts_per_token > m.moe->experts) {
      fail("/moe/experts_per_token",
           fmt::format("{} is more than the {} experts", m.moe->experts_per_token, m.moe->experts));
    }
    if (m.moe->dense_layers >= m.layers) {
      fail("/moe/dense_layers", fmt::format("{} leaves no expert layer of {}", m.moe->dense_layers, m.layers));
    }
    if (!m.moe->expert_layers.empty() &&
        (static_cast<std::int64_t>(m.moe->expert_layers.size()) != m.layers || m.moe_layers() == 0)) {
      fail("/moe/expert_layers",
           fmt::format("must flag each of the {} layers, one an expert layer at least", m.layers));
    }
  }
}

}  // namespace roofline
