#pragma once

// The paged KV cache's block groups, as vLLM's hybrid KV cache manager forms them
// (vllm/v1/core/kv_cache_utils.py `_get_kv_cache_groups_uniform_page_size`,
// single_type_kv_cache_manager.py; docs/serve.md). The layers are sorted by their attention (full,
// sliding window W, chunks of C); each kind is split into groups of the same number of layers,
// every group its own block table over one shared pool of blocks. A block holds `block_size`
// tokens of one group's layers, so its bytes are those of `layers_per_group` layers. A group of
// windowed or chunked layers frees the blocks whose tokens no later query sees. A model whose
// layers all attend alike is one group of all its layers: a block holds every layer, as before.

#include <cstdint>
#include <vector>

#include "roofline/llm/model.hpp"

namespace roofline {

class KvBlockLayout {
 public:
  struct Kind {
    LayerAttention attention;  // rope cleared: NoPE and rope layers share a kind
    std::int64_t layers = 0;
    std::int64_t groups = 0;  // block tables of this kind: ceil(layers / layers_per_group)
  };

  KvBlockLayout(const ModelSpec& model, std::int64_t block_size);

  [[nodiscard]] std::int64_t block_size() const { return block_size_; }
  // vLLM's group size: the fewest layers of one kind, or the most where they are within 1.5x of it.
  [[nodiscard]] std::int64_t layers_per_group() const { return layers_per_group_; }
  [[nodiscard]] const std::vector<Kind>& kinds() const { return kinds_; }
  [[nodiscard]] std::int64_t groups() const;

  // Blocks a request holds, over all groups, once it has slots for `computed + tokens` tokens and
  // the blocks before each group's window at `computed` are freed (vLLM's remove_skipped_blocks,
  // then allocate_slots).
  [[nodiscard]] std::int64_t held(std::int64_t computed, std::int64_t tokens) const;
  // The most blocks a request of `tokens` tokens holds at any step, when a step runs at most
  // `step_tokens` of them (vLLM's max_memory_usage of each kind, summed over the groups).
  [[nodiscard]] std::int64_t peak(std::int64_t tokens, std::int64_t step_tokens) const;
  // Layers of one block on a GPU that holds layers [first, first + count): the most of any one
  // group there (vLLM deals each kind's layers to its groups in turn, layers[i::groups], so a
  // pipeline stage holds a share of every group).
  [[nodiscard]] std::int64_t layers_per_block(std::int64_t first, std::int64_t count) const;

 private:
  std::int64_t block_size_ = 0;
  std::int64_t layers_per_group_ = 0;
  std::vector<Kind> kinds_;
  std::vector<std::int64_t> group_of_layer_;  // each layer's group, numbered over all kinds
};

}  // namespace roofline
