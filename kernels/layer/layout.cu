// The layer's moves of K/V and attention outputs (layer.hpp): the new keys and values into the
// cache, and head-major attention outputs back to token-major, each optionally quantised to e4m3.
#include <cstddef>

#include "common.cuh"

namespace roofline::kernels {
namespace {

using namespace layer_common;

// One thread per 16 bytes of k and of v of each token; into a 16-bit cache a copy, into an e4m3 one
// (e4m3_scale set) the quantised values, 8 bytes.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    kv_append_kernel(const uint4* __restrict__ qkv, void* __restrict__ k_cache, void* __restrict__ v_cache, int tokens,
                     int heads, int kv_heads, int head_dim, int tokens_per_sequence, int context, int first_position,
                     const float* __restrict__ e4m3_scale) {
  const int per_head = head_dim / 8;
  const int per_token = kv_heads * per_head;  // vectors of k (and of v) per token
  const int qkv_vectors = (heads + 2 * kv_heads) * per_head;
  const std::int64_t tasks = static_cast<std::int64_t>(tokens) * 2 * per_token;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= tasks) return;
  const int row = static_cast<int>(i / (2 * per_token));
  const int rest = static_cast<int>(i % (2 * per_token));
  const bool is_v = rest >= per_token;
  const int within = is_v ? rest - per_token : rest;  // kv head x per_head + chunk
  const int kvh = within / per_head;
  const int chunk = within % per_head;
  const int sequence = row / tokens_per_sequence;
  const int position = first_position + row % tokens_per_sequence;
  const uint4 value =
      qkv[static_cast<std::int64_t>(row) * qkv_vectors + heads * per_head + (is_v ? per_token : 0) + within];
  const std::int64_t slot =
      ((static_cast<std::int64_t>(sequence) * kv_heads + kvh) * context + position) * per_head + chunk;
  void* cache = is_v ? v_cache : k_cache;
  if (e4m3_scale == nullptr) {
    static_cast<uint4*>(cache)[slot] = value;
  } else {
    float f[8];
    unpack8<T>(value, f);
    static_cast<uint2*>(cache)[slot] = pack8_e4m3(f, *e4m3_scale);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    attn_merge_kernel(const uint4* __restrict__ o, void* __restrict__ out, int tokens, int heads, int head_dim,
                      const float* __restrict__ e4m3_scale) {
  const int per_head = head_dim / 8;
  const std::int64_t tasks = static_cast<std::int64_t>(tokens) * heads * per_head;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < tasks; i += stride) {
    // i enumerates the output [tokens][heads x per_head] in order (coalesced writes).
    const std::int64_t t = i / (static_cast<std::int64_t>(heads) * per_head);
    const int c = static_cast<int>(i % (static_cast<std::int64_t>(heads) * per_head));
    const int h = c / per_head;
    const int chunk = c % per_head;
    const uint4 value = o[(static_cast<std::int64_t>(h) * tokens + t) * per_head + chunk];
    if (e4m3_scale == nullptr) {
      static_cast<uint4*>(out)[i] = value;
    } else {
      float f[8];
      unpack8<T>(value, f);
      static_cast<uint2*>(out)[i] = pack8_e4m3(f, *e4m3_scale);
    }
  }
}

}  // namespace

void kv_append(StorageFormat type, const void* qkv, void* k_cache, void* v_cache, int tokens, HeadLayout layout,
               int tokens_per_sequence, int context, int first_position, Stream stream, const float* e4m3_scale) {
  detail::require(tokens >= 1 && tokens_per_sequence >= 1 && tokens % tokens_per_sequence == 0 &&
                      layout.head_dim % 8 == 0 && layout.kv_heads >= 1 && first_position >= 0 &&
                      first_position + tokens_per_sequence <= context,
                  "kv_append: bad shape or positions");
  for (const void* p : {qkv, static_cast<const void*>(k_cache), static_cast<const void*>(v_cache)}) {
    require_aligned(p, "kv_append");
  }
  const std::int64_t tasks = static_cast<std::int64_t>(tokens) * 2 * layout.kv_heads * (layout.head_dim / 8);
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    kv_append_kernel<T><<<grid_for(tasks), kThreads, 0, stream>>>(
        static_cast<const uint4*>(qkv), k_cache, v_cache, tokens, layout.heads, layout.kv_heads, layout.head_dim,
        tokens_per_sequence, context, first_position, e4m3_scale);
  });
  ROOFLINE_CHECK_LAUNCH("kv_append_kernel");
}

void attn_merge(StorageFormat type, const void* o, void* out, int tokens, int heads, int head_dim, Stream stream,
                const float* e4m3_scale) {
  detail::require(tokens >= 1 && heads >= 1 && head_dim % 8 == 0, "attn_merge: bad shape");
  require_aligned(o, "attn_merge");
  require_aligned(out, "attn_merge");
  const std::int64_t tasks = static_cast<std::int64_t>(tokens) * heads * (head_dim / 8);
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    attn_merge_kernel<T><<<grid_for(tasks), kThreads, 0, stream>>>(static_cast<const uint4*>(o), out, tokens, heads,
                                                                   head_dim, e4m3_scale);
  });
  ROOFLINE_CHECK_LAUNCH("attn_merge_kernel");
}

}  // namespace roofline::kernels
