// Decode attention over a KV cache, flash-decoding style (layer.hpp): the split kernel and the
// combine of the splits, over a 16-bit or an e4m3 cache.
#include <cmath>
#include <cstddef>
#include <type_traits>

#include "../device_utils.cuh"
#include "common.cuh"
#include "roofline/model/kernel_tiles.hpp"

namespace roofline::kernels {
namespace {

using namespace layer_common;

// ---- decode attention ------------------------------------------------------------------------
//
// Block (sequence b, KV head, split s) of 4 warps. Rows of the mma tile are the G query heads of
// the KV head (G <= 16; rows G..15 are zero and never written). Q (16 x 128) is loaded once into
// shared memory and kept in registers as A fragments; K/V tiles of 64 keys stream through three
// shared-memory stages (cp.async); warp w takes keys 16w .. 16w + 15 of each tile: S = Q K^T (two
// n8 tiles), masked, online softmax in base 2, P from registers as the A operand of O += P V --
// the flash kernel's fragment handling (flash.cu) with the warp's 16 keys in place of a key tile.
// At the end the four warps' (max, sum, O) meet in shared memory and the block writes one
// unnormalised partial per head; decode_combine_kernel merges the splits.
//
// An e4m3 cache streams through stages of its own (64 keys x 128 bytes), the mma in fp16 (exact for
// e4m3). K is read from its stage into the mma's B fragments directly (the head dimension permuted
// so that a lane's pair is four adjacent bytes); each V tile is widened into one fp16 tile (the
// layout above) that ldmatrix.trans reads. The per-tensor scale multiplies the scores (folded into
// the softmax scale) and the partial outputs, in fp32.
constexpr int kDecodeD = 128;
constexpr int kDecodeBN = kernel_tiles::decode_attention_block_n;
constexpr int kDecodeWarps = kernel_tiles::decode_attention_warps;
constexpr int kDecodeStages = kernel_tiles::decode_attention_stages;
constexpr int kDecodeThreads = 32 * kDecodeWarps;
static_assert(kDecodeBN == 16 * kDecodeWarps, "each warp takes 16 keys of a tile");
constexpr int kDecodeRowBytes = kDecodeD * 2;
constexpr int kDecodeQBytes = 16 * kDecodeRowBytes;
constexpr int kDecodeTileBytes = kDecodeBN * kDecodeRowBytes;
constexpr int kDecodeSmemBytes = kDecodeQBytes + 2 * kDecodeStages * kDecodeTileBytes;
// The combine scratch reuses the K/V stages: O of 4 warps x 16 rows x 128 fp32, then max and sum.
constexpr int kDecodeScratchBytes = kDecodeWarps * 16 * kDecodeD * 4 + 2 * kDecodeWarps * 16 * 4;
static_assert(kDecodeScratchBytes <= 2 * kDecodeStages * kDecodeTileBytes);
// An e4m3 cache: Q, one widened V tile, then the e4m3 stages (the scratch spans them). 68 KB: three
// blocks per SM where the 16-bit kernel fits two.
constexpr int kDecodeFp8RowBytes = kDecodeD;
constexpr int kDecodeFp8TileBytes = kDecodeBN * kDecodeFp8RowBytes;
constexpr int kDecodeFp8SmemBytes = kDecodeQBytes + kDecodeTileBytes + 2 * kDecodeStages * kDecodeFp8TileBytes;
static_assert(kDecodeScratchBytes <= kDecodeTileBytes + 2 * kDecodeStages * kDecodeFp8TileBytes);

__device__ __forceinline__ uint32_t decode_swizzled(int row, int chunk) {
  return static_cast<uint32_t>(row * kDecodeRowBytes + ((chunk ^ (row & 7)) * 16));
}

// Rows row0 .. row0 + rows - 1 of a [limit][128] matrix into a swizzled tile; rows at or past
// `limit` are zero-filled.
__device__ __forceinline__ void decode_load_rows(uint32_t dst, const void* src_void, int row0, int rows, int limit,
                                                 int tid) {
  const auto* src = static_cast<const uint16_t*>(src_void);
  constexpr int kChunks = kDecodeD / 8;
#pragma unroll 1
  for (int idx = tid; idx < rows * kChunks; idx += kDecodeThreads) {
    const int r = idx / kChunks;
    const int c = idx % kChunks;
    const bool valid = row0 + r < limit;
    const uint16_t* from = src + (valid ? static_cast<std::size_t>(row0 + r) * kDecodeD + c * 8 : 0);
    ptx::cp_async_16(dst + decode_swizzled(r, c), from, valid);
  }
}

// Rows row0 .. row0 + rows - 1 of a [limit][128] e4m3 matrix into a tile of 128-byte rows, its
// 16-byte chunks in place (V: widened row by row) or swizzled as the 16-bit tiles are (K: read four
// bytes a lane, eight rows at a time, without bank conflicts); rows at or past `limit` are
// zero-filled.
template <bool Swizzled>
__device__ __forceinline__ void decode_load_fp8_rows(uint32_t dst, const void* src_void, int row0, int rows, int limit,
                                                     int tid) {
  const auto* src = static_cast<const unsigned char*>(src_void);
  constexpr int kChunks = kDecodeFp8RowBytes / 16;
#pragma unroll 1
  for (int idx = tid; idx < rows * kChunks; idx += kDecodeThreads) {
    const int r = idx / kChunks;
    const int c = idx % kChunks;
    const bool valid = row0 + r < limit;
    const unsigned char* from = src + (valid ? static_cast<std::size_t>(row0 + r) * kDecodeFp8RowBytes + c * 16 : 0);
    ptx::cp_async_16(dst + r * kDecodeFp8RowBytes + (Swizzled ? c ^ (r & 7) : c) * 16, from, valid);
  }
}

// A whole tile of kDecodeBN rows, every one before the cache's end, of RowBytes-byte rows in 16-byte
// chunks (the 16-bit layout of decode_swizzled, or an e4m3 tile of decode_load_fp8_rows). Thread t
// copies chunk t % chunks of rows t / chunks + passes x i: the rows a thread copies differ by a
// multiple of 8, so their swizzle (row & 7) is the thread's own, and each copy is one instruction at
// a constant offset from the first, where the loop over (row, chunk) indices above spends about 18
// on its divisions, bounds and swizzles.
template <int RowBytes, bool Swizzled>
__device__ __forceinline__ void decode_load_whole_tile(uint32_t dst, const void* src_void, int first_row, int tid) {
  constexpr int kChunks = RowBytes / 16;
  constexpr int kPassRows = kDecodeThreads / kChunks;
  static_assert(kPassRows % 8 == 0 && kDecodeBN % kPassRows == 0, "a thread's rows share their swizzle");
  const int chunk = tid % kChunks;
  const int row = tid / kChunks;
  const uint32_t to = dst + row * RowBytes + (Swizzled ? chunk ^ (row & 7) : chunk) * 16;
  const auto* from =
      static_cast<const unsigned char*>(src_void) + static_cast<std::size_t>(first_row + row) * RowBytes + chunk * 16;
#pragma unroll
  for (int pass = 0; pass < kDecodeBN / kPassRows; ++pass) {
    ptx::cp_async_16(to + pass * kPassRows * RowBytes, from + pass * kPassRows * RowBytes, true);
  }
}

// An e4m3 tile (decode_load_fp8_rows) widened into a swizzled fp16 tile: each thread takes 16
// bytes (16 values of one row), which become chunks 2c and 2c + 1 of the row. fp16 holds every
// e4m3 value exactly, and Hopper converts two of them in one instruction (cvt.rn.f16x2.e4m3x2).
__device__ __forceinline__ uint32_t e4m3x2_to_half2(uint32_t word, int pair) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(word >> (16 * pair)), __NV_E4M3);
  return static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
}
__device__ __forceinline__ void decode_widen_fp8_tile(uint32_t dst, const unsigned char* src, int tid) {
  constexpr int kChunks = kDecodeFp8RowBytes / 16;
#pragma unroll
  for (int idx = tid; idx < kDecodeBN * kChunks; idx += kDecodeThreads) {
    const int r = idx / kChunks;
    const int c = idx % kChunks;
    const uint4 raw = *reinterpret_cast<const uint4*>(src + r * kDecodeFp8RowBytes + c * 16);
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst + decode_swizzled(r, 2 * c)),
                 "r"(e4m3x2_to_half2(raw.x, 0)), "r"(e4m3x2_to_half2(raw.x, 1)), "r"(e4m3x2_to_half2(raw.y, 0)),
                 "r"(e4m3x2_to_half2(raw.y, 1))
                 : "memory");
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst + decode_swizzled(r, 2 * c + 1)),
                 "r"(e4m3x2_to_half2(raw.z, 0)), "r"(e4m3x2_to_half2(raw.z, 1)), "r"(e4m3x2_to_half2(raw.w, 0)),
                 "r"(e4m3x2_to_half2(raw.w, 1))
                 : "memory");
  }
}

// q's 16-bit pairs as fp16 pairs: exact for 2^-14 <= |q| < 65520, where fp16 has every bf16 value.
template <typename T>
__device__ __forceinline__ uint32_t to_half2(uint32_t pair) {
  if constexpr (ElementFormat<T>::value == StorageFormat::fp16) {
    return pair;
  } else {
    const float2 v = TraitsOf<T>::pair_to_float2(pair);
    return TraitsOf<__half>::pack(v.x, v.y);
  }
}

// T: the 16-bit format of q and the output; Cache: T, or __nv_fp8_e4m3 with *kv_scale.
template <typename T, typename Cache>
__global__ void __launch_bounds__(kDecodeThreads)
    decode_attention_kernel(const T* __restrict__ qkv, const Cache* __restrict__ k_cache,
                            const Cache* __restrict__ v_cache, const float* __restrict__ kv_scale,
                            float* __restrict__ part_o, float* __restrict__ part_ml, T* __restrict__ out, int heads,
                            int kv_heads, int context, int tiles_per_split, int splits, float scale_log2) {
  constexpr bool kFp8 = ElementFormat<Cache>::value == StorageFormat::fp8_e4m3;
  // The mma's operand format: q's over a 16-bit cache; fp16 over an e4m3 one, which widens to fp16
  // in one instruction per pair (bf16 would take several), with q rounded to fp16 once (exact in
  // its normal range) and P in fp16 (values in [0, 1]: finer than bf16).
  using M = std::conditional_t<kFp8, __half, T>;
  static_assert(kFp8 || ElementFormat<Cache>::value == ElementFormat<T>::value, "a 16-bit cache is in q's format");
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t smem_q = ptx::smem_addr(smem);
  // 16-bit: the K and V stages; e4m3: the widened V tile, then the e4m3 K and V stages (K is read
  // from its stage: decode_fp8_key_pair).
  const uint32_t smem_k = smem_q + kDecodeQBytes;
  const uint32_t smem_v = kFp8 ? smem_q + kDecodeQBytes : smem_k + kDecodeStages * kDecodeTileBytes;
  const uint32_t smem_k8 = smem_q + kDecodeQBytes + kDecodeTileBytes;
  const uint32_t smem_v8 = smem_k8 + kDecodeStages * kDecodeFp8TileBytes;
  const unsigned char* smem_v8_ptr = smem + kDecodeQBytes + kDecodeTileBytes + kDecodeStages * kDecodeFp8TileBytes;
  // The cache's scale, folded into the scores' and applied to the partial outputs.
  const float cache_scale = kFp8 ? __ldg(kv_scale) : 1.0f;
  scale_log2 *= cache_scale;
  // A tile wholly before the cache's end (all but a split's last, at most) takes the whole-tile copies.
  const auto load_tile = [&](int stage, int first_row, const Cache* k_rows, const Cache* v_rows, int local_limit) {
    if (first_row + kDecodeBN <= local_limit) {
      const int t = static_cast<int>(threadIdx.x);
      if constexpr (kFp8) {
        decode_load_whole_tile<kDecodeFp8RowBytes, true>(smem_k8 + stage * kDecodeFp8TileBytes, k_rows, first_row, t);
        decode_load_whole_tile<kDecodeFp8RowBytes, false>(smem_v8 + stage * kDecodeFp8TileBytes, v_rows, first_row, t);
      } else {
        decode_load_whole_tile<kDecodeRowBytes, true>(smem_k + stage * kDecodeTileBytes, k_rows, first_row, t);
        decode_load_whole_tile<kDecodeRowBytes, true>(smem_v + stage * kDecodeTileBytes, v_rows, first_row, t);
      }
      return;
    }
    if constexpr (kFp8) {
      decode_load_fp8_rows<true>(smem_k8 + stage * kDecodeFp8TileBytes, k_rows, first_row, kDecodeBN, local_limit,
                                 static_cast<int>(threadIdx.x));
      decode_load_fp8_rows<false>(smem_v8 + stage * kDecodeFp8TileBytes, v_rows, first_row, kDecodeBN, local_limit,
                                  static_cast<int>(threadIdx.x));
    } else {
      decode_load_rows(smem_k + stage * kDecodeTileBytes, k_rows, first_row, kDecodeBN, local_limit,
                       static_cast<int>(threadIdx.x));
      decode_load_rows(smem_v + stage * kDecodeTileBytes, v_rows, first_row, kDecodeBN, local_limit,
                       static_cast<int>(threadIdx.x));
    }
  };

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % 32;
  const int warp = tid / 32;
  const int split = static_cast<int>(blockIdx.x);
  const int b = static_cast<int>(blockIdx.y) / kv_heads;
  const int kvh = static_cast<int>(blockIdx.y) % kv_heads;
  const int group = heads / kv_heads;
  const int qkv_stride = (heads + 2 * kv_heads) * kDecodeD;
  const int key_begin = split * tiles_per_split * kDecodeBN;
  const int key_end = min(context, key_begin + tiles_per_split * kDecodeBN);
  const int tiles = (key_end - key_begin + kDecodeBN - 1) / kDecodeBN;
  const T* q_rows = qkv + static_cast<std::size_t>(b) * qkv_stride + static_cast<std::size_t>(kvh) * group * kDecodeD;
  const std::size_t head_offset = (static_cast<std::size_t>(b) * kv_heads + kvh) * context * kDecodeD;
  // Key rows relative to key_begin: the tile loads address [key_begin + row].
  const Cache* k_rows = k_cache + head_offset + static_cast<std::size_t>(key_begin) * kDecodeD;
  const Cache* v_rows = v_cache + head_offset + static_cast<std::size_t>(key_begin) * kDecodeD;
  const int local_limit = context - key_begin;  // rows past the cache's end are zero-filled (and masked)

  decode_load_rows(smem_q, q_rows, 0, 16, group, tid);
  ptx::cp_async_commit();
#pragma unroll
  for (int j = 0; j < kDecodeStages - 1; ++j) {
    if (j < tiles) load_tile(j, j * kDecodeBN, k_rows, v_rows, local_limit);
    ptx::cp_async_commit();
  }
  // The combine (a programmatic dependent launch) may be scheduled now: it waits for this grid's end.
  device::grid_dependency_launch();
  ptx::cp_async_wait<kDecodeStages - 1>();  // Q has landed
  __syncthreads();
  uint32_t q_frag[kDecodeD / 16][4];
#pragma unroll
  for (int kk = 0; kk < kDecodeD / 16; ++kk) {
    if constexpr (kFp8) {
      // The head dimension permuted within each 16: fragment index 2t, 2t + 1 (8 + 2t, 9 + 2t) is
      // dimension 4t, 4t + 1 (4t + 2, 4t + 3), so that a lane's K pair is four adjacent bytes of a
      // key (decode_fp8_key_pair); q takes the same permutation and the dot products are unchanged.
      const int g = lane / 4;
      const int t = lane % 4;
      const uint32_t offset = 8 * static_cast<uint32_t>(t % 2);
      const uint32_t top = smem_q + decode_swizzled(g, 2 * kk + t / 2) + offset;
      const uint32_t bottom = smem_q + decode_swizzled(g + 8, 2 * kk + t / 2) + offset;
      q_frag[kk][0] = to_half2<T>(ptx::ld_shared_u32(top));
      q_frag[kk][1] = to_half2<T>(ptx::ld_shared_u32(bottom));
      q_frag[kk][2] = to_half2<T>(ptx::ld_shared_u32(top + 4));
      q_frag[kk][3] = to_half2<T>(ptx::ld_shared_u32(bottom + 4));
    } else {
      ptx::ldmatrix_x4(q_frag[kk], smem_q + decode_swizzled(lane % 16, kk * 2 + lane / 16));
    }
  }

  float o_acc[kDecodeD / 8][4] = {};
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.0f, 0.0f};

  // One barrier a tile (two over an e4m3 cache, whose V is widened in shared memory): it publishes
  // tile j and tells that every warp is done with tile j - 1, whose stage the load after it refills;
  // tiles j + 1 and j + 2 are in flight while j is used. With a second barrier at each tile's end and
  // the loads by index (f2fb4df), 1.01-1.31x the time: most over an e4m3 cache from batch 16
  // (docs/results/2026-12-05-h200-decode-lean).
  for (int j = 0; j < tiles; ++j) {
    ptx::cp_async_wait<kDecodeStages - 2>();  // tile j has landed
    __syncthreads();
    const int ahead = j + kDecodeStages - 1;
    if (ahead < tiles) load_tile(ahead % kDecodeStages, ahead * kDecodeBN, k_rows, v_rows, local_limit);
    ptx::cp_async_commit();
    if constexpr (kFp8) {
      // Every warp finished the previous widened tile before the barrier above.
      decode_widen_fp8_tile(smem_v, smem_v8_ptr + (j % kDecodeStages) * kDecodeFp8TileBytes, tid);
      __syncthreads();
    }

    const uint32_t tile_k =
        kFp8 ? smem_k8 + (j % kDecodeStages) * kDecodeFp8TileBytes : smem_k + (j % kDecodeStages) * kDecodeTileBytes;
    const uint32_t tile_v = kFp8 ? smem_v : smem_v + (j % kDecodeStages) * kDecodeTileBytes;
    const int first_key = key_begin + j * kDecodeBN + warp * 16;

    float s[2][4] = {};
#pragma unroll
    for (int kk = 0; kk < kDecodeD / 16; ++kk) {
      uint32_t bk[4];
      if constexpr (kFp8) {
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) {
          // Key 16w + 8nt + g (row & 7 = g), bytes 4t .. 4t + 3 of its chunk kk (swizzled).
          const int row = warp * 16 + nt * 8 + lane / 4;
          const uint32_t word =
              ptx::ld_shared_u32(tile_k + row * kDecodeFp8RowBytes + ((kk ^ (row & 7)) * 16) + 4 * (lane % 4));
          bk[2 * nt] = e4m3x2_to_half2(word, 0);
          bk[2 * nt + 1] = e4m3x2_to_half2(word, 1);
        }
      } else {
        ptx::ldmatrix_x4(bk,
                         tile_k + decode_swizzled(warp * 16 + (lane / 16) * 8 + (lane % 8), kk * 2 + (lane / 8) % 2));
      }
      ptx::mma_16816<M>(s[0], q_frag[kk], bk[0], bk[1]);
      ptx::mma_16816<M>(s[1], q_frag[kk], bk[2], bk[3]);
    }
    if (first_key + 16 > key_end) {
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (first_key + nt * 8 + (lane % 4) * 2 + (e % 2) >= key_end) s[nt][e] = -INFINITY;
        }
      }
    }
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      float mx = fmaxf(fmaxf(s[0][2 * hh], s[0][2 * hh + 1]), fmaxf(s[1][2 * hh], s[1][2 * hh + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float new_max = fmaxf(row_max[hh], mx * scale_log2);
      // A row with no unmasked key yet keeps max -inf; subtract 0 then so that no inf - inf NaN appears.
      const float base = new_max == -INFINITY ? 0.0f : new_max;
      const float alpha = exp2f(row_max[hh] - base);
      row_max[hh] = new_max;
      float sum = 0.0f;
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float p = exp2f(fmaf(s[nt][2 * hh + e], scale_log2, -base));
          s[nt][2 * hh + e] = p;
          sum += p;
        }
      }
      row_sum[hh] = row_sum[hh] * alpha + sum;  // per-lane partial; the 4 lanes of a row are summed at the end
#pragma unroll
      for (int dt = 0; dt < kDecodeD / 8; ++dt) {
        o_acc[dt][2 * hh] *= alpha;
        o_acc[dt][2 * hh + 1] *= alpha;
      }
    }
    uint32_t p[4];
    p[0] = TraitsOf<M>::pack(s[0][0], s[0][1]);
    p[1] = TraitsOf<M>::pack(s[0][2], s[0][3]);
    p[2] = TraitsOf<M>::pack(s[1][0], s[1][1]);
    p[3] = TraitsOf<M>::pack(s[1][2], s[1][3]);
#pragma unroll
    for (int dp = 0; dp < kDecodeD / 16; ++dp) {
      uint32_t bv[4];
      ptx::ldmatrix_x4_trans(
          bv, tile_v + decode_swizzled(warp * 16 + ((lane / 8) % 2) * 8 + (lane % 8), dp * 2 + lane / 16));
      ptx::mma_16816<M>(o_acc[2 * dp], p, bv[0], bv[1]);
      ptx::mma_16816<M>(o_acc[2 * dp + 1], p, bv[2], bv[3]);
    }
  }
  ptx::cp_async_wait<0>();
  __syncthreads();

  // The four warps' partial results meet in shared memory (over the K/V stages).
  float* o_scratch = reinterpret_cast<float*>(smem + kDecodeQBytes);  // [warp][16][128]
  float* m_scratch = o_scratch + kDecodeWarps * 16 * kDecodeD;        // [warp][16]
  float* l_scratch = m_scratch + kDecodeWarps * 16;                   // [warp][16]
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    float total = row_sum[hh];
    total += __shfl_xor_sync(0xffffffffu, total, 1);
    total += __shfl_xor_sync(0xffffffffu, total, 2);
    const int row = lane / 4 + 8 * hh;
    float* o_row = o_scratch + (warp * 16 + row) * kDecodeD;
#pragma unroll
    for (int dt = 0; dt < kDecodeD / 8; ++dt) {
      o_row[dt * 8 + (lane % 4) * 2] = o_acc[dt][2 * hh];
      o_row[dt * 8 + (lane % 4) * 2 + 1] = o_acc[dt][2 * hh + 1];
    }
    if (lane % 4 == 0) {
      m_scratch[warp * 16 + row] = row_max[hh];
      l_scratch[warp * 16 + row] = total;
    }
  }
  __syncthreads();
  for (int idx = tid; idx < group * kDecodeD; idx += kDecodeThreads) {
    const int row = idx / kDecodeD;
    const int col = idx % kDecodeD;
    float top = -INFINITY;
#pragma unroll
    for (int w = 0; w < kDecodeWarps; ++w) top = fmaxf(top, m_scratch[w * 16 + row]);
    float o = 0.0f;
    float l = 0.0f;
    if (top != -INFINITY) {
#pragma unroll
      for (int w = 0; w < kDecodeWarps; ++w) {
        const float weight = exp2f(m_scratch[w * 16 + row] - top);  // 0 for a warp that saw no key
        o += weight * o_scratch[(w * 16 + row) * kDecodeD + col];
        l += weight * l_scratch[w * 16 + row];
      }
    }
    const int head = kvh * group + row;
    if (splits == 1) {
      // The whole context in this block: normalise and write the output here, as the combine
      // would (its one split's weight is 1), and skip the combine's launch and the partials.
      out[(static_cast<std::size_t>(b) * heads + head) * kDecodeD + col] =
          TraitsOf<T>::from_float(l > 0.0f ? o * cache_scale / l : 0.0f);
      continue;
    }
    const std::size_t slot = (static_cast<std::size_t>(b) * heads + head) * splits + split;
    part_o[slot * kDecodeD + col] = o * cache_scale;
    if (col == 0) {
      part_ml[2 * slot] = top;
      part_ml[2 * slot + 1] = l;
    }
  }
}

// One block of 128 threads per (sequence, head), a thread per output column: merges the splits'
// partials (base-2 maxima) kCombineLoads splits at a time, an online softmax over the batches, so that
// a batch's loads (its maxima, sums and this column's outputs) are in flight together. Read one split
// after the other, the merge was a chain of dependent L2 round trips: batch 1 at 8192 keys (32
// splits) took 17.0 us, 14.4 with this merge (docs/results/2026-12-04-h200-decode-combine). Launched
// as the split kernel's programmatic dependent: its blocks are scheduled while the split kernel's last
// blocks still run and wait (griddepcontrol.wait) for its writes.
constexpr int kCombineLoads = 8;
template <typename T>
__global__ void __launch_bounds__(kDecodeD)
    decode_combine_kernel(const float* __restrict__ part_o, const float2* __restrict__ part_ml, T* __restrict__ out,
                          int heads, int splits) {
  const int bh = static_cast<int>(blockIdx.x);
  const int col = static_cast<int>(threadIdx.x);
  const std::size_t first = static_cast<std::size_t>(bh) * splits;
  device::grid_dependency_wait();
  float top = -INFINITY;  // the largest maximum so far; o and l are scaled to it
  float o = 0.0f;
  float l = 0.0f;
  for (int s0 = 0; s0 < splits; s0 += kCombineLoads) {
    float2 ml[kCombineLoads];
    float partial[kCombineLoads];
#pragma unroll
    for (int u = 0; u < kCombineLoads; ++u) {
      const bool in = s0 + u < splits;
      ml[u] = in ? part_ml[first + s0 + u] : make_float2(-INFINITY, 0.0f);
      partial[u] = in ? part_o[(first + s0 + u) * kDecodeD + col] : 0.0f;
    }
    float batch_top = top;
#pragma unroll
    for (int u = 0; u < kCombineLoads; ++u) batch_top = fmaxf(batch_top, ml[u].x);
    if (batch_top == -INFINITY) continue;          // no split so far saw a key
    const float rescale = exp2f(top - batch_top);  // 0 while top is still -inf
    o *= rescale;
    l *= rescale;
#pragma unroll
    for (int u = 0; u < kCombineLoads; ++u) {
      const float weight = exp2f(ml[u].x - batch_top);  // 0 for a split that saw no key
      o += weight * partial[u];
      l += weight * ml[u].y;
    }
    top = batch_top;
  }
  const int b = bh / heads;
  const int h = bh % heads;
  out[(static_cast<std::size_t>(b) * heads + h) * kDecodeD + col] = TraitsOf<T>::from_float(l > 0.0f ? o / l : 0.0f);
}

// cache[i] = e4m3(values[i] / scale), values[i] = cache[i] x scale (layer.hpp's quantize_kv_fp8).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    quantize_kv_fp8_kernel(T* __restrict__ values, __nv_fp8_e4m3* __restrict__ cache, std::size_t count,
                           const float* __restrict__ scale) {
  const float s = *scale;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const __nv_fp8_e4m3 stored(TraitsOf<T>::to_float(values[i]) / s);
    cache[i] = stored;
    values[i] = TraitsOf<T>::from_float(static_cast<float>(stored) * s);
  }
}

}  // namespace

const char* decode_attention_unsupported(HeadLayout layout, int context) {
  if (layout.head_dim != kDecodeD) return "decode attention needs head_dim 128";
  if (layout.kv_heads < 1 || layout.heads % layout.kv_heads != 0) return "heads must be a multiple of kv_heads";
  if (layout.heads / layout.kv_heads > kernel_tiles::decode_attention_max_group) {
    return "decode attention handles up to 16 query heads per KV head";
  }
  if (context < 1) return "the context must hold at least one position";
  return nullptr;
}

DecodeAttentionPlan decode_attention_plan(int batch, HeadLayout layout, int context, int sms, StorageFormat cache) {
  DecodeAttentionPlan plan;
  // The blocks an SM holds at once, from the kernel the cache format selects (its shared memory and
  // registers); the 16-bit kernels of bf16 and fp16 are the same size.
  const bool fp8 = cache == StorageFormat::fp8_e4m3;
  const auto kernel = fp8 ? reinterpret_cast<const void*>(&decode_attention_kernel<__nv_bfloat16, __nv_fp8_e4m3>)
                          : reinterpret_cast<const void*>(&decode_attention_kernel<__nv_bfloat16, __nv_bfloat16>);
  const int smem_bytes = fp8 ? kDecodeFp8SmemBytes : kDecodeSmemBytes;
  ROOFLINE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  int blocks_per_sm = 1;
  ROOFLINE_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, kDecodeThreads, smem_bytes));
  plan.blocks_per_sm = blocks_per_sm;
  const kernel_tiles::DecodeSplit split =
      kernel_tiles::decode_attention_split(batch, layout.kv_heads, context, sms, blocks_per_sm);
  plan.tiles_per_split = split.tiles_per_split;
  plan.splits = split.splits;
  plan.workspace_bytes = static_cast<std::size_t>(batch) * layout.heads * plan.splits * (kDecodeD + 2) * sizeof(float);
  return plan;
}

void decode_attention(StorageFormat type, const void* qkv, const KvCache& cache, void* out, void* workspace, int batch,
                      HeadLayout layout, int context, const DecodeAttentionPlan& plan, Stream stream) {
  if (const char* why = decode_attention_unsupported(layout, context))
    throw KernelError(std::string("decode attention: ") + why);
  detail::require(type == StorageFormat::bf16 || type == StorageFormat::fp16,
                  "decode attention: q and the output are bf16 or fp16");
  detail::require(cache.format == type || cache.format == StorageFormat::fp8_e4m3,
                  "decode attention: the KV cache is in the activations' format or fp8_e4m3");
  detail::require(cache.format != StorageFormat::fp8_e4m3 || cache.scale != nullptr,
                  "decode attention: an fp8 KV cache needs its scale");
  detail::require(batch >= 1 && plan.splits >= 1 && plan.tiles_per_split >= 1 &&
                      (plan.splits - 1) * plan.tiles_per_split * kDecodeBN < context &&
                      plan.splits * plan.tiles_per_split * kDecodeBN >= context,
                  "decode attention: the plan does not cover the context");
  for (const void* p : {qkv, cache.k, cache.v, static_cast<const void*>(out), static_cast<const void*>(workspace)}) {
    require_aligned(p, "decode attention");
  }
  auto* part_o = static_cast<float*>(workspace);
  float* part_ml = part_o + static_cast<std::size_t>(batch) * layout.heads * plan.splits * kDecodeD;
  const float scale_log2 = 1.4426950408889634f / std::sqrt(static_cast<float>(layout.head_dim));
  const dim3 grid(static_cast<unsigned>(plan.splits), static_cast<unsigned>(batch * layout.kv_heads));
  const bool fp8 = cache.format == StorageFormat::fp8_e4m3;
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    const auto run = [&](auto cache_tag, int smem_bytes) {
      using Cache = decltype(cache_tag);
      ROOFLINE_CUDA_CHECK(cudaFuncSetAttribute(decode_attention_kernel<T, Cache>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
      decode_attention_kernel<T, Cache><<<grid, kDecodeThreads, smem_bytes, stream>>>(
          static_cast<const T*>(qkv), static_cast<const Cache*>(cache.k), static_cast<const Cache*>(cache.v),
          cache.scale, part_o, part_ml, static_cast<T*>(out), layout.heads, layout.kv_heads, context,
          plan.tiles_per_split, plan.splits, scale_log2);
    };
    if (fp8) {
      run(__nv_fp8_e4m3{}, kDecodeFp8SmemBytes);
    } else {
      run(T{}, kDecodeSmemBytes);
    }
    ROOFLINE_CHECK_LAUNCH("decode_attention_kernel");
    if (plan.splits == 1) return;  // the attention kernel wrote the output
    ROOFLINE_CUDA_CHECK(device::launch_programmatic_dependent(
        decode_combine_kernel<T>, dim3(static_cast<unsigned>(batch * layout.heads)), dim3(kDecodeD), 0, stream,
        static_cast<const float*>(part_o), static_cast<const float2*>(static_cast<void*>(part_ml)),
        static_cast<T*>(out), layout.heads, plan.splits));
    ROOFLINE_CHECK_LAUNCH("decode_combine_kernel");
  });
}

void decode_attention(StorageFormat type, const void* qkv, const void* k_cache, const void* v_cache, void* out,
                      void* workspace, int batch, HeadLayout layout, int context, const DecodeAttentionPlan& plan,
                      Stream stream) {
  decode_attention(type, qkv, KvCache{type, k_cache, v_cache, nullptr}, out, workspace, batch, layout, context, plan,
                   stream);
}

void quantize_kv_fp8(StorageFormat type, void* values, void* cache, std::size_t count, const float* scale,
                     Stream stream) {
  detail::require(values != nullptr && cache != nullptr && scale != nullptr, "quantize_kv_fp8: null pointer");
  if (count == 0) return;
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    quantize_kv_fp8_kernel<T><<<grid_for(static_cast<std::int64_t>(count)), kThreads, 0, stream>>>(
        static_cast<T*>(values), static_cast<__nv_fp8_e4m3*>(cache), count, scale);
  });
  ROOFLINE_CHECK_LAUNCH("quantize_kv_fp8_kernel");
}

}  // namespace roofline::kernels
