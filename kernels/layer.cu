// Decoder-layer kernels (layer.hpp): the memory-bound steps between the matrix products, decode
// attention over a KV cache, and the fp32 references the layer benchmark checks against.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "cuda_check.cuh"
#include "device_utils.cuh"
#include "layer.hpp"
#include "roofline/kernel_tiles.hpp"
#include "tc_ptx.cuh"

namespace roofline::kernels {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(std::int64_t tasks, int threads = kThreads) {
  const std::int64_t blocks = (tasks + threads - 1) / threads;
  return static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, 65535LL * 64));
}

// Eight 16-bit values in a uint4, as fp32 and back.
template <typename T>
__device__ __forceinline__ void unpack8(const uint4& v, float (&f)[8]) {
  const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t word = words[i];
    f[2 * i] = ptx::Half16Traits<T>::to_float(*reinterpret_cast<const T*>(&word));
    const uint32_t high = word >> 16;
    f[2 * i + 1] = ptx::Half16Traits<T>::to_float(*reinterpret_cast<const T*>(&high));
  }
}
template <typename T>
__device__ __forceinline__ uint4 pack8(const float (&f)[8]) {
  return make_uint4(ptx::Half16Traits<T>::pack(f[0], f[1]), ptx::Half16Traits<T>::pack(f[2], f[3]),
                    ptx::Half16Traits<T>::pack(f[4], f[5]), ptx::Half16Traits<T>::pack(f[6], f[7]));
}

__device__ __forceinline__ float silu(float g) {
  return g / (1.0f + __expf(-g));
}

// ---- RMSNorm, residual add, SwiGLU ------------------------------------------------------------

// One block per row: the sum of squares of the row (16-byte loads), then the scaled row.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    rmsnorm_kernel(const T* __restrict__ x, const T* __restrict__ gamma, T* __restrict__ out, int hidden, float eps) {
  __shared__ float scratch[kThreads / 32];
  const uint4* row = reinterpret_cast<const uint4*>(x + static_cast<std::size_t>(blockIdx.x) * hidden);
  uint4* out_row = reinterpret_cast<uint4*>(out + static_cast<std::size_t>(blockIdx.x) * hidden);
  const uint4* g = reinterpret_cast<const uint4*>(gamma);
  const int vectors = hidden / 8;
  float sum = 0.0f;
  for (int i = static_cast<int>(threadIdx.x); i < vectors; i += kThreads) {
    float f[8];
    unpack8<T>(row[i], f);
#pragma unroll
    for (int j = 0; j < 8; ++j) sum = fmaf(f[j], f[j], sum);
  }
  const float total = device::block_sum(sum, scratch);
  __shared__ float inv_rms;
  if (threadIdx.x == 0) inv_rms = rsqrtf(total / static_cast<float>(hidden) + eps);
  __syncthreads();
  const float scale = inv_rms;
  for (int i = static_cast<int>(threadIdx.x); i < vectors; i += kThreads) {
    float f[8];
    float w[8];
    unpack8<T>(row[i], f);
    unpack8<T>(g[i], w);
#pragma unroll
    for (int j = 0; j < 8; ++j) f[j] = f[j] * scale * w[j];
    out_row[i] = pack8<T>(f);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) add_kernel(const uint4* __restrict__ a, const uint4* __restrict__ b,
                                                       uint4* __restrict__ out, std::int64_t vectors) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < vectors; i += stride) {
    float fa[8];
    float fb[8];
    unpack8<T>(a[i], fa);
    unpack8<T>(b[i], fb);
#pragma unroll
    for (int j = 0; j < 8; ++j) fa[j] += fb[j];
    out[i] = pack8<T>(fa);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    swiglu_kernel(const T* __restrict__ gate_up, T* __restrict__ out, int rows, int ffn) {
  const int per_row = ffn / 8;
  const std::int64_t vectors = static_cast<std::int64_t>(rows) * per_row;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < vectors; i += stride) {
    const std::int64_t r = i / per_row;
    const std::int64_t c = i % per_row;
    const uint4* row = reinterpret_cast<const uint4*>(gate_up + r * 2 * ffn);
    float g[8];
    float u[8];
    unpack8<T>(row[c], g);
    unpack8<T>(row[per_row + c], u);
#pragma unroll
    for (int j = 0; j < 8; ++j) g[j] = silu(g[j]) * u[j];
    reinterpret_cast<uint4*>(out + r * ffn)[c] = pack8<T>(g);
  }
}

// ---- layout moves ----------------------------------------------------------------------------

// One thread per 16 bytes of k and of v of each token.
__global__ void __launch_bounds__(kThreads)
    kv_write_kernel(const uint4* __restrict__ qkv, uint4* __restrict__ k_cache, uint4* __restrict__ v_cache, int batch,
                    int heads, int kv_heads, int head_dim, int context, int position) {
  const int per_head = head_dim / 8;
  const int per_token = kv_heads * per_head;  // vectors of k (and of v) per token
  const int qkv_vectors = (heads + 2 * kv_heads) * per_head;
  const std::int64_t tasks = static_cast<std::int64_t>(batch) * 2 * per_token;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= tasks) return;
  const int b = static_cast<int>(i / (2 * per_token));
  const int rest = static_cast<int>(i % (2 * per_token));
  const bool is_v = rest >= per_token;
  const int within = is_v ? rest - per_token : rest;  // kv head x per_head + chunk
  const int kvh = within / per_head;
  const int chunk = within % per_head;
  const uint4 value =
      qkv[static_cast<std::int64_t>(b) * qkv_vectors + heads * per_head + (is_v ? per_token : 0) + within];
  const std::int64_t slot = ((static_cast<std::int64_t>(b) * kv_heads + kvh) * context + position) * per_head + chunk;
  (is_v ? v_cache : k_cache)[slot] = value;
}

__global__ void __launch_bounds__(kThreads)
    qkv_split_kernel(const uint4* __restrict__ qkv, uint4* __restrict__ q, uint4* __restrict__ k, uint4* __restrict__ v,
                     int tokens, int heads, int kv_heads, int head_dim) {
  const int per_head = head_dim / 8;
  const int row_vectors = (heads + 2 * kv_heads) * per_head;
  const std::int64_t tasks = static_cast<std::int64_t>(tokens) * row_vectors;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < tasks; i += stride) {
    const std::int64_t t = i / row_vectors;
    const int c = static_cast<int>(i % row_vectors);
    const int head = c / per_head;  // 0 .. heads + 2 kv_heads - 1
    const int chunk = c % per_head;
    uint4* to = q;
    int h = head;
    if (head >= heads + kv_heads) {
      to = v;
      h = head - heads - kv_heads;
    } else if (head >= heads) {
      to = k;
      h = head - heads;
    }
    to[(static_cast<std::int64_t>(h) * tokens + t) * per_head + chunk] = qkv[i];
  }
}

__global__ void __launch_bounds__(kThreads)
    attn_merge_kernel(const uint4* __restrict__ o, uint4* __restrict__ out, int tokens, int heads, int head_dim) {
  const int per_head = head_dim / 8;
  const std::int64_t tasks = static_cast<std::int64_t>(tokens) * heads * per_head;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < tasks; i += stride) {
    // i enumerates the output [tokens][heads x per_head] in order (coalesced writes).
    const std::int64_t t = i / (static_cast<std::int64_t>(heads) * per_head);
    const int c = static_cast<int>(i % (static_cast<std::int64_t>(heads) * per_head));
    const int h = c / per_head;
    const int chunk = c % per_head;
    out[i] = o[(static_cast<std::int64_t>(h) * tokens + t) * per_head + chunk];
  }
}

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
static_assert(kDecodeWarps * 16 * kDecodeD * 4 + 2 * kDecodeWarps * 16 * 4 <= 2 * kDecodeStages * kDecodeTileBytes);

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

template <typename T>
__global__ void __launch_bounds__(kDecodeThreads)
    decode_attention_kernel(const T* __restrict__ qkv, const T* __restrict__ k_cache, const T* __restrict__ v_cache,
                            float* __restrict__ part_o, float* __restrict__ part_ml, int heads, int kv_heads,
                            int context, int tiles_per_split, int splits, float scale_log2) {
  using Traits = ptx::Half16Traits<T>;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t smem_q = ptx::smem_addr(smem);
  const uint32_t smem_k = smem_q + kDecodeQBytes;
  const uint32_t smem_v = smem_k + kDecodeStages * kDecodeTileBytes;

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
  const T* k_rows = k_cache + head_offset + static_cast<std::size_t>(key_begin) * kDecodeD;
  const T* v_rows = v_cache + head_offset + static_cast<std::size_t>(key_begin) * kDecodeD;
  const int local_limit = context - key_begin;  // rows past the cache's end are zero-filled (and masked)

  decode_load_rows(smem_q, q_rows, 0, 16, group, tid);
  ptx::cp_async_commit();
#pragma unroll
  for (int j = 0; j < kDecodeStages - 1; ++j) {
    if (j < tiles) {
      decode_load_rows(smem_k + j * kDecodeTileBytes, k_rows, j * kDecodeBN, kDecodeBN, local_limit, tid);
      decode_load_rows(smem_v + j * kDecodeTileBytes, v_rows, j * kDecodeBN, kDecodeBN, local_limit, tid);
    }
    ptx::cp_async_commit();
  }
  ptx::cp_async_wait<kDecodeStages - 1>();  // Q has landed
  __syncthreads();
  uint32_t q_frag[kDecodeD / 16][4];
#pragma unroll
  for (int kk = 0; kk < kDecodeD / 16; ++kk) {
    ptx::ldmatrix_x4(q_frag[kk], smem_q + decode_swizzled(lane % 16, kk * 2 + lane / 16));
  }

  float o_acc[kDecodeD / 8][4] = {};
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.0f, 0.0f};

  for (int j = 0; j < tiles; ++j) {
    const int ahead = j + kDecodeStages - 1;
    if (ahead < tiles) {
      const int stage = ahead % kDecodeStages;
      decode_load_rows(smem_k + stage * kDecodeTileBytes, k_rows, ahead * kDecodeBN, kDecodeBN, local_limit, tid);
      decode_load_rows(smem_v + stage * kDecodeTileBytes, v_rows, ahead * kDecodeBN, kDecodeBN, local_limit, tid);
    }
    ptx::cp_async_commit();
    ptx::cp_async_wait<kDecodeStages - 1>();  // tile j has landed
    __syncthreads();

    const uint32_t tile_k = smem_k + (j % kDecodeStages) * kDecodeTileBytes;
    const uint32_t tile_v = smem_v + (j % kDecodeStages) * kDecodeTileBytes;
    const int first_key = key_begin + j * kDecodeBN + warp * 16;

    float s[2][4] = {};
#pragma unroll
    for (int kk = 0; kk < kDecodeD / 16; ++kk) {
      uint32_t bk[4];
      ptx::ldmatrix_x4(bk, tile_k + decode_swizzled(warp * 16 + (lane / 16) * 8 + (lane % 8), kk * 2 + (lane / 8) % 2));
      ptx::mma_16816<T>(s[0], q_frag[kk], bk[0], bk[1]);
      ptx::mma_16816<T>(s[1], q_frag[kk], bk[2], bk[3]);
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
    p[0] = Traits::pack(s[0][0], s[0][1]);
    p[1] = Traits::pack(s[0][2], s[0][3]);
    p[2] = Traits::pack(s[1][0], s[1][1]);
    p[3] = Traits::pack(s[1][2], s[1][3]);
#pragma unroll
    for (int dp = 0; dp < kDecodeD / 16; ++dp) {
      uint32_t bv[4];
      ptx::ldmatrix_x4_trans(
          bv, tile_v + decode_swizzled(warp * 16 + ((lane / 8) % 2) * 8 + (lane % 8), dp * 2 + lane / 16));
      ptx::mma_16816<T>(o_acc[2 * dp], p, bv[0], bv[1]);
      ptx::mma_16816<T>(o_acc[2 * dp + 1], p, bv[2], bv[3]);
    }
    __syncthreads();  // every warp is done with this stage before it is refilled
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
    const std::size_t slot = (static_cast<std::size_t>(b) * heads + head) * splits + split;
    part_o[slot * kDecodeD + col] = o;
    if (col == 0) {
      part_ml[2 * slot] = top;
      part_ml[2 * slot + 1] = l;
    }
  }
}

// One block of 128 threads per (sequence, head): merges the splits' partials (base-2 maxima).
template <typename T>
__global__ void __launch_bounds__(kDecodeD)
    decode_combine_kernel(const float* __restrict__ part_o, const float* __restrict__ part_ml, T* __restrict__ out,
                          int heads, int splits) {
  const int bh = static_cast<int>(blockIdx.x);
  const int col = static_cast<int>(threadIdx.x);
  const std::size_t first = static_cast<std::size_t>(bh) * splits;
  float top = -INFINITY;
  for (int s = 0; s < splits; ++s) top = fmaxf(top, part_ml[2 * (first + s)]);
  float o = 0.0f;
  float l = 0.0f;
  if (top != -INFINITY) {
    for (int s = 0; s < splits; ++s) {
      const float weight = exp2f(part_ml[2 * (first + s)] - top);
      o += weight * part_o[(first + s) * kDecodeD + col];
      l += weight * part_ml[2 * (first + s) + 1];
    }
  }
  const int b = bh / heads;
  const int h = bh % heads;
  out[(static_cast<std::size_t>(b) * heads + h) * kDecodeD + col] =
      ptx::Half16Traits<T>::from_float(l > 0.0f ? o / l : 0.0f);
}

// ---- fp32 references -------------------------------------------------------------------------

template <typename T>
__global__ void __launch_bounds__(kThreads)
    to_float_kernel(const T* __restrict__ in, float* __restrict__ out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    out[i] = ptx::Half16Traits<T>::to_float(in[i]);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    gather_rows_kernel(const T* __restrict__ in, const int* __restrict__ rows, int cols, float* __restrict__ out) {
  const T* from = in + static_cast<std::size_t>(rows[blockIdx.x]) * cols;
  float* to = out + static_cast<std::size_t>(blockIdx.x) * cols;
  for (int c = static_cast<int>(threadIdx.x); c < cols; c += kThreads) to[c] = ptx::Half16Traits<T>::to_float(from[c]);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    rmsnorm_reference_kernel(const float* __restrict__ x, const T* __restrict__ gamma, float* __restrict__ out,
                             int hidden, float eps) {
  __shared__ float scratch[kThreads / 32];
  const float* row = x + static_cast<std::size_t>(blockIdx.x) * hidden;
  float sum = 0.0f;
  for (int i = static_cast<int>(threadIdx.x); i < hidden; i += kThreads) sum = fmaf(row[i], row[i], sum);
  const float total = device::block_sum(sum, scratch);
  __shared__ float inv_rms;
  if (threadIdx.x == 0) inv_rms = 1.0f / sqrtf(total / static_cast<float>(hidden) + eps);
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < hidden; i += kThreads) {
    out[static_cast<std::size_t>(blockIdx.x) * hidden + i] =
        row[i] * inv_rms * ptx::Half16Traits<T>::to_float(gamma[i]);
  }
}

__global__ void __launch_bounds__(kThreads)
    add_reference_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                         std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    out[i] = a[i] + b[i];
  }
}

__global__ void __launch_bounds__(kThreads)
    swiglu_reference_kernel(const float* __restrict__ gate_up, float* __restrict__ out, int rows, int ffn) {
  const std::int64_t n = static_cast<std::int64_t>(rows) * ffn;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    const std::int64_t r = i / ffn;
    const std::int64_t c = i % ffn;
    const float g = gate_up[r * 2 * ffn + c];
    out[i] = g / (1.0f + expf(-g)) * gate_up[r * 2 * ffn + ffn + c];
  }
}

// One block of 128 threads per (query row, head): scores for every key in shared memory (fp32),
// softmax with the true maximum, then O by thread per dimension. Keys come from `key(j, dim)`.
// Simple and slow on purpose: it shares no code or trick with the kernels it checks.
template <typename KeyValue>
__device__ void attention_reference_row(const float* __restrict__ q, int keys, int head_dim, float scale,
                                        const KeyValue& kv, float* __restrict__ out, float* scores) {
  __shared__ float scratch[kThreads / 32];
  const int tid = static_cast<int>(threadIdx.x);
  float local_max = -INFINITY;
  for (int j = tid; j < keys; j += blockDim.x) {
    float dot = 0.0f;
    for (int d = 0; d < head_dim; ++d) dot = fmaf(q[d], kv.key(j, d), dot);
    scores[j] = dot * scale;
    local_max = fmaxf(local_max, scores[j]);
  }
  // Block maximum through the scratch (blockDim.x <= 256).
  for (int offset = 16; offset > 0; offset /= 2)
    local_max = fmaxf(local_max, __shfl_xor_sync(0xffffffffu, local_max, offset));
  if (tid % 32 == 0) scratch[tid / 32] = local_max;
  __syncthreads();
  float top = -INFINITY;
  for (int w = 0; w < static_cast<int>(blockDim.x + 31) / 32; ++w) top = fmaxf(top, scratch[w]);
  __syncthreads();
  float local_sum = 0.0f;
  for (int j = tid; j < keys; j += blockDim.x) {
    scores[j] = expf(scores[j] - top);
    local_sum += scores[j];
  }
  const float total = device::block_sum(local_sum, scratch);
  __shared__ float inv_total;
  if (tid == 0) inv_total = 1.0f / total;
  __syncthreads();  // also: every score is written
  for (int d = tid; d < head_dim; d += blockDim.x) {
    float acc = 0.0f;
    for (int j = 0; j < keys; ++j) acc = fmaf(scores[j], kv.value(j, d), acc);
    out[d] = acc * inv_total;
  }
}

template <typename T>
struct DecodeKv {
  const T* k_cache;  // this sequence's and KV head's [context][d]
  const T* v_cache;
  const float* k_new;  // the current token's k and v (fp32), at position context - 1
  const float* v_new;
  int context;
  int head_dim;
  __device__ float key(int j, int d) const {
    return j == context - 1 ? k_new[d]
                            : ptx::Half16Traits<T>::to_float(k_cache[static_cast<std::size_t>(j) * head_dim + d]);
  }
  __device__ float value(int j, int d) const {
    return j == context - 1 ? v_new[d]
                            : ptx::Half16Traits<T>::to_float(v_cache[static_cast<std::size_t>(j) * head_dim + d]);
  }
};

template <typename T>
__global__ void __launch_bounds__(kThreads)
    decode_attention_reference_kernel(const float* __restrict__ qkv, const T* __restrict__ k_cache,
                                      const T* __restrict__ v_cache, float* __restrict__ out, int heads, int kv_heads,
                                      int head_dim, int context) {
  extern __shared__ float scores[];
  const int b = static_cast<int>(blockIdx.x);
  const int h = static_cast<int>(blockIdx.y);
  const int kvh = h / (heads / kv_heads);
  const std::size_t stride = static_cast<std::size_t>(heads + 2 * kv_heads) * head_dim;
  const float* row = qkv + b * stride;
  const std::size_t cache = (static_cast<std::size_t>(b) * kv_heads + kvh) * context * head_dim;
  const DecodeKv<T> kv{
      k_cache + cache, v_cache + cache, row + (heads + kvh) * head_dim, row + (heads + kv_heads + kvh) * head_dim,
      context,         head_dim};
  attention_reference_row(row + h * head_dim, context, head_dim, rsqrtf(static_cast<float>(head_dim)), kv,
                          out + (static_cast<std::size_t>(b) * heads + h) * head_dim, scores);
}

struct PrefillKv {
  const float* k;  // token 0's k of this KV head; tokens `stride` apart
  const float* v;
  std::size_t stride;
  __device__ float key(int j, int d) const { return k[j * stride + d]; }
  __device__ float value(int j, int d) const { return v[j * stride + d]; }
};

__global__ void __launch_bounds__(kThreads)
    prefill_attention_reference_kernel(const float* __restrict__ qkv, const int* __restrict__ rows,
                                       float* __restrict__ out, int heads, int kv_heads, int head_dim) {
  extern __shared__ float scores[];
  const int token = rows[blockIdx.x];
  const int h = static_cast<int>(blockIdx.y);
  const int kvh = h / (heads / kv_heads);
  const std::size_t stride = static_cast<std::size_t>(heads + 2 * kv_heads) * head_dim;
  const PrefillKv kv{qkv + (heads + kvh) * head_dim, qkv + (heads + kv_heads + kvh) * head_dim, stride};
  attention_reference_row(qkv + token * stride + h * head_dim, token + 1, head_dim,
                          rsqrtf(static_cast<float>(head_dim)), kv,
                          out + (static_cast<std::size_t>(blockIdx.x) * heads + h) * head_dim, scores);
}

// ---- dispatch helpers ------------------------------------------------------------------------

void require_aligned(const void* p, const char* what) {
  detail::require(p != nullptr && reinterpret_cast<std::uintptr_t>(p) % 16 == 0,
                  std::string(what) + ": pointers must be non-null and 16-byte aligned");
}

template <typename F>
void by_type(Half16 type, F&& f) {
  if (type == Half16::bf16) {
    f(__nv_bfloat16{});
  } else {
    f(__half{});
  }
}

}  // namespace

void rmsnorm(Half16 type, const void* x, const void* gamma, void* out, int rows, int hidden, float eps, Stream stream) {
  detail::require(rows >= 1 && hidden >= 8 && hidden % 8 == 0, "rmsnorm: rows >= 1 and hidden a multiple of 8");
  for (const void* p : {x, gamma, static_cast<const void*>(out)}) require_aligned(p, "rmsnorm");
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    rmsnorm_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(gamma), static_cast<T*>(out), hidden, eps);
  });
  ROOFLINE_CHECK_LAUNCH("rmsnorm_kernel");
}

void residual_add(Half16 type, const void* a, const void* b, void* out, std::int64_t elements, Stream stream) {
  detail::require(elements >= 8 && elements % 8 == 0, "residual add: elements a multiple of 8");
  for (const void* p : {a, b, static_cast<const void*>(out)}) require_aligned(p, "residual add");
  const std::int64_t vectors = elements / 8;
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    add_kernel<T><<<grid_for(vectors), kThreads, 0, stream>>>(
        static_cast<const uint4*>(a), static_cast<const uint4*>(b), static_cast<uint4*>(out), vectors);
  });
  ROOFLINE_CHECK_LAUNCH("add_kernel");
}

void swiglu(Half16 type, const void* gate_up, void* out, int rows, int ffn, Stream stream) {
  detail::require(rows >= 1 && ffn >= 8 && ffn % 8 == 0, "swiglu: rows >= 1 and ffn a multiple of 8");
  require_aligned(gate_up, "swiglu");
  require_aligned(out, "swiglu");
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    swiglu_kernel<T><<<grid_for(static_cast<std::int64_t>(rows) * ffn / 8), kThreads, 0, stream>>>(
        static_cast<const T*>(gate_up), static_cast<T*>(out), rows, ffn);
  });
  ROOFLINE_CHECK_LAUNCH("swiglu_kernel");
}

void kv_write(Half16 /*type*/, const void* qkv, void* k_cache, void* v_cache, int batch, HeadLayout layout, int context,
              int position, Stream stream) {
  detail::require(batch >= 1 && layout.head_dim % 8 == 0 && layout.kv_heads >= 1 && position >= 0 && position < context,
                  "kv_write: bad shape or position");
  for (const void* p : {qkv, static_cast<const void*>(k_cache), static_cast<const void*>(v_cache)}) {
    require_aligned(p, "kv_write");
  }
  const std::int64_t tasks = static_cast<std::int64_t>(batch) * 2 * layout.kv_heads * (layout.head_dim / 8);
  kv_write_kernel<<<grid_for(tasks), kThreads, 0, stream>>>(
      static_cast<const uint4*>(qkv), static_cast<uint4*>(k_cache), static_cast<uint4*>(v_cache), batch, layout.heads,
      layout.kv_heads, layout.head_dim, context, position);
  ROOFLINE_CHECK_LAUNCH("kv_write_kernel");
}

void qkv_split(Half16 /*type*/, const void* qkv, void* q, void* k, void* v, int tokens, HeadLayout layout,
               Stream stream) {
  detail::require(tokens >= 1 && layout.head_dim % 8 == 0, "qkv_split: bad shape");
  for (const void* p : {qkv, static_cast<const void*>(q), static_cast<const void*>(k), static_cast<const void*>(v)}) {
    require_aligned(p, "qkv_split");
  }
  const std::int64_t tasks = static_cast<std::int64_t>(tokens) * (layout.qkv_width() / 8);
  qkv_split_kernel<<<grid_for(tasks), kThreads, 0, stream>>>(static_cast<const uint4*>(qkv), static_cast<uint4*>(q),
                                                             static_cast<uint4*>(k), static_cast<uint4*>(v), tokens,
                                                             layout.heads, layout.kv_heads, layout.head_dim);
  ROOFLINE_CHECK_LAUNCH("qkv_split_kernel");
}

void attn_merge(Half16 /*type*/, const void* o, void* out, int tokens, int heads, int head_dim, Stream stream) {
  detail::require(tokens >= 1 && heads >= 1 && head_dim % 8 == 0, "attn_merge: bad shape");
  require_aligned(o, "attn_merge");
  require_aligned(out, "attn_merge");
  const std::int64_t tasks = static_cast<std::int64_t>(tokens) * heads * (head_dim / 8);
  attn_merge_kernel<<<grid_for(tasks), kThreads, 0, stream>>>(static_cast<const uint4*>(o), static_cast<uint4*>(out),
                                                              tokens, heads, head_dim);
  ROOFLINE_CHECK_LAUNCH("attn_merge_kernel");
}

const char* decode_attention_unsupported(HeadLayout layout, int context) {
  if (layout.head_dim != kDecodeD) return "decode attention needs head_dim 128";
  if (layout.kv_heads < 1 || layout.heads % layout.kv_heads != 0) return "heads must be a multiple of kv_heads";
  if (layout.heads / layout.kv_heads > kernel_tiles::decode_attention_max_group) {
    return "decode attention handles up to 16 query heads per KV head";
  }
  if (context < 1) return "the context must hold at least one position";
  return nullptr;
}

DecodeAttentionPlan decode_attention_plan(int batch, HeadLayout layout, int context, int sms) {
  DecodeAttentionPlan plan;
  const kernel_tiles::DecodeSplit split = kernel_tiles::decode_attention_split(batch, layout.kv_heads, context, sms);
  plan.tiles_per_split = split.tiles_per_split;
  plan.splits = split.splits;
  plan.workspace_bytes = static_cast<std::size_t>(batch) * layout.heads * plan.splits * (kDecodeD + 2) * sizeof(float);
  return plan;
}

void decode_attention(Half16 type, const void* qkv, const void* k_cache, const void* v_cache, void* out,
                      void* workspace, int batch, HeadLayout layout, int context, const DecodeAttentionPlan& plan,
                      Stream stream) {
  if (const char* why = decode_attention_unsupported(layout, context))
    throw KernelError(std::string("decode attention: ") + why);
  detail::require(batch >= 1 && plan.splits >= 1 && plan.tiles_per_split >= 1 &&
                      (plan.splits - 1) * plan.tiles_per_split * kDecodeBN < context &&
                      plan.splits * plan.tiles_per_split * kDecodeBN >= context,
                  "decode attention: the plan does not cover the context");
  for (const void* p : {qkv, k_cache, v_cache, static_cast<const void*>(out), static_cast<const void*>(workspace)}) {
    require_aligned(p, "decode attention");
  }
  auto* part_o = static_cast<float*>(workspace);
  float* part_ml = part_o + static_cast<std::size_t>(batch) * layout.heads * plan.splits * kDecodeD;
  const float scale_log2 = 1.4426950408889634f / std::sqrt(static_cast<float>(layout.head_dim));
  const dim3 grid(static_cast<unsigned>(plan.splits), static_cast<unsigned>(batch * layout.kv_heads));
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    ROOFLINE_CUDA_CHECK(cudaFuncSetAttribute(decode_attention_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             kDecodeSmemBytes));
    decode_attention_kernel<T><<<grid, kDecodeThreads, kDecodeSmemBytes, stream>>>(
        static_cast<const T*>(qkv), static_cast<const T*>(k_cache), static_cast<const T*>(v_cache), part_o, part_ml,
        layout.heads, layout.kv_heads, context, plan.tiles_per_split, plan.splits, scale_log2);
    ROOFLINE_CHECK_LAUNCH("decode_attention_kernel");
    decode_combine_kernel<T><<<static_cast<unsigned>(batch * layout.heads), kDecodeD, 0, stream>>>(
        part_o, part_ml, static_cast<T*>(out), layout.heads, plan.splits);
    ROOFLINE_CHECK_LAUNCH("decode_combine_kernel");
  });
}

void to_float(Half16 type, const void* in, float* out, std::int64_t elements, Stream stream) {
  detail::require(in != nullptr && out != nullptr && elements >= 1, "to_float: bad arguments");
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    to_float_kernel<T><<<grid_for(elements), kThreads, 0, stream>>>(static_cast<const T*>(in), out, elements);
  });
  ROOFLINE_CHECK_LAUNCH("to_float_kernel");
}

void gather_rows_to_float(Half16 type, const void* in, const int* rows, int nrows, int cols, float* out,
                          Stream stream) {
  detail::require(in != nullptr && rows != nullptr && out != nullptr && nrows >= 1 && cols >= 1,
                  "gather_rows_to_float: bad arguments");
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    gather_rows_kernel<T>
        <<<static_cast<unsigned>(nrows), kThreads, 0, stream>>>(static_cast<const T*>(in), rows, cols, out);
  });
  ROOFLINE_CHECK_LAUNCH("gather_rows_kernel");
}

void rmsnorm_reference(const float* x, Half16 gamma_type, const void* gamma, float* out, int rows, int hidden,
                       float eps, Stream stream) {
  detail::require(x != nullptr && gamma != nullptr && out != nullptr && rows >= 1 && hidden >= 1,
                  "rmsnorm_reference: bad arguments");
  by_type(gamma_type, [&](auto tag) {
    using T = decltype(tag);
    rmsnorm_reference_kernel<T>
        <<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(x, static_cast<const T*>(gamma), out, hidden, eps);
  });
  ROOFLINE_CHECK_LAUNCH("rmsnorm_reference_kernel");
}

void add_reference(const float* a, const float* b, float* out, std::int64_t elements, Stream stream) {
  detail::require(a != nullptr && b != nullptr && out != nullptr && elements >= 1, "add_reference: bad arguments");
  add_reference_kernel<<<grid_for(elements), kThreads, 0, stream>>>(a, b, out, elements);
  ROOFLINE_CHECK_LAUNCH("add_reference_kernel");
}

void swiglu_reference(const float* gate_up, float* out, int rows, int ffn, Stream stream) {
  detail::require(gate_up != nullptr && out != nullptr && rows >= 1 && ffn >= 1, "swiglu_reference: bad arguments");
  swiglu_reference_kernel<<<grid_for(static_cast<std::int64_t>(rows) * ffn), kThreads, 0, stream>>>(gate_up, out, rows,
                                                                                                    ffn);
  ROOFLINE_CHECK_LAUNCH("swiglu_reference_kernel");
}

namespace {
// Dynamic shared memory of the reference attention kernels: one fp32 score per key.
std::size_t scores_bytes(int keys) {
  return static_cast<std::size_t>(keys) * sizeof(float);
}
constexpr int kReferenceThreads = 128;
}  // namespace

void decode_attention_reference(const float* qkv_f32, Half16 cache_type, const void* k_cache, const void* v_cache,
                                float* out, int batch, HeadLayout layout, int context, Stream stream) {
  detail::require(qkv_f32 != nullptr && k_cache != nullptr && v_cache != nullptr && out != nullptr && batch >= 1 &&
                      context >= 1 && layout.kv_heads >= 1 && layout.heads % layout.kv_heads == 0,
                  "decode_attention_reference: bad arguments");
  const std::size_t smem = scores_bytes(context);
  const dim3 grid(static_cast<unsigned>(batch), static_cast<unsigned>(layout.heads));
  by_type(cache_type, [&](auto tag) {
    using T = decltype(tag);
    ROOFLINE_CUDA_CHECK(cudaFuncSetAttribute(decode_attention_reference_kernel<T>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    decode_attention_reference_kernel<T><<<grid, kReferenceThreads, smem, stream>>>(
        qkv_f32, static_cast<const T*>(k_cache), static_cast<const T*>(v_cache), out, layout.heads, layout.kv_heads,
        layout.head_dim, context);
  });
  ROOFLINE_CHECK_LAUNCH("decode_attention_reference_kernel");
}

void prefill_attention_reference(const float* qkv_f32, const int* rows, int nrows, int tokens, float* out,
                                 HeadLayout layout, Stream stream) {
  detail::require(qkv_f32 != nullptr && rows != nullptr && out != nullptr && nrows >= 1 && tokens >= 1 &&
                      layout.kv_heads >= 1 && layout.heads % layout.kv_heads == 0,
                  "prefill_attention_reference: bad arguments");
  // Row t sees t + 1 <= tokens keys.
  const std::size_t smem = scores_bytes(tokens);
  ROOFLINE_CUDA_CHECK(cudaFuncSetAttribute(prefill_attention_reference_kernel,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  const dim3 grid(static_cast<unsigned>(nrows), static_cast<unsigned>(layout.heads));
  prefill_attention_reference_kernel<<<grid, kReferenceThreads, smem, stream>>>(qkv_f32, rows, out, layout.heads,
                                                                                layout.kv_heads, layout.head_dim);
  ROOFLINE_CHECK_LAUNCH("prefill_attention_reference_kernel");
}

}  // namespace roofline::kernels
