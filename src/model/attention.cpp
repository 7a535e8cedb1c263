#include "roofline/model/attention.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "roofline/core/error.hpp"

namespace roofline {
namespace {

// Sums of tile counts reach (2^63)^2 for absurd shapes; 128-bit integers keep them exact.
__extension__ using u128 = unsigned __int128;

double as_double(std::int64_t value) {
  return static_cast<double>(value);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

// sum_{i=0}^{n-1} floor((a i + b) / m), in O(log m) steps (the Euclid-like reduction: take the
// whole multiples of m out of a and b, then swap the roles of the axes).
u128 floor_sum(u128 n, u128 m, u128 a, u128 b) {
  u128 sum = 0;
  while (true) {
    if (a >= m) {
      sum += n * (n - 1) / 2 * (a / m);
      a %= m;
    }
    if (b >= m) {
      sum += n * (b / m);
      b %= m;
    }
    const u128 y_max = a * n + b;
    if (y_max < m) break;
    n = y_max / m;
    b = y_max % m;
    std::swap(m, a);
  }
  return sum;
}

void check_tiling(FlashTiling tiling) {
  detail::check_size("flash attention", "tile q", tiling.q);
  detail::check_size("flash attention", "tile kv", tiling.kv);
  if (tiling.q > max_flash_tile || tiling.kv > max_flash_tile) {
    throw InputError(
        fmt::format("flash attention: tile {}x{} is larger than {} rows", tiling.q, tiling.kv, max_flash_tile));
  }
}

// Keys that flash loads, summed over the query tiles of one (batch, query head), and the
// query-key pairs its whole tiles compute.
struct FlashWalk {
  double keys_loaded = 0;
  double pairs_executed = 0;
};

FlashWalk flash_walk(const AttentionShape& s, FlashTiling t) {
  const std::int64_t nq = s.seq, nkv = s.kv_seq, bq = t.q, bc = t.kv;
  const std::int64_t q_tiles = ceil_div(nq, bq);
  if (!s.causal) return {as_double(q_tiles) * as_double(nkv), as_double(nq) * as_double(nkv)};

  // Query tile i (rows i*bq .. min((i+1)*bq, nq) - 1) needs keys 0 .. c_i - 1 with
  // c_i = (nkv - nq) + min((i+1)*bq, nq), so it walks ceil(c_i / bc) key tiles. Each full query
  // tile (i < q_tiles - 1) therefore loads bc * ceil(c_i / bc) keys, capped at nkv; the last one
  // has c = nkv and loads all nkv keys.
  const std::int64_t offset = nkv - nq;
  const std::int64_t full = q_tiles - 1;
  u128 first_keys = 0;
  if (full > 0) {
    // sum_{i=0}^{full-1} ceil((offset + (i+1) bq) / bc) = sum floor((bq i + offset + bq + bc - 1) / bc)
    const u128 tiles = floor_sum(static_cast<u128>(full), static_cast<u128>(bc), static_cast<u128>(bq),
                                 static_cast<u128>(offset) + static_cast<u128>(bq) + static_cast<u128>(bc) - 1);
    first_keys = tiles * static_cast<u128>(bc);
    // A tile that reaches the last, partial key tile loads only up to nkv: those are the query
    // tiles with c_i > (kv_tiles - 1) * bc.
    const std::int64_t remainder = nkv % bc;
    if (remainder != 0) {
      const std::int64_t partial = bc - remainder;      // kv_tiles * bc - nkv
      const std::int64_t last_start = nkv - remainder;  // (kv_tiles - 1) * bc
      const std::int64_t threshold = last_start - offset;
      const std::int64_t first = threshold < 0 ? 0 : threshold / bq;
      const std::int64_t count = std::max<std::int64_t>(0, full - first);
      first_keys -= static_cast<u128>(count) * static_cast<u128>(partial);
    }
  }
  const std::int64_t last_rows = nq - full * bq;
  FlashWalk walk;
  walk.keys_loaded = static_cast<double>(first_keys) + as_double(nkv);
  walk.pairs_executed = static_cast<double>(first_keys * static_cast<u128>(bq)) + as_double(last_rows) * as_double(nkv);
  return walk;
}

}  // namespace

void check_attention_shape(const AttentionShape& s) {
  detail::check_size("attention", "batch", s.batch);
  detail::check_size("attention", "heads", s.heads);
  detail::check_size("attention", "kv_heads", s.kv_heads);
  detail::check_size("attention", "head_dim", s.head_dim);
  if (s.head_dim_v != 0) detail::check_size("attention", "head_dim_v", s.head_dim_v);
  detail::check_size("attention", "seq", s.seq);
  detail::check_size("attention", "kv_seq", s.kv_seq);
  if (s.heads % s.kv_heads != 0) {
    throw InputError(
        fmt::format("attention: heads = {} is not a multiple of kv_heads = {} (each KV head serves a "
                    "whole group of query heads)",
                    s.heads, s.kv_heads));
  }
  if (s.causal && s.seq > s.kv_seq) {
    throw InputError(
        fmt::format("attention: causal with seq = {} > kv_seq = {} (the queries are the last seq of the "
                    "kv_seq positions)",
                    s.seq, s.kv_seq));
  }
}

std::int64_t value_head_dim(const AttentionShape& s) {
  return s.head_dim_v == 0 ? s.head_dim : s.head_dim_v;
}

double attention_pairs(const AttentionShape& s) {
  const double nq = as_double(s.seq), nkv = as_double(s.kv_seq);
  if (!s.causal) return nq * nkv;
  return nq * (nkv - nq) + nq * (nq + 1) / 2;
}

AttentionCost standard_attention_cost(const AttentionShape& s) {
  check_attention_shape(s);
  const double heads = as_double(s.batch) * as_double(s.heads);
  const double d = as_double(s.head_dim), dv = as_double(value_head_dim(s));
  const double nq = as_double(s.seq), nkv = as_double(s.kv_seq);
  const double act = bytes_per_element(s.act), kv = bytes_per_element(s.kv);
  const double q = heads * nq * d * act;               // Q
  const double o = heads * nq * dv * act;              // O
  const double kv_read = heads * nkv * (d + dv) * kv;  // K and V: once per query head
  const double scores = heads * nq * nkv * act;        // one pass over S or P
  AttentionCost c;
  c.hbm.flops = 2 * (d + dv) * heads * attention_pairs(s);
  c.hbm.bytes_read = q + kv_read + 2 * scores;  // Q, K, V; S (by softmax), P (by P V)
  c.hbm.bytes_written = 2 * scores + o;         // S, P, O
  c.executed_flops = 2 * (d + dv) * heads * nq * nkv;
  c.scores_bytes = 4 * scores;
  detail::check_bytes("attention (standard)", c.hbm.bytes());
  return c;
}

AttentionCost flash_attention_cost(const AttentionShape& s, FlashTiling t) {
  check_attention_shape(s);
  check_tiling(t);
  const double query_heads = as_double(s.batch) * as_double(s.heads);
  const double kv_heads = as_double(s.batch) * as_double(s.kv_heads);
  const double d = as_double(s.head_dim), dv = as_double(value_head_dim(s));
  const double nq = as_double(s.seq), nkv = as_double(s.kv_seq);
  const double act = bytes_per_element(s.act), kv = bytes_per_element(s.kv);
  const double kv_once = kv_heads * nkv * (d + dv) * kv;
  AttentionCost c;
  c.hbm.flops = 2 * (d + dv) * query_heads * attention_pairs(s);
  c.hbm.bytes_read = query_heads * nq * d * act + kv_once;
  c.hbm.bytes_written = query_heads * nq * dv * act;
  detail::check_bytes("attention (flash)", c.hbm.bytes());
  const FlashWalk walk = flash_walk(s, t);
  c.executed_flops = 2 * (d + dv) * query_heads * walk.pairs_executed;
  c.kv_load_bytes = query_heads * walk.keys_loaded * (d + dv) * kv;
  c.kv_reread_bytes = c.kv_load_bytes - kv_once;
  detail::check_bytes("attention (flash K/V tile loads)", c.kv_load_bytes);
  return c;
}

double flash_smem_bytes(const AttentionShape& s, FlashTiling t) {
  const double d = as_double(s.head_dim), dv = as_double(value_head_dim(s));
  return as_double(t.q) * d * bytes_per_element(s.act) + 2 * as_double(t.kv) * (d + dv) * bytes_per_element(s.kv);
}

FlashTiling default_flash_tiling(const AttentionShape& s, double smem_bytes_per_unit) {
  for (std::int64_t tile : {256, 128, 64, 32}) {
    if (flash_smem_bytes(s, {tile, tile}) <= smem_bytes_per_unit) return {tile, tile};
  }
  return {16, 16};
}

KvResidency flash_kv_residency(const AttentionShape& s, FlashTiling t, int units, double l2_bytes) {
  check_attention_shape(s);
  check_tiling(t);
  const std::int64_t group = s.heads / s.kv_heads;
  // Blocks that share one KV head's K and V, launched next to each other.
  const double blocks_per_kv_head = as_double(group) * as_double(ceil_div(s.seq, t.q));
  const double in_flight = std::max(1, units);
  // A window of `units` consecutive blocks touches at most ceil((units - 1) / c) + 1 runs of c.
  const double touched = std::ceil((in_flight - 1) / blocks_per_kv_head) + 1;
  KvResidency r;
  r.kv_heads_in_flight = std::min(touched, as_double(s.batch) * as_double(s.kv_heads));
  r.working_set_bytes =
      r.kv_heads_in_flight * as_double(s.kv_seq) * as_double(s.head_dim + value_head_dim(s)) * bytes_per_element(s.kv);
  r.l2_holds = r.working_set_bytes <= l2_bytes;
  return r;
}

OpCost latent_attention_cost(const LatentAttentionShape& s) {
  AttentionShape pairs_shape;
  pairs_shape.batch = s.batch;
  pairs_shape.heads = s.heads;
  pairs_shape.kv_heads = 1;
  pairs_shape.head_dim = s.kv_lora_rank + s.qk_rope_head_dim;
  pairs_shape.seq = s.seq;
  pairs_shape.kv_seq = s.kv_seq;
  pairs_shape.causal = s.causal;
  pairs_shape.act = s.act;
  pairs_shape.kv = s.kv;
  check_attention_shape(pairs_shape);
  const double pairs = attention_pairs(pairs_shape);  // per (batch, head)
  const auto batch_heads = static_cast<double>(s.batch * s.heads);
  const auto queries = static_cast<double>(s.batch * s.seq * s.heads);
  const double act = bytes_per_element(s.act);
  OpCost cost;
  if (s.absorbed) {
    const auto latent = static_cast<double>(s.kv_lora_rank + s.qk_rope_head_dim);
    const auto values = static_cast<double>(s.kv_lora_rank);
    cost.flops = batch_heads * pairs * 2.0 * (latent + values);
    cost.bytes_read =
        queries * latent * act + static_cast<double>(s.batch * s.kv_seq) * latent * bytes_per_element(s.kv);
    cost.bytes_written = queries * values * act;
  } else {
    // Decompressed per-head keys and values, read once each: flash attention's own count.
    cost = flash_attention_cost(expanded_attention_shape(s), FlashTiling{}).hbm;
  }
  detail::check_bytes("latent attention", cost.bytes());
  return cost;
}

AttentionShape expanded_attention_shape(const LatentAttentionShape& s) {
  if (s.absorbed) throw std::logic_error("expanded_attention_shape: the shape is the absorbed (decode) form");
  AttentionShape shape;
  shape.batch = s.batch;
  shape.heads = s.heads;
  shape.kv_heads = s.heads;
  shape.head_dim = s.qk_nope_head_dim + s.qk_rope_head_dim;
  shape.head_dim_v = s.v_head_dim;
  shape.seq = s.seq;
  shape.kv_seq = s.kv_seq;
  shape.causal = s.causal;
  shape.act = s.act;
  shape.kv = s.act;
  return shape;
}

}  // namespace roofline
