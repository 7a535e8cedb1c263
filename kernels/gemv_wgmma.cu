// The Hopper GEMV (sm_90a) for batches of 9 to 256 vectors: W and x fed by TMA into wgmma, the batch
// as wgmma's N ("swap AB": y^T = W . x^T, W the 64-row A operand of each warpgroup). Batches above
// 64 are skinny GEMMs (C[m, n] = A[m, k] B[n, k]^T with m <= 256 is this GEMV of n rows and batch m),
// which the compute suite runs through it.
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
// How many splits, and when two blocks share an SM: kernel_tiles::gemv_wgmma_split, where the
// measurements that set the rule are, and the unit tests (tests/unit/test_bench.cpp).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

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

// Tickets first (one per tile, padded to 256 bytes), then the partial tiles (rows x N fp32 each:
// every epilogue thread's accumulators, tile_n / 2 of them for 64 rows).
std::size_t ticket_bytes(const Plan& plan) {
  return (static_cast<std::size_t>(plan.tiles) * sizeof(unsigned) + 255) / 256 * 256;
}
std::size_t partial_bytes(const Plan& plan) {
  if (plan.splits == 1) return 0;
  return static_cast<std::size_t>(plan.tiles) * plan.splits * plan.rows * plan.tile_n * sizeof(float);
}

}  // namespace gemv_wgmma_layout

// (Outside the anonymous namespace: the host pass of nvcc does not see its device-side use.)
struct GemvWgmmaProblem {
  int m = 0;
  int k = 0;
  int batch = 0;
  int splits = 1;
  int k_blocks_per_split = 0;
  unsigned* tickets = nullptr;
  float* partials = nullptr;  // [tile][split][epilogue thread][BN / 2]
};

namespace {

using namespace gemv_wgmma_layout;

template <typename T, int BN, int BPS, int ROWS>
__global__ void __launch_bounds__(kThreads, BPS)
    gemv_wgmma_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_x,
                      T* __restrict__ y, GemvWgmmaProblem p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using S = Stages<BN, BPS, ROWS>;
  constexpr int kAcc = BN / 2;
  constexpr bool kShared = ROWS == 64;  // both warpgroups on the same rows, alternate k blocks
  extern __shared__ unsigned char smem_raw[];
  __shared__ bool last_of_tile;
  const uint32_t smem = (ptx::smem_addr(smem_raw) + 1023u) & ~1023u;
  const uint32_t smem_w = smem;                          // count x [ROWS rows][128 bytes]
  const uint32_t smem_x = smem + S::count * S::bytes_w;  // count x [BN rows][128 bytes]
  const uint32_t full_bar = smem_x + S::count * S::bytes_x;
  const uint32_t empty_bar = full_bar + S::count * 8;

  const int tile = static_cast<int>(blockIdx.x) / p.splits;
  const int split = static_cast<int>(blockIdx.x) % p.splits;
  const int k_blocks = (p.k * 2 + kRowBytes - 1) / kRowBytes;
  const int kb_begin = split * p.k_blocks_per_split;
  const int kb_end = min(k_blocks, kb_begin + p.k_blocks_per_split);
  const int row0 = tile * ROWS;
  constexpr int kBK = kRowBytes / 2;  // 16-bit elements of k per stage

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
        ptx::tma_load_2d(smem_w + s * S::bytes_w, &map_w, full_bar + s * 8, kb * kBK, row0);
        ptx::tma_load_2d(smem_x + s * S::bytes_x, &map_x, full_bar + s * 8, kb * kBK, 0);
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
      // 16 elements (32 bytes) of k per wgmma: +2 in the descriptor's 16-byte units.
      ptx::wgmma_m64nNk16_ss<T, BN>(acc, desc_w + 2 * kk, desc_x + 2 * kk, 1);
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
    const auto partial_of = [&](int of_split) {
      const std::size_t block = static_cast<std::size_t>(tile) * p.splits + of_split;
      return p.partials + (block * S::epilogue_threads + threadIdx.x) * kAcc;
    };
    float* mine = partial_of(split);
#pragma unroll
    for (int i = 0; i < kAcc; i += 4) {
      __stcg(reinterpret_cast<float4*>(mine + i), make_float4(acc[i], acc[i + 1], acc[i + 2], acc[i + 3]));
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
      const float* part = partial_of(s);
#pragma unroll
      for (int i = 0; i < kAcc; i += 4) {
        const float4 v = __ldcg(reinterpret_cast<const float4*>(part + i));
        acc[i] += v.x;
        acc[i + 1] += v.y;
        acc[i + 2] += v.z;
        acc[i + 3] += v.w;
      }
    }
    if (threadIdx.x == 0) p.tickets[tile] = 0;  // every block of the tile has arrived: ready for the next launch
  }

  // Accumulator layout of m64nNk16: thread t of the warpgroup holds, for j = 0 .. N/8 - 1, acc[4j],
  // acc[4j + 1] at (row 16 (t / 32) + (t % 32) / 4, vectors 8j + 2 (t % 4) + 0, 1) and acc[4j + 2],
  // acc[4j + 3] eight rows below.
  const int t = static_cast<int>(threadIdx.x) % 128;
  const int row = row0 + row_offset + (t / 32) * 16 + (t % 32) / 4;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int vector = 8 * j + 2 * (t % 4) + c;
      if (vector >= p.batch) continue;
      T* out = y + static_cast<std::int64_t>(vector) * p.m;
      if (row < p.m) out[row] = TraitsOf<T>::from_float(acc[4 * j + c]);
      if (row + 8 < p.m) out[row + 8] = TraitsOf<T>::from_float(acc[4 * j + 2 + c]);
    }
  }
#else
  // Built without sm_90a code: the host never launches this (gemv_kernel_supported is false).
  __trap();
#endif
}

// Row-major [rows][k] 16-bit matrix, in boxes of box_rows x 128 bytes with the 128-byte swizzle.
CUtensorMap k_major_map(StorageFormat format, const void* base, std::int64_t rows, std::int64_t k, int box_rows,
                        const char* what) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k) * 2};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(kRowBytes / 2), static_cast<cuuint32_t>(box_rows)};
  return make_tensor_map_sw128(format, base, 2, dims, strides, box, what);
}

template <typename T, int BN, int BPS, int ROWS>
cudaError_t launch_tile_n(const GemvArgs& a, const Plan& plan, cudaStream_t stream) {
  using S = Stages<BN, BPS, ROWS>;
  const CUtensorMap map_w = k_major_map(a.weights, a.w, a.m, a.k, ROWS, "gemv wgmma W");
  const CUtensorMap map_x = k_major_map(a.activations, a.x, a.batch, a.k, BN, "gemv wgmma x");
  const cudaError_t attribute =
      cudaFuncSetAttribute(gemv_wgmma_kernel<T, BN, BPS, ROWS>, cudaFuncAttributeMaxDynamicSharedMemorySize, S::smem);
  if (attribute != cudaSuccess) return attribute;
  unsigned char* workspace = static_cast<unsigned char*>(a.workspace);
  const GemvWgmmaProblem problem{.m = static_cast<int>(a.m),
                                 .k = static_cast<int>(a.k),
                                 .batch = static_cast<int>(a.batch),
                                 .splits = plan.splits,
                                 .k_blocks_per_split = plan.k_blocks_per_split,
                                 .tickets = reinterpret_cast<unsigned*>(workspace),
                                 .partials = reinterpret_cast<float*>(workspace + ticket_bytes(plan))};
  const unsigned blocks = static_cast<unsigned>(plan.tiles) * static_cast<unsigned>(plan.splits);
  gemv_wgmma_kernel<T, BN, BPS, ROWS>
      <<<blocks, kThreads, S::smem, stream>>>(map_w, map_x, static_cast<T*>(a.y), problem);
  return cudaGetLastError();
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

}  // namespace roofline::kernels::detail
