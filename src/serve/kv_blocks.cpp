// The paged KV cache's block groups (roofline/serve/kv_blocks.hpp; docs/serve.md).
#include "roofline/serve/kv_blocks.hpp"

#include <algorithm>
#include <cstddef>

namespace roofline {
namespace {

std::int64_t blocks_for(std::int64_t tokens, std::int64_t block_size) {
  return (tokens + block_size - 1) / block_size;
}

// Tokens at the start of a request no query after `computed` attends to in a layer of this kind:
// before the window (vLLM's SlidingWindowManager: computed - W + 1), or before the current chunk
// (ChunkedLocalAttentionManager: floor(computed / C) C).
std::int64_t skipped_tokens(const LayerAttention& attention, std::int64_t computed) {
  switch (attention.scope) {
    case AttentionScope::full: return 0;
    case AttentionScope::sliding: return std::max<std::int64_t>(0, computed - attention.span + 1);
    case AttentionScope::chunked: return computed / attention.span * attention.span;
  }
  return 0;
}

}  // namespace

KvBlockLayout::KvBlockLayout(const ModelSpec& model, std::int64_t block_size) : block_size_(block_size) {
  std::vector<std::size_t> kind_of_layer;
  kind_of_layer.reserve(static_cast<std::size_t>(model.layers));
  for (std::int64_t i = 0; i < model.layers; ++i) {
    LayerAttention attention = model.attention_of(i);
    attention.rope = true;
    const auto k = static_cast<std::size_t>(
        std::find_if(kinds_.begin(), kinds_.end(), [&](const Kind& kind) { return kind.attention == attention; }) -
        kinds_.begin());
    if (k == kinds_.size()) kinds_.push_back({attention, 0, 0});
    ++kinds_[k].layers;
    kind_of_layer.push_back(k);
  }
  std::int64_t fewest = model.layers;
  std::int64_t most = 0;
  for (const Kind& kind : kinds_) {
    fewest = std::min(fewest, kind.layers);
    most = std::max(most, kind.layers);
  }
  // vLLM pads a kind's last group rather than split the other kinds finely when the counts are
  // close (gpt-oss-20b with an EAGLE layer: 12 sliding + 13 full, two groups of 13).
  layers_per_group_ = 2 * most < 3 * fewest ? most : fewest;
  std::vector<std::int64_t> first_group(kinds_.size(), 0);
  std::int64_t next_group = 0;
  for (std::size_t k = 0; k < kinds_.size(); ++k) {
    kinds_[k].groups = blocks_for(kinds_[k].layers, layers_per_group_);
    first_group[k] = next_group;
    next_group += kinds_[k].groups;
  }
  // layers[i::groups]: the kind's j-th layer goes to its group j mod groups.
  std::vector<std::int64_t> seen(kinds_.size(), 0);
  group_of_layer_.reserve(kind_of_layer.size());
  for (const std::size_t k : kind_of_layer) {
    group_of_layer_.push_back(first_group[k] + seen[k] % kinds_[k].groups);
    ++seen[k];
  }
}

std::int64_t KvBlockLayout::groups() const {
  std::int64_t sum = 0;
  for (const Kind& kind : kinds_) sum += kind.groups;
  return sum;
}

std::int64_t KvBlockLayout::held(std::int64_t computed, std::int64_t tokens) const {
  const std::int64_t slots = blocks_for(computed + tokens, block_size_);
  std::int64_t sum = 0;
  for (const Kind& kind : kinds_) {
    const std::int64_t freed = std::min(slots, skipped_tokens(kind.attention, computed) / block_size_);
    sum += kind.groups * (slots - freed);
  }
  return sum;
}

std::int64_t KvBlockLayout::peak(std::int64_t tokens, std::int64_t step_tokens) const {
  const std::int64_t all = blocks_for(tokens, block_size_);
  std::int64_t sum = 0;
  for (const Kind& kind : kinds_) {
    const std::int64_t span = kind.attention.span;
    std::int64_t most = all;
    // The tokens a group holds in a step: the W - 1 before the newest computed token (a window) or
    // the current chunk's up to C - 1, plus the step's new ones; one block more where the held
    // range does not start on a block's edge (always possible for a window; for chunks, when the
    // block size does not divide C).
    if (kind.attention.scope == AttentionScope::sliding) {
      most = blocks_for(std::min(span - 1 + step_tokens, tokens), block_size_) + 1;
    } else if (kind.attention.scope == AttentionScope::chunked) {
      most = blocks_for(std::min(span - 1 + step_tokens, tokens), block_size_) + (span % block_size_ != 0 ? 1 : 0);
    }
    sum += kind.groups * std::min(all, most);
  }
  return sum;
}

std::int64_t KvBlockLayout::layers_per_block(std::int64_t first, std::int64_t count) const {
  std::vector<std::int64_t> layers(static_cast<std::size_t>(groups()), 0);
  const auto begin = static_cast<std::size_t>(std::max<std::int64_t>(first, 0));
  const std::size_t end =
      std::min(group_of_layer_.size(), static_cast<std::size_t>(std::max<std::int64_t>(first + count, 0)));
  for (std::size_t i = begin; i < end; ++i) ++layers[static_cast<std::size_t>(group_of_layer_[i])];
  return layers.empty() ? 0 : *std::max_element(layers.begin(), layers.end());
}

}  // namespace roofline
