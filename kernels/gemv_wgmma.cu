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

inline constexpr int kRows = 128;                       // rows of W per block: two consumer warpgroups of 64
inline constexpr int kRowBytes = 128;                   // bytes of k per stage: one row of the 128-byte swizzle
inline constexpr int kConsumerThreads = 256;            // warps 0-7: the two warpgroups (wgmma needs them aligned)
inline constexpr int kThreads = kConsumerThreads + 32;  // warp 8: the producer
inline constexpr int kStageBytesW = kRows * kRowBytes;
static_assert(kernel_tiles::gemm_swapab.tile_n == kRows && kernel_tiles::gemm_swapab.tile_m == gemv_wgmma_max_batch &&
                  kernel_tiles::gemm_swapab.threads == kThreads && kernel_tiles::gemm_swapab.tile_k == kRowBytes / 2,
              "the compute suite's byte count of the swapped skinny GEMM uses these tiles");

// BPS blocks per SM, each with at most ~110 KB (two) or ~220 KB (one) of the 228 KB (1 KB per
// block is the system's). Up to N = 64 both variants exist (two blocks per SM where the grid has
// more blocks than SMs); at N = 128 and 256 (skinny GEMMs, not decode batches) the accumulators
// take 64 or 128 registers a thread, so only one block per SM. The one-block ring of N <= 64 stops
// at six stages: nine were no faster on the H200 (within 1-2%, slower in all three shapes timed).
template <int BN, int BPS>
struct Stages {
  static_assert(BPS == 1 || (BPS == 2 && BN <= 64), "two blocks per SM only up to N = 64");
  static constexpr int blocks_per_sm = BPS;
  static constexpr int smem_budget = BPS == 2 ? 110 * 1024 : 220 * 1024;
  static constexpr int bytes_x = BN * kRowBytes;
  static constexpr int bytes = kStageBytesW + bytes_x;
  static constexpr int count = std::min(BPS == 1 && BN <= 64 ? 6 : 8, smem_budget / bytes);
  // The stages, 2 x count mbarriers, and 1024 bytes to align the stages to the swizzle's period.
  static constexpr int smem = count * bytes + 2 * count * 8 + 1024;
};

using Plan = kernel_tiles::GemvWgmmaSplit;

// Tickets first (one per tile, padded to 256 bytes), then the partial tiles.
std::size_t ticket_bytes(const Plan& plan) {
  return (static_cast<std::size_t>(plan.tiles) * sizeof(unsigned) + 255) / 256 * 256;
}
std::size_t partial_bytes(const Plan& plan) {
  if (plan.splits == 1) return 0;
  return static_cast<std::size_t>(plan.tiles) * plan.splits * kConsumerThreads * (plan.tile_n / 2) * sizeof(float);
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
  float* partials = nullptr;  // [tile][split][consumer thread][BN / 2]
};

namespace {

using namespace gemv_wgmma_layout;

template <typename T, int BN, int BPS>
__global__ void __launch_bounds__(kThreads, BPS)
    gemv_wgmma_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_x,
                      T* __restrict__ y, GemvWgmmaProblem p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using S = Stages<BN, BPS>;
  constexpr int kAcc = BN / 2;
  extern __shared__ unsigned char smem_raw[];
  __shared__ bool last_of_tile;
  const uint32_t smem = (ptx::smem_addr(smem_raw) + 1023u) & ~1023u;
  const uint32_t smem_w = smem;                            // count x [128 rows][128 bytes]
  const uint32_t smem_x = smem + S::count * kStageBytesW;  // count x [BN rows][128 bytes]
  const uint32_t full_bar = smem_x + S::count * S::bytes_x;
  const uint32_t empty_bar = full_bar + S::count * 8;

  const int tile = static_cast<int>(blockIdx.x) / p.splits;
  const int split = static_cast<int>(blockIdx.x) % p.splits;
  const int k_blocks = (p.k * 2 + kRowBytes - 1) / kRowBytes;
  const int kb_begin = split * p.k_blocks_per_split;
  const int kb_end = min(k_blocks, kb_begin + p.k_blocks_per_split);
  const int row0 = tile * kRows;
  constexpr int kBK = kRowBytes / 2;  // 16-bit elements of k per stage

  if (threadIdx.x == 0) {
    for (int s = 0; s < S::count; ++s) {
      ptx::mbarrier_init(full_bar + s * 8, 1);
      ptx::mbarrier_init(empty_bar + s * 8, kConsumerThreads);
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
        ptx::tma_load_2d(smem_w + s * kStageBytesW, &map_w, full_bar + s * 8, kb * kBK, row0);
        ptx::tma_load_2d(smem_x + s * S::bytes_x, &map_x, full_bar + s * 8, kb * kBK, 0);
      }
    }
    return;  // the consumers sync among themselves from here on (named barrier 1)
  }

  const int consumer = static_cast<int>(threadIdx.x) / 128;  // rows consumer x 64 .. + 63 of the tile
  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
  ptx::fence_registers(acc);
  for (int kb = kb_begin; kb < kb_end; ++kb) {
    const int i = kb - kb_begin;
    const int s = i % S::count;
    const uint32_t phase = static_cast<uint32_t>(i / S::count) & 1u;
    ptx::mbarrier_wait(full_bar + s * 8, phase);
    const uint64_t desc_w = ptx::wgmma_desc_sw128(smem_w + s * kStageBytesW + consumer * 64 * kRowBytes);
    const uint64_t desc_x = ptx::wgmma_desc_sw128(smem_x + s * S::bytes_x);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kRowBytes / 32; ++kk) {
      // 16 elements (32 bytes) of k per wgmma: +2 in the descriptor's 16-byte units.
      ptx::wgmma_m64nNk16_ss<T, BN>(acc, desc_w + 2 * kk, desc_x + 2 * kk, 1);
    }
    ptx::wgmma_commit();
    // Keep this stage's group in flight; the one before is complete, and its stage free.
    ptx::wgmma_wait<1>();
    if (i > 0) ptx::mbarrier_arrive(empty_bar + ((i - 1) % S::count) * 8);
  }
  ptx::wgmma_wait<0>();
  ptx::fence_registers(acc);

  if (p.splits > 1) {
    const auto partial_of = [&](int of_split) {
      const std::size_t block = static_cast<std::size_t>(tile) * p.splits + of_split;
      return p.partials + (block * kConsumerThreads + threadIdx.x) * kAcc;
    };
    float* mine = partial_of(split);
#pragma unroll
    for (int i = 0; i < kAcc; i += 4) {
      __stcg(reinterpret_cast<float4*>(mine + i), make_float4(acc[i], acc[i + 1], acc[i + 2], acc[i + 3]));
    }
    __threadfence();
    ptx::named_barrier_sync(1, kConsumerThreads);
    if (threadIdx.x == 0) last_of_tile = atomicAdd(p.tickets + tile, 1u) == static_cast<unsigned>(p.splits - 1);
    ptx::named_barrier_sync(1, kConsumerThreads);
    if (!last_of_tile) return;
    __threadfence();
    // The sum in split order, this block's own partial read back like the others': the same
    // result whichever block arrived last.
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
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
  const int row = row0 + consumer * 64 + (t / 32) * 16 + (t % 32) / 4;
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

template <typename T, int BN, int BPS>
cudaError_t launch_tile_n(const GemvArgs& a, const Plan& plan, cudaStream_t stream) {
  using S = Stages<BN, BPS>;
  const CUtensorMap map_w = k_major_map(a.weights, a.w, a.m, a.k, kRows, "gemv wgmma W");
  const CUtensorMap map_x = k_major_map(a.activations, a.x, a.batch, a.k, BN, "gemv wgmma x");
  const cudaError_t attribute =
      cudaFuncSetAttribute(gemv_wgmma_kernel<T, BN, BPS>, cudaFuncAttributeMaxDynamicSharedMemorySize, S::smem);
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
  gemv_wgmma_kernel<T, BN, BPS><<<blocks, kThreads, S::smem, stream>>>(map_w, map_x, static_cast<T*>(a.y), problem);
  return cudaGetLastError();
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
    const bool two = plan.blocks_per_sm == 2;
    switch (plan.tile_n) {
      case 16: return two ? launch_tile_n<T, 16, 2>(a, plan, stream) : launch_tile_n<T, 16, 1>(a, plan, stream);
      case 32: return two ? launch_tile_n<T, 32, 2>(a, plan, stream) : launch_tile_n<T, 32, 1>(a, plan, stream);
      case 64: return two ? launch_tile_n<T, 64, 2>(a, plan, stream) : launch_tile_n<T, 64, 1>(a, plan, stream);
      case 128: return launch_tile_n<T, 128, 1>(a, plan, stream);
      default: return launch_tile_n<T, 256, 1>(a, plan, stream);
    }
  });
}

}  // namespace roofline::kernels::detail
