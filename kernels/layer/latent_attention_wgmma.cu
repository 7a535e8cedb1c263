// Latent attention at decode on Hopper (sm_90a): 64 query rows a block, both products on wgmma,
// the cache streamed by TMA. The layouts and the result are latent_attention's (layer.hpp); the
// plan picks this kernel (LatentKernel::wgmma) for 64-head groups and for 16 or 32 heads, where a
// block holds all the heads and its other rows idle (memory-bound there even at 4x the tensor work:
// 16 heads over 8 x 16k or more keys stream 3.2-4.1 TB/s, the mma.sync kernel's blocks 2.5-2.9).
//
// One block per (group of up to 64 heads, split of the context, sequence), three warpgroups:
//   warpgroup 0, the producer (setmaxnreg 24): one thread loads Q (64 heads x 576, nine boxes of 64
//     columns in the 128-byte swizzle) once, then the split's 64-key cache tiles (72 KiB each)
//     through two stages. Each tile is loaded in two halves on mbarriers of their own: the right
//     half (latent columns 256..511 and the rotary key) as soon as warpgroup 2 has released its
//     half of the tile two back, the left half (columns 0..255) once warpgroup 1 has. With one
//     "full" and one "empty" barrier per stage the next tile could only load once the slower of the
//     two had finished with the stage: 383-459 TFLOP/s that way at 128 heads over 32 x 4k or 8 x 16k
//     keys, where the halves run 491-581.
//   warpgroup 1 (setmaxnreg 240): per tile j, S_j = Q K_j^T (36 wgmma m64n64k16, both operands from
//     shared memory; the right half's 20 issued while the left half still lands), the online
//     softmax, O[:, 0..255] += P_j V_j with P from registers (4 wgmma m64n256k16, V = the tile's
//     first 256 latent columns read N-major). As in flash_wgmma, S_j is issued before
//     P_{j-1} V_{j-1}, so that S_j's softmax runs while that product is on the tensor cores. It then
//     hands P_j (16-bit, [64 rows][64 keys] in the 128-byte swizzle) and the rows' rescale factors to
//     warpgroup 2 through shared memory;
//   warpgroup 2 (setmaxnreg 240): O[:, 256..511] += P_j V_j with P from shared memory, after
//     rescaling its O by the factors warpgroup 1 left.
// Splitting O by columns keeps each warpgroup's accumulator at 64 x 256 fp32 (128 registers a
// thread): 64 x 512 would not fit. Only warpgroup 1 computes S (FlashMLA's split of the work):
// splitting the keys instead would halve S's n to 32, where each wgmma's 2 KiB of A from shared
// memory outweighs its 1 KiB of B. Shared memory: Q 72 KiB + two tiles 144 KiB + P 8 KiB + 512 B
// of row factors: one block per SM, so the two stages are all the prefetch there is.
// Named barriers between the two consumers: "P full" (warpgroup 1 arrives once P_j is written,
// warpgroup 2 syncs before reading it), "P free" (both sync: warpgroup 2 once its P_j V_j has
// completed, warpgroup 1 before overwriting P), "row sums" (both, at the end).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "../cuda_check.cuh"
#include "../online_softmax.cuh"
#include "../tc_ptx.cuh"
#include "../tma_host.cuh"
#include "../wgmma.cuh"
#include "latent_attention_wgmma.hpp"
#include "roofline/model/kernel_tiles.hpp"

namespace roofline::kernels::detail {
namespace {

constexpr int kRank = kernel_tiles::latent_attention_rank;
constexpr int kDim = kRank + kernel_tiles::latent_attention_rope;  // 576
constexpr int kRows = 64;                                          // heads a block: one wgmma m
constexpr int kBN = kernel_tiles::latent_attention_block_n;        // 64 keys a tile
constexpr int kStages = kernel_tiles::latent_attention_stages;
constexpr int kBoxElements = 64;             // one 128-byte row of 16-bit values, the swizzle's width
constexpr int kBoxes = kDim / kBoxElements;  // 9
constexpr int kBoxBytes = 64 * 128;          // [64 rows (heads or keys)][128 bytes]
constexpr int kQBytes = kBoxes * kBoxBytes;
constexpr int kTileBytes = kBoxes * kBoxBytes;
constexpr int kPBytes = kRows * kBN * 2;  // one box: [64 rows][64 keys]
constexpr int kHalf = kRank / 2;          // each consumer's O columns
constexpr int kHalfBoxes = kHalf / kBoxElements;
constexpr int kScoreSteps = kDim / 16;  // k steps of S = Q K^T
constexpr int kValueSteps = kBN / 16;   // k steps of O += P V
constexpr int kThreads = 384;
constexpr int kConsumerThreads = 256;
constexpr uint32_t kProducerRegisters = 24;
constexpr uint32_t kConsumerRegisters = 240;
constexpr int kPFull = 1;
constexpr int kPFree = 2;
constexpr int kRowSums = 3;
// Q, the stages, P, the rescale factors and the row sums (64 floats each), 5 mbarriers, and the
// slack to align the first tile to 1024 bytes.
// A tile's two halves, each on its own full and empty mbarriers: the left one (boxes 0-3, the latent
// columns 0..255 of warpgroup 1's O) and the right one (boxes 4-8: columns 256..511 and the rotary
// key, which only S reads).
constexpr int kLeftBoxes = kHalfBoxes;
constexpr int kRightBoxes = kBoxes - kHalfBoxes;
constexpr int kScoreStepsLeft = kLeftBoxes * 4;
constexpr int kBarriers = 1 + 4 * kStages;  // Q full; per stage left/right full, left/right empty
constexpr int kSmemBytes = kQBytes + kStages * kTileBytes + kPBytes + 2 * kRows * 4 + 8 * kBarriers + 1024;
static_assert(kSmemBytes <= kernel_tiles::sm90_max_block_smem, "one block per SM");
static_assert(kRank % (2 * kBoxElements) == 0 && kDim % kBoxElements == 0);

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// S = Q K^T for one tile, one wgmma group (not waited for): k step kk is 32 bytes into box kk / 4.
// The right half is issued first, as soon as it has landed, then the left half once it has: the
// left half is the one released last (after warpgroup 1's own P V), so it is the later load.
template <typename T>
__device__ __forceinline__ void issue_scores(float (&s_acc)[kBN / 2], uint32_t smem_q, uint32_t tile,
                                             uint32_t right_full, uint32_t left_full, uint32_t parity) {
  // Opaque to the compiler: Q's 36 descriptors are the same on every tile, and hoisted out of the
  // loop they held 72 registers for its whole length and spilled the accumulators.
  asm volatile("" : "+r"(smem_q));
  ptx::wgmma_fence();
  ptx::mbarrier_wait_untimed(right_full, parity);
#pragma unroll
  for (int kk = kScoreStepsLeft; kk < kScoreSteps; ++kk) {
    const uint32_t offset = static_cast<uint32_t>(kk / 4) * kBoxBytes + static_cast<uint32_t>(kk % 4) * 32;
    ptx::wgmma_m64nNk16_ss<T, kBN>(s_acc, ptx::wgmma_desc_sw128(smem_q + offset), ptx::wgmma_desc_sw128(tile + offset),
                                   kk > kScoreStepsLeft ? 1 : 0);
  }
  ptx::mbarrier_wait_untimed(left_full, parity);
#pragma unroll
  for (int kk = 0; kk < kScoreStepsLeft; ++kk) {
    const uint32_t offset = static_cast<uint32_t>(kk / 4) * kBoxBytes + static_cast<uint32_t>(kk % 4) * 32;
    ptx::wgmma_m64nNk16_ss<T, kBN>(s_acc, ptx::wgmma_desc_sw128(smem_q + offset), ptx::wgmma_desc_sw128(tile + offset),
                                   1);
  }
  ptx::wgmma_commit();
}

// V's descriptor for keys 16 kt .. 16 kt + 15 of 256 latent columns from `columns` (a box's start):
// 16 rows of 128 bytes further into each box; the next 64 columns are a box away (the leading byte
// offset), 8-key groups 1024 bytes (the stride offset).
__device__ __forceinline__ uint64_t value_desc(uint32_t columns, int kt) {
  return ptx::wgmma_desc_sw128_mn(columns + static_cast<uint32_t>(kt) * 16 * 128, kBoxBytes, 1024);
}

// O += P V with P in registers (warpgroup 1).
template <typename T>
__device__ __forceinline__ void issue_values_registers(float (&o_acc)[kHalf / 2], const uint32_t (&p)[kValueSteps][4],
                                                       uint32_t columns) {
  ptx::wgmma_fence();
#pragma unroll
  for (int kt = 0; kt < kValueSteps; ++kt) ptx::wgmma_m64nNk16_rs<T, kHalf>(o_acc, p[kt], value_desc(columns, kt), 1);
  ptx::wgmma_commit();
}

// O += P V with P in shared memory, K-major in the 128-byte swizzle (warpgroup 2).
template <typename T>
__device__ __forceinline__ void issue_values_shared(float (&o_acc)[kHalf / 2], uint32_t smem_p, uint32_t columns) {
  ptx::wgmma_fence();
#pragma unroll
  for (int kt = 0; kt < kValueSteps; ++kt) {
    ptx::wgmma_m64n256k16_ss_trans_b<T>(o_acc, ptx::wgmma_desc_sw128(smem_p + static_cast<uint32_t>(kt) * 32),
                                        value_desc(columns, kt), 1);
  }
  ptx::wgmma_commit();
}

// P's registers (pack_p's A fragments: per k step, {row g, keys 2c, 2c+1}, {row g+8, same},
// {row g, keys 8+2c, 9+2c}, {row g+8, same}) into the 128-byte-swizzled [64 rows][64 keys] tile: key
// chunk k / 8 of row r sits at chunk (k / 8) ^ (r % 8). Rows g of the 8 lane groups fall in 8
// different chunks, so each store is free of bank conflicts.
__device__ __forceinline__ void store_p(uint32_t smem_p, const uint32_t (&p)[kValueSteps][4], int row0, int lane) {
  const int c = lane % 4;
#pragma unroll
  for (int kt = 0; kt < kValueSteps; ++kt) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {  // keys 16kt + 8 half ..
      const int chunk = 2 * kt + half;
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // rows row0, row0 + 8
        const int row = row0 + 8 * h;
        const uint32_t address = smem_p + static_cast<uint32_t>(row * 128 + ((chunk ^ (row % 8)) * 16) + 4 * c);
        asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(address), "r"(p[kt][2 * half + h]) : "memory");
      }
    }
  }
}

// Warpgroup 1 hands P_j and its rows' rescale factors to warpgroup 2 ("P full").
__device__ __forceinline__ void publish_p(uint32_t smem_p, float* alpha_shared, const uint32_t (&p)[kValueSteps][4],
                                          const float (&alpha)[2], int row0, int lane) {
  store_p(smem_p, p, row0, lane);
  if (lane % 4 == 0) {
    alpha_shared[row0] = alpha[0];
    alpha_shared[row0 + 8] = alpha[1];
  }
  ptx::fence_proxy_async_shared();  // P's ordinary stores, read next by warpgroup 2's wgmma
  ptx::named_barrier_arrive(kPFull, kConsumerThreads);
}
#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <typename T>
__global__ void __launch_bounds__(kThreads, 1)
    latent_wgmma_kernel(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_cache,
                        float* __restrict__ part_o, float* __restrict__ part_ml, T* __restrict__ out, int heads,
                        int context, int tiles_per_split, int splits, float scale_log2) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = ptx::smem_addr(smem_raw);
  const uint32_t smem = (raw + 1023u) & ~1023u;
  const uint32_t smem_q = smem;
  const uint32_t smem_k = smem_q + kQBytes;
  const uint32_t smem_p = smem_k + kStages * kTileBytes;
  const uint32_t smem_alpha = smem_p + kPBytes;
  const uint32_t smem_sums = smem_alpha + kRows * 4;
  const uint32_t q_full = smem_sums + kRows * 4;
  // Per stage s: left full, right full, left empty, right empty at +8 s of each.
  const uint32_t left_full = q_full + 8;
  const uint32_t right_full = left_full + 8 * kStages;
  const uint32_t left_empty = right_full + 8 * kStages;
  const uint32_t right_empty = left_empty + 8 * kStages;
  float* alpha_shared = reinterpret_cast<float*>(smem_raw + (smem_alpha - raw));
  float* sums_shared = reinterpret_cast<float*>(smem_raw + (smem_sums - raw));

  const int head0 = static_cast<int>(blockIdx.x) * kRows;
  const int split = static_cast<int>(blockIdx.y);
  const int b = static_cast<int>(blockIdx.z);
  const int key_begin = split * tiles_per_split * kBN;
  const int key_end = min(context, key_begin + tiles_per_split * kBN);
  const int tiles = (key_end - key_begin + kBN - 1) / kBN;
  // Read through a shuffle so that ptxas sees a warp-uniform value (setmaxnreg needs it).
  const int warpgroup = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);

  if (threadIdx.x == 0) {
    ptx::mbarrier_init(q_full, 1);
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(left_full + 8 * s, 1);
      ptx::mbarrier_init(right_full + 8 * s, 1);
      ptx::mbarrier_init(left_empty + 8 * s, kConsumerThreads / 2);   // warpgroup 1
      ptx::mbarrier_init(right_empty + 8 * s, kConsumerThreads / 2);  // warpgroup 2
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  auto stage = [](int j) { return static_cast<uint32_t>(j % kStages); };
  auto parity = [](int j) { return static_cast<uint32_t>(j / kStages) & 1u; };

  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) {
      // Q is read as [batch x heads] rows: where a block has fewer than 64 heads (16 heads at TP 8),
      // its other rows are the next sequences' queries (or zero past the last), computed and never
      // written. Keys past `context` lie outside the cache's map and read as zero.
      ptx::mbarrier_arrive_expect_tx(q_full, kQBytes);
#pragma unroll 1
      for (int box = 0; box < kBoxes; ++box)
        ptx::tma_load_3d(smem_q + box * kBoxBytes, &map_q, q_full, kBoxElements * box, b * heads + head0, 0);
      // Each half of tile j as soon as its half of tile j - 2 is released: the right half (warpgroup
      // 2's P V) is released early in the tile's time, the left one late.
      for (int j = 0; j < tiles; ++j) {
        const uint32_t tile = smem_k + stage(j) * kTileBytes;
        const int key = key_begin + j * kBN;
        const uint32_t right = right_full + 8 * stage(j);
        ptx::mbarrier_wait(right_empty + 8 * stage(j), parity(j) ^ 1u);
        ptx::mbarrier_arrive_expect_tx(right, kRightBoxes * kBoxBytes);
#pragma unroll 1
        for (int box = kLeftBoxes; box < kBoxes; ++box)
          ptx::tma_load_3d(tile + box * kBoxBytes, &map_cache, right, kBoxElements * box, key, b);
        const uint32_t left = left_full + 8 * stage(j);
        ptx::mbarrier_wait(left_empty + 8 * stage(j), parity(j) ^ 1u);
        ptx::mbarrier_arrive_expect_tx(left, kLeftBoxes * kBoxBytes);
#pragma unroll 1
        for (int box = 0; box < kLeftBoxes; ++box)
          ptx::tma_load_3d(tile + box * kBoxBytes, &map_cache, left, kBoxElements * box, key, b);
      }
      // The consumers wait without a watchdog; the producer waits for the last loads here, so that
      // a load that never lands traps instead of hanging the GPU.
      ptx::mbarrier_wait(q_full, 0);
      for (int j = max(0, tiles - kStages); j < tiles; ++j) {
        ptx::mbarrier_wait(right_full + 8 * stage(j), parity(j));
        ptx::mbarrier_wait(left_full + 8 * stage(j), parity(j));
      }
    }
  } else {
    // ptxas applies setmaxnreg's count only to code inside this branch: the consumers' code is
    // written in it (not after a return of the producer's) so that it gets its 240 registers.
    ptx::setmaxnreg_inc<kConsumerRegisters>();
    const int consumer = warpgroup - 1;
    const int t_in_wg = static_cast<int>(threadIdx.x) % 128;
    const int lane = t_in_wg % 32;
    const int row0 = (t_in_wg / 32) * 16 + lane / 4;  // this thread's rows: row0 and row0 + 8
    auto k_tile = [&](int j) { return smem_k + stage(j) * kTileBytes; };

    float o_acc[kHalf / 2];
#pragma unroll
    for (int i = 0; i < kHalf / 2; ++i) o_acc[i] = 0.0f;
    ptx::fence_registers(o_acc);
    float row_max[2] = {-INFINITY, -INFINITY};
    ptx::mbarrier_wait_untimed(q_full, 0);

    if (consumer == 0) {
      float row_sum[2] = {0.0f, 0.0f};
      float alpha[2] = {0.0f, 0.0f};
      float s_acc[kBN / 2];
      uint32_t p[kValueSteps][4];
      issue_scores<T>(s_acc, smem_q, k_tile(0), right_full + 8 * stage(0), left_full + 8 * stage(0), parity(0));
      ptx::wgmma_wait<0>();
      ptx::fence_registers(s_acc);
      softmax_scores<kBN>(s_acc, row_max, row_sum, alpha, key_begin, row0, 0, lane, key_end, 0, scale_log2, 0.0f);
      pack_p<T, kBN>(s_acc, p);
      publish_p(smem_p, alpha_shared, p, alpha, row0, lane);
      for (int j = 1; j < tiles; ++j) {
        issue_scores<T>(s_acc, smem_q, k_tile(j), right_full + 8 * stage(j), left_full + 8 * stage(j), parity(j));
        rescale<kHalf>(o_acc, alpha);  // to the running max of P_{j-1}, under S_j's product
        issue_values_registers<T>(o_acc, p, k_tile(j - 1));
        ptx::wgmma_wait<1>();  // S_j is done; P_{j-1} V_{j-1} may still run
        ptx::fence_registers(s_acc);
        softmax_scores<kBN>(s_acc, row_max, row_sum, alpha, key_begin + j * kBN, row0, 0, lane, key_end, 0, scale_log2,
                            0.0f);
        ptx::wgmma_wait<0>();
        ptx::fence_registers(o_acc);
        fence_words(p);
        ptx::mbarrier_arrive(left_empty + 8 * stage(j - 1));
        pack_p<T, kBN>(s_acc, p);
        ptx::named_barrier_sync(kPFree, kConsumerThreads);  // warpgroup 2 is done with P_{j-1}
        publish_p(smem_p, alpha_shared, p, alpha, row0, lane);
      }
      rescale<kHalf>(o_acc, alpha);
      issue_values_registers<T>(o_acc, p, k_tile(tiles - 1));
      ptx::wgmma_wait<0>();
      ptx::fence_registers(o_acc);
      fence_words(p);
      ptx::mbarrier_arrive(left_empty + 8 * stage(tiles - 1));
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float total = row_sum[h];
        total += __shfl_xor_sync(0xffffffffu, total, 1);
        total += __shfl_xor_sync(0xffffffffu, total, 2);
        if (lane % 4 == 0) sums_shared[row0 + 8 * h] = total;
      }
    } else {
      for (int j = 0; j < tiles; ++j) {
        ptx::named_barrier_sync(kPFull, kConsumerThreads);
        const float alpha[2] = {alpha_shared[row0], alpha_shared[row0 + 8]};
        rescale<kHalf>(o_acc, alpha);
        ptx::mbarrier_wait_untimed(right_full + 8 * stage(j), parity(j));
        issue_values_shared<T>(o_acc, smem_p, k_tile(j) + kHalfBoxes * kBoxBytes);
        ptx::wgmma_wait<0>();
        ptx::fence_registers(o_acc);
        ptx::mbarrier_arrive(right_empty + 8 * stage(j));
        // A full barrier, not an arrival: warpgroup 2 has nothing to do until the next P anyway, and
        // it orders its reads of the factors before their next write for racecheck as well.
        if (j + 1 < tiles) ptx::named_barrier_sync(kPFree, kConsumerThreads);
      }
    }
    ptx::named_barrier_sync(kRowSums, kConsumerThreads);

    // ---- the split's result: rows row0 and row0 + 8, columns 256 consumer + 8 n8 + 2 (lane % 4) ----
    using Traits = TraitsOf<T>;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + 8 * h;
      if (head0 + row >= heads) continue;
      const float l = sums_shared[row];
      const std::size_t bh = static_cast<std::size_t>(b) * heads + head0 + row;
      const int col0 = consumer * kHalf + 2 * (lane % 4);
      if (splits == 1) {
        const float inv = l > 0.0f ? 1.0f / l : 0.0f;
        T* out_row = out + bh * kRank + col0;
#pragma unroll
        for (int n8 = 0; n8 < kHalf / 8; ++n8) {
          *reinterpret_cast<uint32_t*>(out_row + 8 * n8) =
              Traits::pack(o_acc[4 * n8 + 2 * h] * inv, o_acc[4 * n8 + 2 * h + 1] * inv);
        }
        continue;
      }
      const std::size_t slot = bh * splits + split;
      float* o_row = part_o + slot * kRank + col0;
#pragma unroll
      for (int n8 = 0; n8 < kHalf / 8; ++n8)
        *reinterpret_cast<float2*>(o_row + 8 * n8) = make_float2(o_acc[4 * n8 + 2 * h], o_acc[4 * n8 + 2 * h + 1]);
      if (consumer == 0 && lane % 4 == 0) {
        part_ml[2 * slot] = row_max[h];
        part_ml[2 * slot + 1] = l;
      }
    }
  }
#else
  __trap();
#endif
}

// A [outer][rows][576] tensor (q: [batch][heads], the cache: [batch][context]) in boxes of 64 columns x
// 64 rows.
CUtensorMap make_rows_map(StorageFormat type, const void* base, int rows, int outer, const char* what) {
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(kDim), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(outer)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(kDim) * 2, static_cast<cuuint64_t>(rows) * kDim * 2};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(kBoxElements), 64, 1};
  return make_tensor_map_sw128(type, base, 3, dims, strides, box, what);
}

}  // namespace

bool latent_attention_wgmma_runs(int device) {
  return sm90a_runs_on(device);
}

void latent_attention_wgmma(StorageFormat type, const void* q, const void* cache, float* part_o, float* part_ml,
                            void* out, int batch, int heads, int context, int tiles_per_split, int splits,
                            float scale_log2, cudaStream_t stream) {
  require(batch <= 65535 && splits <= 65535, "latent attention (wgmma): batch and splits must be at most 65535");
  const CUtensorMap map_q = make_rows_map(type, q, batch * heads, 1, "latent attention (wgmma): q");
  const CUtensorMap map_cache = make_rows_map(type, cache, context, batch, "latent attention (wgmma): cache");
  const dim3 grid(static_cast<unsigned>((heads + kRows - 1) / kRows), static_cast<unsigned>(splits),
                  static_cast<unsigned>(batch));
  const auto run = [&](auto tag) {
    using T = decltype(tag);
    ROOFLINE_CUDA_CHECK(
        cudaFuncSetAttribute(latent_wgmma_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    latent_wgmma_kernel<T><<<grid, kThreads, kSmemBytes, stream>>>(
        map_q, map_cache, part_o, part_ml, static_cast<T*>(out), heads, context, tiles_per_split, splits, scale_log2);
  };
  if (type == StorageFormat::bf16) {
    run(__nv_bfloat16{});
  } else {
    run(__half{});
  }
  ROOFLINE_CHECK_LAUNCH("latent_wgmma_kernel");
}

}  // namespace roofline::kernels::detail
