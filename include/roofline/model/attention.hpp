#pragma once

// FLOPs and HBM traffic of scaled dot-product attention, O = softmax(Q K^T / sqrt(d)) V, in two
// implementations: standard (the scores S and probabilities P are materialized in HBM) and
// flash (tiled, online softmax; S and P never leave the chip). docs/formulas.md derives every
// formula and checks them against the worked numbers of the source texts.
//
// Like ops.hpp: allocation-free, and every function validates its shape (InputError on a size
// that is not positive, on heads not a multiple of kv_heads, on a causal shape with more queries
// than keys, on a byte count that does not fit in 64 bits).

#include <cstdint>
#include <string_view>

#include "roofline/core/dtype.hpp"
#include "roofline/model/ops.hpp"

namespace roofline {

enum class AttentionImpl : std::uint8_t { standard, flash };
[[nodiscard]] constexpr std::string_view name_of(AttentionImpl impl) {
  return impl == AttentionImpl::standard ? "standard" : "flash";
}

struct AttentionShape {
  std::int64_t batch = 1;
  std::int64_t heads = 1;       // query heads
  std::int64_t kv_heads = 1;    // K/V heads: = heads (MHA), a divisor of heads (GQA), 1 (MQA)
  std::int64_t head_dim = 128;  // Q and K
  // V and O; 0: head_dim. Wider Q and K than V is multi-head latent attention expanded for prefill
  // (DeepSeek-V3: 192 = 128 + 64 rotary, V 128).
  std::int64_t head_dim_v = 0;
  std::int64_t seq = 1;     // query length: the prompt for prefill, 1 (or the draft length) for decode
  std::int64_t kv_seq = 1;  // key/value length: equal to seq for prefill, the context for decode
  // Causal masking. The seq queries are the last seq of the kv_seq positions; query i (0-based)
  // attends to keys 0 .. kv_seq - seq + i, its own position (the diagonal) included.
  bool causal = false;
  DType act = DType::bf16;  // Q, O, standard attention's S and P; the type the math runs in
  DType kv = DType::bf16;   // K and V (the KV cache)
};

// Throws InputError if the shape is invalid (see the top of this file).
void check_attention_shape(const AttentionShape& shape);

// The width of V and O: head_dim_v, or head_dim where it is 0.
[[nodiscard]] std::int64_t value_head_dim(const AttentionShape& shape);

// Query-key pairs that one (batch, query head) evaluates usefully: seq x kv_seq, or with causal
// masking seq (kv_seq - seq) + seq (seq + 1) / 2 (for seq = kv_seq = N: N (N + 1) / 2, the
// diagonal counted; the half-square N^2 / 2 that some FLOP counts use leaves it out).
[[nodiscard]] double attention_pairs(const AttentionShape& shape);

// Rows of Q (tile q, Br) and of K/V (tile kv, Bc) that one thread block holds on chip.
struct FlashTiling {
  std::int64_t q = 128;
  std::int64_t kv = 128;
};
inline constexpr std::int64_t max_flash_tile = std::int64_t{1} << 20;

struct AttentionCost {
  // FLOPs: the useful matmul FLOPs, 4 d per query-key pair (2 d for Q K^T, 2 d for P V; 2 (d + d_v)
  // where V is d_v wide); the
  // softmax's few FLOPs per score run on the vector units and are left out, as in the FLOP
  // counts the FlashAttention papers report. Bytes: the HBM traffic.
  OpCost hbm;
  // Matmul FLOPs the implementation executes: standard computes the whole S (masked or not);
  // flash computes whole tiles up to the diagonal.
  double executed_flops = 0;
  // Standard: the traffic of the score passes (write S, read S, write P, read P); included in hbm.
  double scores_bytes = 0;
  // Flash: K/V bytes that all query tiles load into shared memory, and the part of them beyond
  // reading each KV head's K and V once (re-reads per query tile and per query head of a GQA
  // group). The re-reads are not in hbm: they come from L2 when it holds K/V (flash_kv_residency).
  double kv_load_bytes = 0;
  double kv_reread_bytes = 0;
};

// Standard attention, three kernels: S = Q K^T (scale folded in; reads Q, K, writes S);
// P = softmax(S) (mask folded in; reads S, writes P); O = P V (reads P, V, writes O). K and V
// are read once per query head: a batched matmul does not share loads between heads.
[[nodiscard]] AttentionCost standard_attention_cost(const AttentionShape& shape);

// Flash attention: Q read and O written once, K and V read once per KV head (shared by the
// query heads of a GQA group); per query tile K/V are loaded again (kv_reread_bytes).
[[nodiscard]] AttentionCost flash_attention_cost(const AttentionShape& shape, FlashTiling tiling);

// Shared memory one flash thread block needs: the Q tile, and K and V tiles double-buffered
// (the copy of the next K/V tile overlaps the math on the current one).
[[nodiscard]] double flash_smem_bytes(const AttentionShape& shape, FlashTiling tiling);

// The default tiling on a GPU: square tiles, the largest power of two from 256 down to 16 whose
// flash_smem_bytes fit in `smem_bytes_per_unit`; 16 if none fits (the caller can tell by
// comparing flash_smem_bytes with the budget).
[[nodiscard]] FlashTiling default_flash_tiling(const AttentionShape& shape, double smem_bytes_per_unit);

// Whether L2 can serve the K/V re-reads. Thread blocks are assumed to run one per SM, the query
// tiles and query heads of one KV head next to each other (the launch order of FlashAttention);
// the K and V of every KV head that has a block in flight form the working set.
struct KvResidency {
  double kv_heads_in_flight = 0;
  double working_set_bytes = 0;
  bool l2_holds = false;
};
[[nodiscard]] KvResidency flash_kv_residency(const AttentionShape& shape, FlashTiling tiling, int units,
                                             double l2_bytes);

// Multi-head latent attention's core, on one GPU's `heads` query heads. Decode runs it absorbed:
// the heads attend to the cached latent directly (scores over kv_lora_rank + rope values, outputs
// in the kv_lora_rank space), the latent read once for all heads. Prefill runs it expanded: W_UK
// and W_UV have decompressed per-head keys (nope + rope wide) and values (v wide), which flash
// attention reads once each. FLOPs are the matmul FLOPs, 2 x width per query-key pair and head for
// scores and again for values; attention_pairs() (attention.hpp) counts the pairs.
struct LatentAttentionShape {
  std::int64_t batch = 1;
  std::int64_t heads = 1;  // query heads on this GPU
  std::int64_t seq = 1;
  std::int64_t kv_seq = 1;
  bool causal = false;
  bool absorbed = true;
  std::int64_t kv_lora_rank = 512;
  std::int64_t qk_nope_head_dim = 128;
  std::int64_t qk_rope_head_dim = 64;
  std::int64_t v_head_dim = 128;
  DType act = DType::bf16;
  DType kv = DType::bf16;  // the cached latent (absorbed form)
};
[[nodiscard]] OpCost latent_attention_cost(const LatentAttentionShape& shape);

// The expanded (prefill) form as the flash attention it is: heads query and KV heads (MHA), Q and K
// nope + rope wide, V v_head_dim wide, every tensor in `act`. Throws std::logic_error on an absorbed
// shape.
[[nodiscard]] AttentionShape expanded_attention_shape(const LatentAttentionShape& shape);

}  // namespace roofline
