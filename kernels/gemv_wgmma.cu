// The Hopper GEMV (sm_90a) for batches of 9 to 256 vectors: W and x fed by TMA into wgmma, the batch
// as wgmma's N ("swap AB": y^T = W . x^T, W the 64-row A operand of each warpgroup). Batches above
// 64 are skinny GEMMs (C[m, n] = A[m, k] B[n, k]^T with m <= 256 is this GEMV of n rows and batch m),
// which the compute suite runs through it. The grouped GEMM of MoE experts at decode runs through it
// too (gemm_grouped_swap_ab): a row mapper (PlainRows, ExpertRows) says which rows of W, which
// vectors of x and which outputs a tile has, and 8-bit experts take the k = 32 wgmma.
//
// Why a second tensor-core GEMV: gemv.cu's mma.sync kernels read x from L2 once per 16 or 32 rows
// of W, so at batch 64 they move twice as many bytes through L2 as W itself, and their registers
// cap the bytes in flight. Here a block owns 128 rows of W and stages 128-byte-wide k slices of W
// and of every vector in shared memory (TMA, 128-byte swizzle, a ring of 4-6 stages): x is read
// once per 128 rows, the bytes in flight are the ring's (two blocks per SM), and one warp issues
// all the loads.
//
// Split-K: m / 128 row tiles are often fewer than the SMs (64 for 8192 rows on 132 SMs), so each
// tile's k is cut into `splits` ranges, one block each. Every block of a tile writes its fp32
// partial tile to the workspace; the last to arrive (an atomic ticket per tile) adds the partials
// in split order, so that the result does not depend on which block came last, writes y and resets
// the ticket for the next launch.
//
// Vector groups: at batches of 17-64 on a small W with a short k (kernel_tiles::gemv_wgmma_split says
// where), the plain GEMV first gives each 64-row tile two blocks, each with half the batch (N / 2
// vectors), and splits k only if SMs are still idle: the tile's second block reads W from L2, and no
// partials are added.
//
// How many splits, and when two blocks share an SM: kernel_tiles::gemv_wgmma_split, where the
// measurements that set the rule are, and the unit tests (tests/unit/test_bench.cpp).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "gemm.hpp"
#include "gemv_wgmma.hpp"
#include "roofline/model/kernel_tiles.hpp"
#include "storage_format.cuh"
#include "tc_ptx.cuh"
#include "tma_host.cuh"
#include "wgmma.cuh"

namespace roofline::kernels::detail {

namespace gemv_wgmma_layout {

// Rows of W per block: 128 (two consumer warpgroups of 64 rows each), or 64 where 64-row tiles fit
// one block per SM (kernel_tiles::gemv_wgmma_split): the two warpgroups then share the 64 rows and
// take alternate k blocks, their sums added in shared memory at the end. That doubles the blocks
// without a split of k across blocks.
inline constexpr int kRows = 128;
inline constexpr int kRowBytes = 128;                   // bytes of k per stage: one row of the 128-byte swizzle
inline constexpr int kConsumerThreads = 256;            // warps 0-7: the two warpgroups (wgmma needs them aligned)
inline constexpr int kThreads = kConsumerThreads + 32;  // warp 8: the producer
static_assert(kernel_tiles::gemm_swapab.tile_n == kRows && kernel_tiles::gemm_swapab.tile_m == gemv_wgmma_max_batch &&
                  kernel_tiles::gemm_swapab.threads == kThreads && kernel_tiles::gemm_swapab.tile_k == kRowBytes / 2,
              "the compute suite's byte count of the swapped skinny GEMM uses these tiles");

// BPS blocks per SM, each with at most ~110 KB (two) or ~220 KB (one) of the 228 KB (1 KB per
// block is the system's). Up to N = 64 both variants exist (two blocks per SM where the grid has
// more blocks than SMs); at N = 128 and 256 (skinny GEMMs, not decode batches) the accumulators
// take 64 or 128 registers a thread, so only one block per SM. The one-block ring of N <= 64 stops
// at six stages: nine were no faster on the H200 (within 1-2%, slower in all three shapes timed).
// 64-row blocks hold twice the stages of half the size (the same W bytes in flight), an even count so
// that each warpgroup always meets the same stages.
template <int BN, int BPS, int ROWS>
struct Stages {
  static_assert(BPS == 1 || (BPS == 2 && BN <= 64), "two blocks per SM only up to N = 64");
  static_assert(ROWS == 128 || (ROWS == 64 && BN <= 64), "64-row blocks only up to N = 64");
  static constexpr int blocks_per_sm = BPS;
  static constexpr int smem_budget = BPS == 2 ? 110 * 1024 : 220 * 1024;
  static constexpr int bytes_w = ROWS * kRowBytes;
  static constexpr int bytes_x = BN * kRowBytes;
  static constexpr int bytes = bytes_w + bytes_x;
  static constexpr int deepest = (BPS == 1 && BN <= 64 ? 6 : 8) * (ROWS == 64 ? 2 : 1);
  static constexpr int count = std::min(deepest, smem_budget / bytes) & (ROWS == 64 ? ~1 : ~0);
  // The threads that finish the block (write the partial tile, or y): both warpgroups at 128 rows,
  // the first at 64 (the second's sums added to its own).
  static constexpr int epilogue_threads = ROWS == 64 ? 128 : kConsumerThreads;
  static_assert(count >= 2, "a ring needs two stages");
  // The stages, 2 x count mbarriers, and 1024 bytes to align the stages to the swizzle's period.
  static constexpr int smem = count * bytes + 2 * count * 8 + 1024;
};

using Plan = kernel_tiles::GemvWgmmaSplit;

// The outputs a plan's blocks are split over: each row tile's vector groups.
std::size_t output_tiles(const Plan& plan) {
  return static_cast<std::size_t>(plan.tiles) * static_cast<std::size_t>(plan.vector_groups);
}
// Tickets first (one per output tile, padded to 256 bytes), then the partial tiles (rows x N fp32
// each: every epilogue thread's accumulators, tile_n / 2 of them, as float4s accumulator-major).
std::size_t ticket_bytes(const Plan& plan) {
  return (output_tiles(plan) * sizeof(unsigned) + 255) / 256 * 256;
}
std::size_t partial_bytes(const Plan& plan) {
  if (plan.splits == 1) return 0;
  return output_tiles(plan) * plan.splits * plan.rows * plan.tile_n * sizeof(float);
}

}  // namespace gemv_wgmma_layout

// A block's rows: W's first row in its tensor map, the tile's first output row, x's first vector
// and how many of the tile's vectors are real (the TMA box holds N; the rest are not stored).
struct GemvTile {
  int w_row = 0;
  int row0 = 0;
  int x_row = 0;
  int vectors = 0;
  int expert = 0;
};

// (Outside the anonymous namespace: the host pass of nvcc does not see their device-side use.)
// The plain GEMV: tile t is rows t * ROWS .. of W, every vector of x.
struct PlainRows {
  int batch = 0;
  __device__ GemvTile tile(int t, int rows) const {
    return GemvTile{.w_row = t * rows, .row0 = t * rows, .x_row = 0, .vectors = batch, .expert = 0};
  }
};

// The grouped GEMM of MoE experts, swapped: each expert with tokens is n rows of the stacked W
// [E x n x k] (its weights) cut into tiles_per_expert tiles, and its tokens, rows x_row .. x_row +
// tokens - 1 of the stacked activations, the vectors. The experts with tokens travel in the launch's
// parameters (no device table to fetch before the first load): at most kMaxExperts of them.
struct ExpertRows {
  static constexpr int kMaxExperts = kernel_tiles::grouped_gemv_wgmma_max_experts;
  struct Expert {
    int row = 0;                // the expert's first token in the stacked activations (and in C)
    unsigned short expert = 0;  // which expert: its weights' row e * n, its weight scale
    unsigned short tokens = 0;
  };
  int n = 0;
  int tiles_per_expert = 1;
  Expert experts[kMaxExperts];
  __device__ GemvTile tile(int t, int rows) const {
    const Expert& e = experts[t / tiles_per_expert];
    const int row0 = (t % tiles_per_expert) * rows;
    return GemvTile{
        .w_row = e.expert * n + row0, .row0 = row0, .x_row = e.row, .vectors = e.tokens, .expert = e.expert};
  }
};

struct GemvWgmmaProblem {
  int ld = 0;  // rows of the output's rows: m (plain), n (grouped); output (v, r) at y[(x_row + v) * ld + r]
  int k = 0;
  int vector_groups = 1;  // of tile_n vectors each: blocks per row tile, before the splits
  int splits = 1;
  int k_blocks_per_split = 0;
  unsigned* tickets = nullptr;
  float* partials = nullptr;        // [output tile][split][BN / 8][epilogue thread] float4s
  const float* a_scale = nullptr;   // 8-bit operands: x's scale (one float) ...
  const float* b_scales = nullptr;  // ... and each expert's weight scale
};

namespace {

using namespace gemv_wgmma_layout;

// 16-bit operands write their own type; 8-bit ones (FP8 experts) bf16, scaled by x's and the
// expert's scales.
template <typename T>
using GemvOut = std::conditional_t<TraitsOf<T>::bits == 8, __nv_bfloat16, T>;

template <typename T, int BN, int BPS, int ROWS, typename Rows>
__global__ void __launch_bounds__(kThreads, BPS)
    gemv_wgmma_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_x,
                      GemvOut<T>* __restrict__ y, const __grid_constant__ Rows rows_of, GemvWgmmaProblem p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using S = Stages<BN, BPS, ROWS>;
  constexpr bool kScaled = TraitsOf<T>::bits == 8;
  constexpr int kAcc = BN / 2;
  constexpr bool kShared = ROWS == 64;  // both warpgroups on the same rows, alternate k blocks
  extern __shared__ unsigned char smem_raw[];
  __shared__ bool last_of_tile;
  const uint32_t smem = (ptx::smem_addr(smem_raw) + 1023u) & ~1023u;
  const uint32_t smem_w = smem;                          // count x [ROWS rows][128 bytes]
  const uint32_t smem_x = smem + S::count * S::bytes_w;  // count x [BN rows][128 bytes]
  const uint32_t full_bar = smem_x + S::count * S::bytes_x;
  const uint32_t empty_bar = full_bar + S::count * 8;

  // Blocks in the order (row tile, vector group, split): those sharing W rows run side by side.
  const int tile = static_cast<int>(blockIdx.x) / p.splits;  // the output tile: row tile x vector group
  const int split = static_cast<int>(blockIdx.x) % p.splits;
  constexpr int kBK = kRowBytes / static_cast<int>(sizeof(T));  // elements of k per stage
  const int k_blocks = (p.k + kBK - 1) / kBK;
  const int kb_begin = split * p.k_blocks_per_split;
  const int kb_end = min(k_blocks, kb_begin + p.k_blocks_per_split);
  GemvTile at = rows_of.tile(tile / p.vector_groups, ROWS);
  if (p.vector_groups > 1) {
    const int group = tile % p.vector_groups;
    at.x_row += group * BN;
    at.vectors = min(BN, at.vectors - group * BN);
  }

  if (threadIdx.x == 0) {
    for (int s = 0; s < S::count; ++s) {
      ptx::mbarrier_init(full_bar + s * 8, 1);
      ptx::mbarrier_init(empty_bar + s * 8, kShared ? 128 : kConsumerThreads);
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  if (threadIdx.x >= kConsumerThreads) {
    if (threadIdx.x == kConsumerThreads) {
      for (int kb = kb_begin; kb < kb_end; ++kb) {
        const int i = kb - kb_begin;
        const int s = i % S::count;
        const uint32_t phase = static_cast<uint32_t>(i / S::count) & 1u;
        // A fresh barrier counts as having completed the phase before phase 0.
        ptx::mbarrier_wait(empty_bar + s * 8, phase ^ 1u);
        ptx::mbarrier_arrive_expect_tx(full_bar + s * 8, S::bytes);
        ptx::tma_load_2d(smem_w + s * S::bytes_w, &map_w, full_bar + s * 8, kb * kBK, at.w_row);
        ptx::tma_load_2d(smem_x + s * S::bytes_x, &map_x, full_bar + s * 8, kb * kBK, at.x_row);
      }
    }
    return;  // the consumers sync among themselves from here on (named barrier 1)
  }

  // 128 rows: warpgroup c takes rows 64c .. 64c + 63 of every k block. 64 rows: warpgroup c takes
  // the tile's rows in k blocks c, c + 2, ...
  const int consumer = static_cast<int>(threadIdx.x) / 128;
  const int first = kShared ? consumer : 0;
  const int step = kShared ? 2 : 1;
  const int row_offset = kShared ? 0 : consumer * 64;
  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
  ptx::fence_registers(acc);
  for (int kb = kb_begin + first; kb < kb_end; kb += step) {
    const int i = kb - kb_begin;
    const int s = i % S::count;
    const uint32_t phase = static_cast<uint32_t>(i / S::count) & 1u;
    ptx::mbarrier_wait(full_bar + s * 8, phase);
    const uint64_t desc_w = ptx::wgmma_desc_sw128(smem_w + s * S::bytes_w + row_offset * kRowBytes);
    const uint64_t desc_x = ptx::wgmma_desc_sw128(smem_x + s * S::bytes_x);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kRowBytes / 32; ++kk) {
      // 32 bytes of k per wgmma (16 16-bit or 32 8-bit elements): +2 in the descriptor's 16-byte units.
      if constexpr (kScaled) {
        ptx::wgmma_m64nNk32_ss<T, BN>(acc, desc_w + 2 * kk, desc_x + 2 * kk, 1);
      } else {
        ptx::wgmma_m64nNk16_ss<T, BN>(acc, desc_w + 2 * kk, desc_x + 2 * kk, 1);
      }
    }
    ptx::wgmma_commit();
    // Keep this stage's group in flight; this warpgroup's one before is complete, and its stage free.
    ptx::wgmma_wait<1>();
    if (i >= step) ptx::mbarrier_arrive(empty_bar + ((i - step) % S::count) * 8);
  }
  ptx::wgmma_wait<0>();
  ptx::fence_registers(acc);
  if constexpr (kShared) {
    // The second warpgroup's sums into the first's, through the (now idle) W stages: every TMA load
    // has landed (each was waited for) and both warpgroups' wgmmas are complete past the barrier.
    float* scratch = reinterpret_cast<float*>(smem_raw + (smem - ptx::smem_addr(smem_raw)));
    const int t = static_cast<int>(threadIdx.x) % 128;
    ptx::named_barrier_sync(1, kConsumerThreads);
    if (consumer == 1) {
#pragma unroll
      for (int i = 0; i < kAcc; ++i) scratch[i * 128 + t] = acc[i];
    }
    ptx::named_barrier_sync(1, kConsumerThreads);
    if (consumer == 1) return;
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] += scratch[i * 128 + t];
  }

  if (p.splits > 1) {
    // A block's partial tile is kAcc / 4 rows of float4s, one per epilogue thread: store (and load) i
    // of a warp covers 512 contiguous bytes. (Thread-major, each thread's kAcc floats in a row, put a
    // warp's store 128 bytes apart per thread: half the sectors ncu counted were excess.)
    const auto partial_of = [&](int of_split) {
      const std::size_t block = static_cast<std::size_t>(tile) * p.splits + of_split;
      return reinterpret_cast<float4*>(p.partials) + block * (kAcc / 4) * S::epilogue_threads + threadIdx.x;
    };
    float4* mine = partial_of(split);
#pragma unroll
    for (int i = 0; i < kAcc; i += 4) {
      __stcg(mine + (i / 4) * S::epilogue_threads, make_float4(acc[i], acc[i + 1], acc[i + 2], acc[i + 3]));
    }
    __threadfence();
    ptx::named_barrier_sync(1, S::epilogue_threads);
    if (threadIdx.x == 0) last_of_tile = atomicAdd(p.tickets + tile, 1u) == static_cast<unsigned>(p.splits - 1);
    ptx::named_barrier_sync(1, S::epilogue_threads);
    if (!last_of_tile) return;
    __threadfence();
    // The sum in split order, this block's own partial read back like the others': the same
    // result whichever block arrived last. Unrolled so that several splits' loads are in flight at
    // once: this sum is serial at the end of the call, one L2 round trip per unrolled step.
    // At most 64 (one block per SM) or 32 loaded values a thread on top of the accumulators, so that
    // nothing spills.
    constexpr int kLoadBudget = (BPS == 1 ? 64 : 32) / kAcc;
    constexpr int kSplitsInFlight = kLoadBudget < 1 ? 1 : (kLoadBudget > 4 ? 4 : kLoadBudget);
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
#pragma unroll kSplitsInFlight
    for (int s = 0; s < p.splits; ++s) {
      const float4* part = partial_of(s);
#pragma unroll
      for (int i = 0; i < kAcc; i += 4) {
        const float4 v = __ldcg(part + (i / 4) * S::epilogue_threads);
        acc[i] += v.x;
        acc[i + 1] += v.y;
        acc[i + 2] += v.z;
        acc[i + 3] += v.w;
      }
    }
    if (threadIdx.x == 0) p.tickets[tile] = 0;  // every block of the tile has arrived: ready for the next launch
  }

  // Accumulator layout of m64nNk16 (and of m64nNk32): thread t of the warpgroup holds, for j = 0 ..
  // N/8 - 1, acc[4j], acc[4j + 1] at (row 16 (t / 32) + (t % 32) / 4, vectors 8j + 2 (t % 4) + 0, 1)
  // and acc[4j + 2], acc[4j + 3] eight rows below.
  float scale = 1.0f;
  if constexpr (kScaled) scale = __ldg(p.a_scale) * __ldg(p.b_scales + at.expert);
  const int t = static_cast<int>(threadIdx.x) % 128;
  const int row = at.row0 + row_offset + (t / 32) * 16 + (t % 32) / 4;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int vector = 8 * j + 2 * (t % 4) + c;
      if (vector >= at.vectors) continue;
      GemvOut<T>* out = y + static_cast<std::int64_t>(at.x_row + vector) * p.ld;
      if (row < p.ld) out[row] = TraitsOf<GemvOut<T>>::from_float(scale * acc[4 * j + c]);
      if (row + 8 < p.ld) out[row + 8] = TraitsOf<GemvOut<T>>::from_float(scale * acc[4 * j + 2 + c]);
    }
  }
#else
  // Built without sm_90a code: the host never launches this (gemv_kernel_supported is false).
  __trap();
#endif
}

// Row-major [rows][k] matrix of 16- or 8-bit elements, in boxes of box_rows x 128 bytes with the
// 128-byte swizzle.
CUtensorMap k_major_map(StorageFormat format, const void* base, std::int64_t rows, std::int64_t k, int box_rows,
                        const char* what) {
  const auto bytes = static_cast<cuuint64_t>(bytes_of(format));
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k) * bytes};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(kRowBytes / bytes), static_cast<cuuint32_t>(box_rows)};
  return make_tensor_map_sw128(format, base, 2, dims, strides, box, what);
}

// One launch of plan.tiles x plan.splits blocks; `problem` without its workspace pointers.
template <typename T, int BN, int BPS, int ROWS, typename Rows>
cudaError_t launch_rows(const CUtensorMap& map_w, const CUtensorMap& map_x, void* y, const Rows& rows,
                        GemvWgmmaProblem problem, const Plan& plan, void* workspace, cudaStream_t stream) {
  using S = Stages<BN, BPS, ROWS>;
  const cudaError_t attribute = cudaFuncSetAttribute(gemv_wgmma_kernel<T, BN, BPS, ROWS, Rows>,
                                                     cudaFuncAttributeMaxDynamicSharedMemorySize, S::smem);
  if (attribute != cudaSuccess) return attribute;
  auto* bytes = static_cast<unsigned char*>(workspace);
  problem.vector_groups = plan.vector_groups;
  problem.splits = plan.splits;
  problem.k_blocks_per_split = plan.k_blocks_per_split;
  problem.tickets = reinterpret_cast<unsigned*>(bytes);
  problem.partials = reinterpret_cast<float*>(bytes + ticket_bytes(plan));
  const unsigned blocks = static_cast<unsigned>(output_tiles(plan)) * static_cast<unsigned>(plan.splits);
  gemv_wgmma_kernel<T, BN, BPS, ROWS, Rows>
      <<<blocks, kThreads, S::smem, stream>>>(map_w, map_x, static_cast<GemvOut<T>*>(y), rows, problem);
  return cudaGetLastError();
}

template <typename T, int BN, int BPS, int ROWS>
cudaError_t launch_tile_n(const GemvArgs& a, const Plan& plan, cudaStream_t stream) {
  const CUtensorMap map_w = k_major_map(a.weights, a.w, a.m, a.k, ROWS, "gemv wgmma W");
  const CUtensorMap map_x = k_major_map(a.activations, a.x, a.batch, a.k, BN, "gemv wgmma x");
  const GemvWgmmaProblem problem{.ld = static_cast<int>(a.m), .k = static_cast<int>(a.k)};
  return launch_rows<T, BN, BPS, ROWS>(map_w, map_x, a.y, PlainRows{.batch = static_cast<int>(a.batch)}, problem, plan,
                                       a.workspace, stream);
}

// N <= 64 (decode batches): blocks per SM (1 or 2) x rows per block (128 or 64).
template <typename T, int BN>
cudaError_t launch_decode_n(const GemvArgs& a, const Plan& plan, cudaStream_t stream) {
  if (plan.rows == 64) {
    return plan.blocks_per_sm == 2 ? launch_tile_n<T, BN, 2, 64>(a, plan, stream)
                                   : launch_tile_n<T, BN, 1, 64>(a, plan, stream);
  }
  return plan.blocks_per_sm == 2 ? launch_tile_n<T, BN, 2, 128>(a, plan, stream)
                                 : launch_tile_n<T, BN, 1, 128>(a, plan, stream);
}

// The grouped launch: the experts with tokens in order, each `tiles_per_expert` tiles.
struct GroupedRows {
  ExpertRows rows;
  int experts_with_tokens = 0;
  int most_tokens = 0;
};

GroupedRows grouped_rows(const GroupedGemmArgs& a) {
  GroupedRows g;
  g.rows.n = a.n;
  for (std::size_t e = 0; e + 1 < a.row_offsets.size(); ++e) {
    const int tokens = a.row_offsets[e + 1] - a.row_offsets[e];
    if (tokens == 0) continue;
    g.most_tokens = std::max(g.most_tokens, tokens);
    if (g.experts_with_tokens < ExpertRows::kMaxExperts) {
      g.rows.experts[g.experts_with_tokens] = ExpertRows::Expert{.row = a.row_offsets[e],
                                                                 .expert = static_cast<unsigned short>(e),
                                                                 .tokens = static_cast<unsigned short>(tokens)};
    }
    ++g.experts_with_tokens;
  }
  return g;
}

Plan grouped_plan(const GroupedRows& g, const GroupedGemmArgs& a, int sms) {
  return kernel_tiles::grouped_gemv_wgmma_split(g.experts_with_tokens, a.n, a.k, bytes_of(a.operands), g.most_tokens,
                                                sms);
}

template <typename T, int BN, int BPS, int ROWS>
cudaError_t launch_grouped_tile(const GroupedGemmArgs& a, GroupedRows g, const Plan& plan, void* workspace,
                                cudaStream_t stream) {
  const int experts = static_cast<int>(a.row_offsets.size()) - 1;
  const CUtensorMap map_w =
      k_major_map(a.operands, a.b, static_cast<std::int64_t>(experts) * a.n, a.k, ROWS, "grouped gemv wgmma W");
  const CUtensorMap map_x = k_major_map(a.operands, a.a, a.row_offsets.back(), a.k, BN, "grouped gemv wgmma x");
  g.rows.tiles_per_expert = (a.n + ROWS - 1) / ROWS;
  const GemvWgmmaProblem problem{.ld = a.n, .k = a.k, .a_scale = a.a_scale, .b_scales = a.b_scales};
  return launch_rows<T, BN, BPS, ROWS>(map_w, map_x, a.c, g.rows, problem, plan, workspace, stream);
}

template <typename T, int BN>
cudaError_t launch_grouped_n(const GroupedGemmArgs& a, const GroupedRows& g, const Plan& plan, void* workspace,
                             cudaStream_t stream) {
  if (plan.rows == 64) {
    return plan.blocks_per_sm == 2 ? launch_grouped_tile<T, BN, 2, 64>(a, g, plan, workspace, stream)
                                   : launch_grouped_tile<T, BN, 1, 64>(a, g, plan, workspace, stream);
  }
  return plan.blocks_per_sm == 2 ? launch_grouped_tile<T, BN, 2, 128>(a, g, plan, workspace, stream)
                                 : launch_grouped_tile<T, BN, 1, 128>(a, g, plan, workspace, stream);
}

}  // namespace

std::size_t gemv_wgmma_workspace_bytes(std::int64_t m, std::int64_t k, std::int64_t batch, int sms) {
  const Plan plan = kernel_tiles::gemv_wgmma_split(m, k, batch, sms);
  return ticket_bytes(plan) + partial_bytes(plan);
}

const char* gemv_wgmma_unsupported(std::int64_t m, std::int64_t k, std::int64_t batch, StorageFormat weights) {
  if (!half16_formats.contains(weights)) return "the wgmma GEMV takes 16-bit W (bf16 or fp16) in the format of x";
  if (batch > gemv_wgmma_max_batch) return "the wgmma GEMV handles batches up to 256";
  if (k % 8 != 0) return "the wgmma GEMV needs k to be a multiple of 8 (TMA's 16-byte row pitch)";
  if (m > 0x7FFFFFFF / 2 || k > 0x7FFFFFFF / 2) return "the wgmma GEMV needs m and k below 2^30";
  return nullptr;
}

cudaError_t launch_gemv_wgmma(const GemvArgs& a, cudaStream_t stream) {
  if (a.workspace == nullptr) return cudaErrorInvalidValue;
  const Plan plan = kernel_tiles::gemv_wgmma_split(a.m, a.k, a.batch, a.sms);
  return dispatch_storage<half16_formats>(a.weights, [&](auto traits) {
    using T = typename decltype(traits)::Element;
    switch (plan.tile_n) {
      case 16: return launch_decode_n<T, 16>(a, plan, stream);
      case 32: return launch_decode_n<T, 32>(a, plan, stream);
      case 64: return launch_decode_n<T, 64>(a, plan, stream);
      case 128: return launch_tile_n<T, 128, 1, 128>(a, plan, stream);
      default: return launch_tile_n<T, 256, 1, 128>(a, plan, stream);
    }
  });
}

kernel_tiles::GemvWgmmaSplit grouped_gemv_wgmma_plan(const GroupedGemmArgs& args, int sms) {
  return grouped_plan(grouped_rows(args), args, sms);
}

std::size_t grouped_gemv_wgmma_workspace_bytes(const GroupedGemmArgs& args, int sms) {
  const Plan plan = grouped_gemv_wgmma_plan(args, sms);
  return ticket_bytes(plan) + partial_bytes(plan);
}

const char* grouped_gemv_wgmma_unsupported(const GroupedGemmArgs& args) {
  if (args.operands != StorageFormat::bf16 && args.operands != StorageFormat::fp8_e4m3) {
    return "the swapped grouped GEMM is built for bf16 and fp8_e4m3 operands";
  }
  const GroupedRows g = grouped_rows(args);
  if (g.experts_with_tokens == 0) return "no expert has tokens";
  if (g.most_tokens > 64) return "the swapped grouped GEMM takes experts of at most 64 tokens (wgmma's N)";
  if (g.experts_with_tokens > ExpertRows::kMaxExperts) return "the swapped grouped GEMM takes at most 256 experts";
  return nullptr;
}

cudaError_t launch_grouped_gemv_wgmma(const GroupedGemmArgs& args, int sms, void* workspace, cudaStream_t stream) {
  const GroupedRows g = grouped_rows(args);
  const Plan plan = grouped_plan(g, args, sms);
  if (workspace == nullptr && plan.splits > 1) return cudaErrorInvalidValue;
  const auto by_tile_n = [&]<typename T>() {
    switch (plan.tile_n) {
      case 16: return launch_grouped_n<T, 16>(args, g, plan, workspace, stream);
      case 32: return launch_grouped_n<T, 32>(args, g, plan, workspace, stream);
      default: return launch_grouped_n<T, 64>(args, g, plan, workspace, stream);
    }
  };
  if (args.operands == StorageFormat::fp8_e4m3) {
    return by_tile_n.template operator()<StorageTraits<StorageFormat::fp8_e4m3>::Element>();
  }
  return by_tile_n.template operator()<StorageTraits<StorageFormat::bf16>::Element>();
}

}  // namespace roofline::kernels::detail
