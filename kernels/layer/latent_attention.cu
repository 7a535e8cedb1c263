// Decode attention of multi-head latent attention (MLA, DeepSeek-V2/V3) in its absorbed form
// (layer.hpp): every query head attends over one shared cache row per position, the 512-wide
// latent followed by the 64-wide rotary key; the latent is also the value. Flash-decoding: the
// split kernel and the combine of the splits.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>

#include "common.cuh"
#include "latent_attention_wgmma.hpp"
#include "roofline/model/kernel_tiles.hpp"

namespace roofline::kernels {
namespace {

using namespace layer_common;

// Block (sequence b, group of 16 x M query heads, split s) of 8 warps, M = 1, 2 or 4 m16 tiles
// (kernel_tiles::latent_attention_m_tiles). The heads are the rows of the mma tiles (rows past the
// last head are zero and never written). 64-key tiles of the cache (64 x 576 x 2 B = 72 KiB)
// stream through two shared-memory stages (cp.async); Q (16M x 576) stays in shared memory and is
// read as A fragments. Each tile:
//   S: warp w takes m-tile w % M and keys of group w / M (8 / M groups of 8M keys: M n8 tiles, 36
//      k-steps over the 576 dimensions);
//   the groups' row maxima meet in shared memory, every warp takes the same running maxima;
//   P (16M x 64, 16-bit) goes to shared memory;
//   O += P V: warp w takes output columns 64w .. 64w + 63 (the latent's) of every row, all 64 keys.
// Splitting S by keys and O by columns keeps a warp's O at 16M x 64 fp32 (32M registers) where a
// warp owning keys would hold 16M x 512; the cost is two block barriers per tile. Each warp's O
// columns are its own, so at the end only the row sums meet; the block writes one unnormalised
// partial per head (or, with one split, the output) and latent_combine_kernel merges the splits.
constexpr int kRank = kernel_tiles::latent_attention_rank;
constexpr int kRope = kernel_tiles::latent_attention_rope;
constexpr int kDim = kRank + kRope;  // 576
constexpr int kBN = kernel_tiles::latent_attention_block_n;
constexpr int kWarps = kernel_tiles::latent_attention_warps;
constexpr int kStages = kernel_tiles::latent_attention_stages;
constexpr int kLatentThreads = 32 * kWarps;
static_assert(kRank == 64 * kWarps, "O: each warp takes 64 latent columns");
constexpr int kRowBytes = kDim * 2;  // 1152: 72 chunks of 16 bytes, a multiple of 8 (the swizzle's group)
constexpr int kChunks = kRowBytes / 16;
constexpr int kTileBytes = kBN * kRowBytes;
constexpr int kPRowBytes = kBN * 2;  // 128: P's row of 64 keys, 8 chunks

template <int M>
struct LatentBlock {
  static_assert(M == 1 || M == 2 || M == 4);
  static constexpr int rows = 16 * M;
  static constexpr int key_groups = kWarps / M;
  static constexpr int group_keys = kBN / key_groups;  // 8M: M n8 tiles
  static constexpr int q_bytes = rows * kRowBytes;
  static constexpr int p_bytes = rows * kPRowBytes;
  static constexpr int smem_bytes = q_bytes + kStages * kTileBytes + p_bytes + key_groups * rows * 4;
  static_assert(smem_bytes == kernel_tiles::latent_attention_smem_bytes(M));
  static_assert(smem_bytes <= kernel_tiles::sm90_max_block_smem, "one block per SM");
};

// Chunk c of row r: the 16-byte chunks of each aligned group of 8 permuted by r & 7, so that the 8
// rows an ldmatrix reads at one logical chunk fall in 8 different bank groups (1152 = 9 x 128
// bytes: rows alone do not move the bank).
__device__ __forceinline__ uint32_t latent_swizzled(int row, int chunk) {
  return static_cast<uint32_t>(row * kRowBytes + (((chunk & ~7) | ((chunk ^ row) & 7)) * 16));
}
__device__ __forceinline__ uint32_t p_swizzled(int row, int chunk) {
  return static_cast<uint32_t>(row * kPRowBytes + ((chunk ^ (row & 7)) * 16));
}

// Rows row0 .. row0 + rows - 1 of a [limit][576] matrix into a swizzled tile; rows at or past
// `limit` are zero-filled.
template <typename T>
__device__ __forceinline__ void latent_load_rows(uint32_t dst, const T* src, int row0, int rows, int limit, int tid) {
#pragma unroll 1
  for (int idx = tid; idx < rows * kChunks; idx += kLatentThreads) {
    const int r = idx / kChunks;
    const int c = idx % kChunks;
    const bool valid = row0 + r < limit;
    const T* from = src + (valid ? static_cast<std::size_t>(row0 + r) * kDim + c * 8 : 0);
    ptx::cp_async_16(dst + latent_swizzled(r, c), from, valid);
  }
}

template <typename T, int M>
__global__ void __launch_bounds__(kLatentThreads)
    latent_attention_kernel(const T* __restrict__ q, const T* __restrict__ cache, float* __restrict__ part_o,
                            float* __restrict__ part_ml, T* __restrict__ out, int heads, int context,
                            int tiles_per_split, int splits, float scale_log2) {
  using B = LatentBlock<M>;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t smem_q = ptx::smem_addr(smem);
  const uint32_t smem_tiles = smem_q + B::q_bytes;
  const uint32_t smem_p = smem_tiles + kStages * kTileBytes;
  // [key group][row]: the groups' row maxima, then (at the end) their row sums.
  auto* reduce = reinterpret_cast<float*>(smem + B::q_bytes + kStages * kTileBytes + B::p_bytes);

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % 32;
  const int warp = tid / 32;
  const int g = lane / 4;        // the accumulator rows g and g + 8 of each m16 tile
  const int t = lane % 4;        // the accumulator columns 2t, 2t + 1 of each n8 tile
  const int s_tile = warp % M;   // S: this warp's m-tile ...
  const int s_group = warp / M;  // ... and key group
  const int split = static_cast<int>(blockIdx.x);
  const int head0 = static_cast<int>(blockIdx.y) * B::rows;
  const int b = static_cast<int>(blockIdx.z);
  const int block_heads = min(B::rows, heads - head0);
  const int key_begin = split * tiles_per_split * kBN;
  const int key_end = min(context, key_begin + tiles_per_split * kBN);
  const int tiles = (key_end - key_begin + kBN - 1) / kBN;
  const T* q_rows = q + (static_cast<std::size_t>(b) * heads + head0) * kDim;
  const T* rows = cache + (static_cast<std::size_t>(b) * context + key_begin) * kDim;
  const int local_limit = context - key_begin;  // rows past the cache's end are zero-filled (and masked)

  latent_load_rows(smem_q, q_rows, 0, B::rows, block_heads, tid);
  latent_load_rows(smem_tiles, rows, 0, kBN, local_limit, tid);
  ptx::cp_async_commit();

  float o_acc[M][8][4] = {};
  float row_max[M][2];
#pragma unroll
  for (int mt = 0; mt < M; ++mt) row_max[mt][0] = row_max[mt][1] = -INFINITY;
  float row_sum[2] = {0.0f, 0.0f};  // this lane's share of its S rows (its keys), summed at the end

  for (int j = 0; j < tiles; ++j) {
    if (j + 1 < tiles)
      latent_load_rows(smem_tiles + ((j + 1) % kStages) * kTileBytes, rows, (j + 1) * kBN, kBN, local_limit, tid);
    ptx::cp_async_commit();
    ptx::cp_async_wait<1>();  // tile j (and Q) have landed
    __syncthreads();
    const uint32_t tile = smem_tiles + (j % kStages) * kTileBytes;

    // S = Q K^T for this warp's m-tile and M n8 tiles of keys; one ldmatrix.x4 of K covers two k-steps.
    float s[M][4] = {};
#pragma unroll 2
    for (int kk = 0; kk < kDim / 16; kk += 2) {
      uint32_t a0[4];
      uint32_t a1[4];
      ptx::ldmatrix_x4(a0, smem_q + latent_swizzled(16 * s_tile + lane % 16, kk * 2 + lane / 16));
      ptx::ldmatrix_x4(a1, smem_q + latent_swizzled(16 * s_tile + lane % 16, (kk + 1) * 2 + lane / 16));
#pragma unroll
      for (int nt = 0; nt < M; ++nt) {
        uint32_t bk[4];
        ptx::ldmatrix_x4(bk, tile + latent_swizzled(s_group * B::group_keys + nt * 8 + lane % 8, kk * 2 + lane / 8));
        ptx::mma_16816<T>(s[nt], a0, bk[0], bk[1]);
        ptx::mma_16816<T>(s[nt], a1, bk[2], bk[3]);
      }
    }
    const int first_key = key_begin + j * kBN + s_group * B::group_keys;
    if (first_key + B::group_keys > key_end) {
#pragma unroll
      for (int nt = 0; nt < M; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (first_key + nt * 8 + 2 * t + (e % 2) >= key_end) s[nt][e] = -INFINITY;
        }
      }
    }
    // The tile's row maxima over every key group.
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      float mx = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < M; ++nt) mx = fmaxf(mx, fmaxf(s[nt][2 * hh], s[nt][2 * hh + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      if (t == 0) reduce[s_group * B::rows + 16 * s_tile + g + 8 * hh] = mx;
    }
    __syncthreads();
#pragma unroll
    for (int mt = 0; mt < M; ++mt) {
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int row = 16 * mt + g + 8 * hh;
        float mx = reduce[row];
#pragma unroll
        for (int kg = 1; kg < B::key_groups; ++kg) mx = fmaxf(mx, reduce[kg * B::rows + row]);
        // Every warp computes the same maxima from the same values: its alpha rescales its own O columns.
        const float new_max = fmaxf(row_max[mt][hh], mx * scale_log2);
        // A row with no unmasked key yet keeps max -inf; subtract 0 then so that no inf - inf NaN appears.
        const float base = new_max == -INFINITY ? 0.0f : new_max;
        const float alpha = exp2f(row_max[mt][hh] - base);
        row_max[mt][hh] = new_max;
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) {
          o_acc[mt][nt][2 * hh] *= alpha;
          o_acc[mt][nt][2 * hh + 1] *= alpha;
        }
        if (mt != s_tile) continue;
        float sum = 0.0f;
#pragma unroll
        for (int nt = 0; nt < M; ++nt) {
          const float p0 = exp2f(fmaf(s[nt][2 * hh], scale_log2, -base));
          const float p1 = exp2f(fmaf(s[nt][2 * hh + 1], scale_log2, -base));
          sum += p0 + p1;
          // P[row][key], key = group_keys x group + 8nt + 2t: chunk M x group + nt, bytes 4t .. 4t + 3.
          asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(smem_p + p_swizzled(row, s_group * M + nt) + 4 * t),
                       "r"(TraitsOf<T>::pack(p0, p1))
                       : "memory");
        }
        row_sum[hh] = row_sum[hh] * alpha + sum;
      }
    }
    __syncthreads();  // P is whole; every warp has read the maxima

    // O[:, 64w .. 64w + 63] += P V, V = the tile's first 512 columns.
#pragma unroll
    for (int kp = 0; kp < kBN / 16; ++kp) {
      uint32_t a[M][4];
#pragma unroll
      for (int mt = 0; mt < M; ++mt)
        ptx::ldmatrix_x4(a[mt], smem_p + p_swizzled(16 * mt + lane % 16, kp * 2 + lane / 16));
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        uint32_t bv[4];
        ptx::ldmatrix_x4_trans(
            bv, tile + latent_swizzled(kp * 16 + ((lane / 8) % 2) * 8 + lane % 8, warp * 8 + np * 2 + lane / 16));
#pragma unroll
        for (int mt = 0; mt < M; ++mt) {
          ptx::mma_16816<T>(o_acc[mt][2 * np], a[mt], bv[0], bv[1]);
          ptx::mma_16816<T>(o_acc[mt][2 * np + 1], a[mt], bv[2], bv[3]);
        }
      }
    }
    __syncthreads();  // every warp is done with this stage (and with P) before they are refilled
  }
  ptx::cp_async_wait<0>();

  // The row sums: over the 4 lanes of a row, then over the key groups (all at the same maxima).
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    float total = row_sum[hh];
    total += __shfl_xor_sync(0xffffffffu, total, 1);
    total += __shfl_xor_sync(0xffffffffu, total, 2);
    if (t == 0) reduce[s_group * B::rows + 16 * s_tile + g + 8 * hh] = total;
  }
  __syncthreads();
#pragma unroll
  for (int mt = 0; mt < M; ++mt) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int row = 16 * mt + g + 8 * hh;
      if (row >= block_heads) continue;
      float l = 0.0f;
#pragma unroll
      for (int kg = 0; kg < B::key_groups; ++kg) l += reduce[kg * B::rows + row];
      const std::size_t bh = static_cast<std::size_t>(b) * heads + head0 + row;
      if (splits == 1) {
        // The whole context in this block: normalise and write the output here, as the combine would
        // (its one split's weight is 1), and skip the combine's launch and the partials.
        const float inv = l > 0.0f ? 1.0f / l : 0.0f;
        T* out_row = out + bh * kRank + warp * 64;
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) {
          const uint32_t pair = TraitsOf<T>::pack(o_acc[mt][nt][2 * hh] * inv, o_acc[mt][nt][2 * hh + 1] * inv);
          *reinterpret_cast<uint32_t*>(out_row + nt * 8 + 2 * t) = pair;
        }
        continue;
      }
      const std::size_t slot = bh * splits + split;
      float* o_row = part_o + slot * kRank + warp * 64;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        *reinterpret_cast<float2*>(o_row + nt * 8 + 2 * t) =
            make_float2(o_acc[mt][nt][2 * hh], o_acc[mt][nt][2 * hh + 1]);
      }
      if (warp == 0 && t == 0) {
        part_ml[2 * slot] = row_max[mt][hh];
        part_ml[2 * slot + 1] = l;
      }
    }
  }
}

// One block of 128 threads per (sequence, head), 4 latent columns a thread: merges the splits'
// partials (base-2 maxima).
constexpr int kCombineThreads = kRank / 4;
template <typename T>
__global__ void __launch_bounds__(kCombineThreads)
    latent_combine_kernel(const float* __restrict__ part_o, const float* __restrict__ part_ml, T* __restrict__ out,
                          int splits) {
  const std::size_t bh = blockIdx.x;
  const int col = 4 * static_cast<int>(threadIdx.x);
  const std::size_t first = bh * splits;
  // Unrolled so that the loads of several splits are in flight at once: at batch 1 a handful of
  // these blocks read up to 132 partials each, and one dependent load at a time is what they wait on.
  float top = -INFINITY;
#pragma unroll 8
  for (int s = 0; s < splits; ++s) top = fmaxf(top, part_ml[2 * (first + s)]);
  float o[4] = {};
  float l = 0.0f;
  if (top != -INFINITY) {
#pragma unroll 8
    for (int s = 0; s < splits; ++s) {
      const float weight = exp2f(part_ml[2 * (first + s)] - top);  // 0 for a split that saw no key
      const float4 v = *reinterpret_cast<const float4*>(part_o + (first + s) * kRank + col);
      o[0] += weight * v.x;
      o[1] += weight * v.y;
      o[2] += weight * v.z;
      o[3] += weight * v.w;
      l += weight * part_ml[2 * (first + s) + 1];
    }
  }
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;
  const uint2 packed = make_uint2(TraitsOf<T>::pack(o[0] * inv, o[1] * inv), TraitsOf<T>::pack(o[2] * inv, o[3] * inv));
  *reinterpret_cast<uint2*>(out + bh * kRank + col) = packed;
}

void launch_combine(StorageFormat type, const float* part_o, const float* part_ml, void* out, int rows, int splits,
                    Stream stream) {
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    latent_combine_kernel<T>
        <<<static_cast<unsigned>(rows), kCombineThreads, 0, stream>>>(part_o, part_ml, static_cast<T*>(out), splits);
  });
  ROOFLINE_CHECK_LAUNCH("latent_combine_kernel");
}

}  // namespace

const char* latent_attention_unsupported(LatentLayout layout, int context) {
  if (layout.kv_lora_rank != kRank || layout.rope_dim != kRope) {
    return "latent attention needs a 512-wide latent and a 64-wide rotary key (DeepSeek-V2/V3)";
  }
  if (layout.heads < 1) return "at least one query head";
  if (context < 1) return "the context must hold at least one position";
  return nullptr;
}

const char* latent_kernel_name(LatentKernel kernel) {
  switch (kernel) {
    case LatentKernel::mma_sync: return "mma_sync";
    case LatentKernel::wgmma: return "wgmma";
  }
  return "?";
}

LatentAttentionPlan latent_attention_plan(int batch, LatentLayout layout, int context, int sms) {
  LatentAttentionPlan plan;
  plan.heads_per_block = 16 * kernel_tiles::latent_attention_m_tiles(layout.heads, batch, context, sms);
  int head_groups = (layout.heads + plan.heads_per_block - 1) / plan.heads_per_block;
  // The Hopper kernel's blocks are 64 rows: it takes the shape wherever that does not cut the
  // number of blocks (64-head groups, and 16 or 32 heads, one group either way, its other rows
  // idle: at 16 heads the work stays memory-bound with 4x the tensor work), or where its blocks
  // still cover half the SMs (kernel_tiles::latent_attention_wgmma_fills).
  if ((layout.heads + 63) / 64 == head_groups ||
      kernel_tiles::latent_attention_wgmma_fills(layout.heads, batch, context, sms)) {
    int device = 0;
    ROOFLINE_CUDA_CHECK(cudaGetDevice(&device));
    if (detail::latent_attention_wgmma_runs(device)) {
      plan.kernel = LatentKernel::wgmma;
      plan.heads_per_block = 64;
      head_groups = (layout.heads + 63) / 64;
    }
  }
  const kernel_tiles::DecodeSplit split = kernel_tiles::latent_attention_split(
      batch, head_groups, context, sms, std::min(plan.heads_per_block, layout.heads));
  plan.splits = split.splits;
  plan.tiles_per_split = split.tiles_per_split;
  plan.workspace_bytes = static_cast<std::size_t>(batch) * layout.heads * plan.splits * (kRank + 2) * sizeof(float);
  return plan;
}

void latent_attention(StorageFormat type, const void* q, const void* cache, void* out, void* workspace, int batch,
                      LatentLayout layout, int context, float softmax_scale, const LatentAttentionPlan& plan,
                      Stream stream) {
  if (const char* why = latent_attention_unsupported(layout, context))
    throw KernelError(std::string("latent attention: ") + why);
  detail::require(type == StorageFormat::bf16 || type == StorageFormat::fp16,
                  "latent attention: q, the cache and the output are bf16 or fp16");
  detail::require(batch >= 1 && plan.splits >= 1 && plan.tiles_per_split >= 1 &&
                      (plan.splits - 1) * plan.tiles_per_split * kBN < context &&
                      plan.splits * plan.tiles_per_split * kBN >= context,
                  "latent attention: the plan does not cover the context");
  const int m_tiles = plan.heads_per_block / 16;
  detail::require(plan.heads_per_block % 16 == 0 && (m_tiles == 1 || m_tiles == 2 || m_tiles == 4),
                  "latent attention: a plan's head groups are 16, 32 or 64 heads");
  detail::require(std::isfinite(softmax_scale) && softmax_scale > 0.0f, "latent attention: softmax scale > 0");
  for (const void* p : {q, cache, static_cast<const void*>(out)}) require_aligned(p, "latent attention");
  detail::require(plan.splits == 1 || workspace != nullptr, "latent attention: split plans need their workspace");
  auto* part_o = static_cast<float*>(workspace);
  float* part_ml =
      part_o == nullptr ? nullptr : part_o + static_cast<std::size_t>(batch) * layout.heads * plan.splits * kRank;
  const float scale_log2 = 1.4426950408889634f * softmax_scale;
  if (plan.kernel == LatentKernel::wgmma) {
    detail::require(plan.heads_per_block == 64, "latent attention: the wgmma kernel takes 64-head blocks");
    detail::latent_attention_wgmma(type, q, cache, part_o, part_ml, out, batch, layout.heads, context,
                                   plan.tiles_per_split, plan.splits, scale_log2, stream);
    if (plan.splits > 1) launch_combine(type, part_o, part_ml, out, batch * layout.heads, plan.splits, stream);
    return;
  }
  const dim3 grid(static_cast<unsigned>(plan.splits),
                  static_cast<unsigned>((layout.heads + plan.heads_per_block - 1) / plan.heads_per_block),
                  static_cast<unsigned>(batch));
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    const auto run = [&](auto m_tag) {
      constexpr int M = decltype(m_tag)::value;
      constexpr int smem_bytes = LatentBlock<M>::smem_bytes;
      ROOFLINE_CUDA_CHECK(
          cudaFuncSetAttribute(latent_attention_kernel<T, M>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
      latent_attention_kernel<T, M><<<grid, kLatentThreads, smem_bytes, stream>>>(
          static_cast<const T*>(q), static_cast<const T*>(cache), part_o, part_ml, static_cast<T*>(out), layout.heads,
          context, plan.tiles_per_split, plan.splits, scale_log2);
    };
    if (m_tiles == 1) {
      run(std::integral_constant<int, 1>{});
    } else if (m_tiles == 2) {
      run(std::integral_constant<int, 2>{});
    } else {
      run(std::integral_constant<int, 4>{});
    }
    ROOFLINE_CHECK_LAUNCH("latent_attention_kernel");
  });
  // With one split the attention kernel wrote the output.
  if (plan.splits > 1) launch_combine(type, part_o, part_ml, out, batch * layout.heads, plan.splits, stream);
}

}  // namespace roofline::kernels
