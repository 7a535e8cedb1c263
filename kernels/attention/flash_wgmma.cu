// Flash attention forward on Hopper (sm_90a): TMA-fed, warp-specialised, both products on wgmma.
//
// One block per (batch x head, 128-query tile), head_dim 128. Warp 8 is the producer: one thread
// loads the Q tile once and then streams 64-key K and V tiles through three shared-memory stages
// with TMA (3-D tensor maps [batch*heads][seq][d], so rows past a head's sequence end read as
// zero), counting them on "full" mbarriers and waiting on "empty" ones. Warpgroups 0 and 1 (warps
// 0-7) each own 64 query rows and, per K/V tile:
//   S = Q K^T   8 x wgmma m64n64k16, A = Q and B = K from shared memory (both d-contiguous, K-major)
//   mask, online softmax in base 2 on the S accumulators (a row lives in the 4 lanes of a quad)
//   P -> 16 bits in registers: the accumulator layout of m64nN is, per warp, the A-fragment layout
//         of a register-A wgmma, so P never goes through shared memory
//   O += P V    4 x wgmma m64n128k16, A = P from registers, B = V from shared memory read N-major
//               (imm-trans-b: V is stored [key][d], d contiguous)
// then release the stage. O is divided by the row sum once at the end. The two consumer
// warpgroups run independently, so one's softmax overlaps the other's matrix products.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../attention.hpp"
#include "../cuda_check.cuh"
#include "../tc_ptx.cuh"
#include "../tma_host.cuh"
#include "../wgmma.cuh"
#include "flash_internal.cuh"

namespace roofline::kernels::detail {
namespace {

constexpr int kD = flash_wgmma_tiling.head_dim;
constexpr int kBM = flash_wgmma_tiling.block_m;
constexpr int kBN = flash_wgmma_tiling.block_n;
constexpr int kStages = flash_wgmma_tiling.kv_stages;
constexpr int kThreads = flash_wgmma_tiling.warps * 32;
static_assert(kD == 128 && kBM == 128 && kThreads == 288 && (kBN == 64 || kBN == 128),
              "two 64-row consumer warpgroups + one producer warp, d split in two 64-wide boxes");
constexpr int kQBoxBytes = kBM * 128;        // [128 rows][64 elements] of 16 bits: one TMA box, 128-byte rows
constexpr uint32_t kKvBoxBytes = kBN * 128;  // [kBN keys][64 elements]
constexpr int kQBytes = 2 * kQBoxBytes;
constexpr int kTileBytes = 2 * kKvBoxBytes;  // one K (or V) tile: two boxes, d 0..63 and 64..127
constexpr int kSmemBytes = kQBytes + 2 * kStages * kTileBytes + 8 * (1 + 2 * kStages) + 1024;
static_assert(kSmemBytes == flash_wgmma_tiling.smem_bytes);
constexpr int kConsumerThreads = 256;  // warps 0-7; warp 8 is the producer

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Issues S = Q K^T for one K tile as one wgmma group (not waited for).
template <typename T>
__device__ __forceinline__ void issue_qk(float (&s_acc)[kBN / 2], uint32_t smem_q, uint32_t k_tile, int consumer) {
  ptx::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kD / 16; ++kk) {
    const uint32_t k_offset = static_cast<uint32_t>(kk % 4) * 32;  // 16 elements further along d
    const uint64_t desc_q =
        ptx::wgmma_desc_sw128(smem_q + static_cast<uint32_t>(kk / 4) * kQBoxBytes + consumer * 64 * 128 + k_offset);
    const uint64_t desc_k = ptx::wgmma_desc_sw128(k_tile + static_cast<uint32_t>(kk / 4) * kKvBoxBytes + k_offset);
    if constexpr (kBN == 128) {
      ptx::wgmma_m64n128k16_ss<T>(s_acc, desc_q, desc_k, kk > 0 ? 1 : 0);  // the first k step overwrites
    } else {
      ptx::wgmma_m64n64k16_ss<T>(s_acc, desc_q, desc_k, kk > 0 ? 1 : 0);
    }
  }
  ptx::wgmma_commit();
}

// Issues O += P V for one V tile as one wgmma group (not waited for). P must stay untouched until
// the group completes.
template <typename T>
__device__ __forceinline__ void issue_pv(float (&o_acc)[64], const uint32_t (&p)[kBN / 16][4], uint32_t v_tile,
                                         uint32_t v_leading_bytes, uint32_t v_stride_bytes) {
  ptx::wgmma_fence();
#pragma unroll
  for (int kt = 0; kt < kBN / 16; ++kt) {
    // keys 16kt..16kt+15: 16 rows of 128 bytes further into each box; the second 64-wide d box is
    // kKvBoxBytes away (the leading byte offset), 8-key groups 1024 bytes (the stride offset).
    ptx::wgmma_m64n128k16_rs<T>(o_acc, p[kt],
                                ptx::wgmma_desc_sw128_mn(v_tile + kt * 16 * 128, v_leading_bytes, v_stride_bytes), 1);
  }
  ptx::wgmma_commit();
}

template <int N>
__device__ __forceinline__ void fence_words(uint32_t (&r)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) asm volatile("" : "+r"(r[i][j])::"memory");
  }
}

// Masks one S tile (keys from k0), updates the running max and sum of this thread's two rows
// (row0, row0 + 8), rescales O, and writes P in the A-fragment layout of the register-A wgmma.
template <typename T>
__device__ __forceinline__ void softmax_tile(float (&s_acc)[kBN / 2], float (&o_acc)[64], uint32_t (&p)[kBN / 16][4],
                                             float (&row_max)[2], float (&row_sum)[2], int k0, int row0, int first_row,
                                             int lane, int seq, int causal, float scale_log2) {
  using Traits = TraitsOf<T>;
  if (k0 + kBN > seq || (causal && k0 + kBN - 1 > first_row)) {
#pragma unroll
    for (int n8 = 0; n8 < kBN / 8; ++n8) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = k0 + n8 * 8 + (lane % 4) * 2 + (e % 2);
        const int row = row0 + (e / 2) * 8;
        if (key >= seq || (causal && key > row)) s_acc[4 * n8 + e] = -INFINITY;
      }
    }
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float mx = -INFINITY;
#pragma unroll
    for (int n8 = 0; n8 < kBN / 8; ++n8) mx = fmaxf(mx, fmaxf(s_acc[4 * n8 + 2 * h], s_acc[4 * n8 + 2 * h + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float new_max = fmaxf(row_max[h], mx * scale_log2);
    const float base = new_max == -INFINITY ? 0.0f : new_max;  // no -inf - -inf
    const float alpha = fast_exp2(row_max[h] - base);
    row_max[h] = new_max;
    float sum = 0.0f;
#pragma unroll
    for (int n8 = 0; n8 < kBN / 8; ++n8) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float prob = fast_exp2(fmaf(s_acc[4 * n8 + 2 * h + e], scale_log2, -base));
        s_acc[4 * n8 + 2 * h + e] = prob;
        sum += prob;
      }
    }
    row_sum[h] = row_sum[h] * alpha + sum;
#pragma unroll
    for (int n8 = 0; n8 < kD / 8; ++n8) {
      o_acc[4 * n8 + 2 * h] *= alpha;
      o_acc[4 * n8 + 2 * h + 1] *= alpha;
    }
  }
  // Accumulator layout (per warp: rows g, g+8; cols 8*n8 + 2*(lane%4)) -> A fragment of k step kt
  // (keys 16kt..16kt+15): {row g, keys +0..1}, {row g+8, +0..1}, {row g, +8..9}, {row g+8, +8..9}.
#pragma unroll
  for (int kt = 0; kt < kBN / 16; ++kt) {
    p[kt][0] = Traits::pack(s_acc[8 * kt + 0], s_acc[8 * kt + 1]);
    p[kt][1] = Traits::pack(s_acc[8 * kt + 2], s_acc[8 * kt + 3]);
    p[kt][2] = Traits::pack(s_acc[8 * kt + 4], s_acc[8 * kt + 5]);
    p[kt][3] = Traits::pack(s_acc[8 * kt + 6], s_acc[8 * kt + 7]);
  }
}
#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <typename T>
__global__ void __launch_bounds__(kThreads, 1)
    flash_wgmma_kernel(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
                       const __grid_constant__ CUtensorMap map_v, T* __restrict__ o, int heads, int group, int seq,
                       float scale_log2, int causal, uint32_t v_leading_bytes, uint32_t v_stride_bytes) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Traits = TraitsOf<T>;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = ptx::smem_addr(smem_raw);
  const uint32_t smem = (raw + 1023u) & ~1023u;
  const uint32_t smem_q = smem;
  const uint32_t smem_k = smem_q + kQBytes;
  const uint32_t smem_v = smem_k + kStages * kTileBytes;
  const uint32_t q_full = smem_v + kStages * kTileBytes;
  const uint32_t kv_full = q_full + 8;
  const uint32_t kv_empty = kv_full + 8 * kStages;

  const int bh = static_cast<int>(blockIdx.x);
  const int kv_index = (bh / heads) * (heads / group) + (bh % heads) / group;
  const int q0 = (static_cast<int>(gridDim.y) - 1 - static_cast<int>(blockIdx.y)) * kBM;
  const int kv_tiles_all = (seq + kBN - 1) / kBN;
  const int kv_tiles = causal ? min(kv_tiles_all, (q0 + kBM + kBN - 1) / kBN) : kv_tiles_all;
  const int warpgroup = static_cast<int>(threadIdx.x) / 128;  // 0, 1: consumers; 2: the producer warp

  if (threadIdx.x == 0) {
    ptx::mbarrier_init(q_full, 1);
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(kv_full + 8 * s, 1);
      ptx::mbarrier_init(kv_empty + 8 * s, kConsumerThreads);
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  if (warpgroup == 2) {
    if (threadIdx.x == kConsumerThreads) {
      ptx::mbarrier_arrive_expect_tx(q_full, kQBytes);
      ptx::tma_load_3d(smem_q, &map_q, q_full, 0, q0, bh);
      ptx::tma_load_3d(smem_q + kQBoxBytes, &map_q, q_full, 64, q0, bh);
      for (int j = 0; j < kv_tiles; ++j) {
        const int s = j % kStages;
        const uint32_t phase = static_cast<uint32_t>(j / kStages) & 1u;
        ptx::mbarrier_wait(kv_empty + 8 * s, phase ^ 1u);
        ptx::mbarrier_arrive_expect_tx(kv_full + 8 * s, 2 * kTileBytes);
        const uint32_t k_tile = smem_k + s * kTileBytes;
        const uint32_t v_tile = smem_v + s * kTileBytes;
        ptx::tma_load_3d(k_tile, &map_k, kv_full + 8 * s, 0, j * kBN, kv_index);
        ptx::tma_load_3d(k_tile + kKvBoxBytes, &map_k, kv_full + 8 * s, 64, j * kBN, kv_index);
        ptx::tma_load_3d(v_tile, &map_v, kv_full + 8 * s, 0, j * kBN, kv_index);
        ptx::tma_load_3d(v_tile + kKvBoxBytes, &map_v, kv_full + 8 * s, 64, j * kBN, kv_index);
      }
    }
  } else {
    const int consumer = warpgroup;
    const int t = static_cast<int>(threadIdx.x) % 128;
    const int lane = t % 32;
    const int first_row = q0 + consumer * 64;               // this warpgroup's rows: first_row .. first_row + 63
    const int row0 = first_row + (t / 32) * 16 + lane / 4;  // this thread's rows: row0 and row0 + 8
    // Tiles this warpgroup computes; causal: none past its last row (it still waits on and releases
    // the block's remaining tiles, in order, so that both warpgroups' arrivals stay in step).
    const int wg_tiles = causal ? min(kv_tiles, (first_row + 63) / kBN + 1) : kv_tiles;
    auto full_bar = [&](int j) { return kv_full + 8 * (j % kStages); };
    auto parity = [](int j) { return static_cast<uint32_t>(j / kStages) & 1u; };
    auto k_tile = [&](int j) { return smem_k + (j % kStages) * kTileBytes; };
    auto v_tile = [&](int j) { return smem_v + (j % kStages) * kTileBytes; };
    auto release = [&](int j) { ptx::mbarrier_arrive(kv_empty + 8 * (j % kStages)); };

    float o_acc[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) o_acc[i] = 0.0f;
    ptx::fence_registers(o_acc);
    float row_max[2] = {-INFINITY, -INFINITY};
    float row_sum[2] = {0.0f, 0.0f};
    uint32_t p[kBN / 16][4];
    float s_acc[kBN / 2];

    ptx::mbarrier_wait(q_full, 0);
    for (int j = 0; j < wg_tiles; ++j) {
      ptx::mbarrier_wait(full_bar(j), parity(j));
      issue_qk<T>(s_acc, smem_q, k_tile(j), consumer);
      ptx::wgmma_wait<0>();
      ptx::fence_registers(s_acc);
      softmax_tile<T>(s_acc, o_acc, p, row_max, row_sum, j * kBN, row0, first_row, lane, seq, causal, scale_log2);
      issue_pv<T>(o_acc, p, v_tile(j), v_leading_bytes, v_stride_bytes);
      ptx::wgmma_wait<0>();
      ptx::fence_registers(o_acc);
      fence_words(p);
      release(j);
    }
    for (int j = wg_tiles; j < kv_tiles; ++j) {
      ptx::mbarrier_wait(full_bar(j), parity(j));
      release(j);
    }

    // ---- O / row sum ----
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float total = row_sum[h];
      total += __shfl_xor_sync(0xffffffffu, total, 1);
      total += __shfl_xor_sync(0xffffffffu, total, 2);
      const float inv = total > 0.0f ? 1.0f / total : 0.0f;
      const int row = row0 + 8 * h;
      if (row >= seq) continue;
      T* out_row = o + (static_cast<std::size_t>(bh) * seq + row) * kD;
#pragma unroll
      for (int n8 = 0; n8 < kD / 8; ++n8) {
        *reinterpret_cast<uint32_t*>(out_row + n8 * 8 + (lane % 4) * 2) =
            Traits::pack(o_acc[4 * n8 + 2 * h] * inv, o_acc[4 * n8 + 2 * h + 1] * inv);
      }
    }
  }
#else
  __trap();
#endif
}

// [rows][seq][d] with rows = batch*heads (or batch*kv_heads), boxes of 64 d x box_seq positions.
CUtensorMap make_map(StorageFormat type, const void* base, int rows, int seq, int box_seq) {
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(kD), static_cast<cuuint64_t>(seq), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(kD) * 2, static_cast<cuuint64_t>(seq) * kD * 2};
  const cuuint32_t box[3] = {64, static_cast<cuuint32_t>(box_seq), 1};
  return make_tensor_map_sw128(type, base, 3, dims, strides, box, "flash wgmma");
}

template <typename T>
void launch(StorageFormat type, const AttentionShape& shape, float scale, const void* q, const void* k, const void* v,
            void* o, bool swap_v_offsets, cudaStream_t stream) {
  const CUtensorMap map_q = make_map(type, q, shape.batch * shape.heads, shape.seq, kBM);
  const CUtensorMap map_k = make_map(type, k, shape.batch * shape.kv_heads, shape.seq, kBN);
  const CUtensorMap map_v = make_map(type, v, shape.batch * shape.kv_heads, shape.seq, kBN);
  ROOFLINE_CUDA_CHECK(
      cudaFuncSetAttribute(flash_wgmma_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  const long long bh = static_cast<long long>(shape.batch) * shape.heads;
  const int q_tiles = (shape.seq + kBM - 1) / kBM;
  require(bh <= 0x7fffffff && q_tiles <= 65535, "flash attention (wgmma): grid too large for this shape");
  const dim3 grid(static_cast<unsigned>(bh), static_cast<unsigned>(q_tiles));
  flash_wgmma_kernel<T><<<grid, kThreads, kSmemBytes, stream>>>(
      map_q, map_k, map_v, static_cast<T*>(o), shape.heads, shape.heads / shape.kv_heads, shape.seq,
      scale * 1.4426950408889634f, shape.causal ? 1 : 0, swap_v_offsets ? 1024u : kKvBoxBytes,
      swap_v_offsets ? kKvBoxBytes : 1024u);
  ROOFLINE_CHECK_LAUNCH("flash_wgmma_kernel");
}

}  // namespace

void flash_wgmma_forward(StorageFormat type, const AttentionShape& shape, float scale, const void* q, const void* k,
                         const void* v, void* o, bool swap_v_offsets, cudaStream_t stream) {
  require(shape.head_dim == kD, "flash attention (wgmma): head_dim must be 128, got " + std::to_string(shape.head_dim));
  dispatch_storage<attention_formats>(type, [&](auto traits) {
    using T = typename decltype(traits)::Element;
    launch<T>(type, shape, scale, q, k, v, o, swap_v_offsets, stream);
  });
}

}  // namespace roofline::kernels::detail
