// Tensor-core GEMM through mma.sync m16n8k16 (sm_80 and later): 128x128 block tile, 4 warps of
// 64x64, k staged 64 at a time through a 3-deep cp.async pipeline. Shared-memory rows are 128 bytes
// (64 elements) with the 16-byte chunks XOR-swizzled by row, so that both the cp.async writes and the
// ldmatrix reads of 8 rows hit 8 different bank groups.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

#include "../cuda_check.cuh"
#include "../tc_ptx.cuh"
#include "gemm_internal.cuh"

namespace roofline::kernels::detail {
namespace {

constexpr int kBM = mma_sync_tiling.tile_m;
constexpr int kBN = mma_sync_tiling.tile_n;
constexpr int kBK = mma_sync_tiling.tile_k;
constexpr int kStages = mma_sync_tiling.stages;
constexpr int kThreads = mma_sync_tiling.threads;
static_assert(kBM == 128 && kBN == 128 && kBK == 64 && kThreads == 128,
              "the warp layout (2x2 warps of 64x64) and the swizzle (8 chunks per row) assume these");
constexpr int kSmemBytes = kStages * (kBM + kBN) * kBK * 2;
constexpr int kGroupM = 8;

// Byte offset of element (row, chunk*8) in a [rows][64] tile with the chunk index XOR row%8.
__device__ __forceinline__ uint32_t swizzled(int row, int chunk) {
  return static_cast<uint32_t>(row * kBK * 2 + ((chunk ^ (row & 7)) * 16));
}

template <typename T>
__global__ void __launch_bounds__(kThreads, 2)
    gemm_mma_sync_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m, int n, int k) {
  using Traits = TraitsOf<T>;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t smem_a = ptx::smem_addr(smem);
  const uint32_t smem_b = smem_a + kStages * kBM * kBK * 2;

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % 32;
  const int warp = tid / 32;
  const int warp_m = warp / 2;
  const int warp_n = warp % 2;
  const int tiles_m = (m + kBM - 1) / kBM;
  const int tiles_n = (n + kBN - 1) / kBN;
  int tile_m = 0;
  int tile_n = 0;
  grouped_tile(static_cast<int>(blockIdx.x), tiles_m, tiles_n, kGroupM, tile_m, tile_n);
  const int m0 = tile_m * kBM;
  const int n0 = tile_n * kBN;
  const int k_tiles = (k + kBK - 1) / kBK;

  // One stage: 128 rows x 8 chunks of A and of B; each thread copies 8 chunks of each, 8
  // consecutive threads covering one 128-byte row segment (coalesced).
  auto load_stage = [&](int stage, int k_tile) {
    const int k0 = k_tile * kBK;
#pragma unroll
    for (int i = 0; i < (kBM * kBK / 8) / kThreads; ++i) {
      const int idx = i * kThreads + tid;
      const int row = idx / 8;
      const int chunk = idx % 8;
      const int gk = k0 + chunk * 8;
      const bool a_ok = m0 + row < m && gk < k;
      const bool b_ok = n0 + row < n && gk < k;
      const T* a_src = a + (a_ok ? static_cast<std::size_t>(m0 + row) * k + gk : 0);
      const T* b_src = b + (b_ok ? static_cast<std::size_t>(n0 + row) * k + gk : 0);
      ptx::cp_async_16(smem_a + stage * kBM * kBK * 2 + swizzled(row, chunk), a_src, a_ok);
      ptx::cp_async_16(smem_b + stage * kBN * kBK * 2 + swizzled(row, chunk), b_src, b_ok);
    }
  };

  float acc[4][8][4] = {};

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    ptx::cp_async_commit();  // committed even when empty, so that group counting stays uniform
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    ptx::cp_async_wait<kStages - 2>();  // stage kt has landed (for this thread's copies) ...
    __syncthreads();                    // ... and for everyone's; stage kt-1 is free again
    const int next = kt + kStages - 1;
    if (next < k_tiles) load_stage(next % kStages, next);
    ptx::cp_async_commit();

    const int stage = kt % kStages;
    const uint32_t stage_a = smem_a + stage * kBM * kBK * 2;
    const uint32_t stage_b = smem_b + stage * kBN * kBK * 2;
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk) {
      uint32_t af[4][4];
      uint32_t bf[8][2];
#pragma unroll
      for (int mt = 0; mt < 4; ++mt) {
        const int row = warp_m * 64 + mt * 16 + (lane % 16);
        ptx::ldmatrix_x4(af[mt], stage_a + swizzled(row, kk * 2 + lane / 16));
      }
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        const int row = warp_n * 64 + np * 16 + (lane / 16) * 8 + (lane % 8);
        uint32_t r[4];
        ptx::ldmatrix_x4(r, stage_b + swizzled(row, kk * 2 + (lane / 8) % 2));
        bf[2 * np][0] = r[0];
        bf[2 * np][1] = r[1];
        bf[2 * np + 1][0] = r[2];
        bf[2 * np + 1][1] = r[3];
      }
#pragma unroll
      for (int mt = 0; mt < 4; ++mt) {
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) ptx::mma_16816<T>(acc[mt][nt], af[mt], bf[nt][0], bf[nt][1]);
      }
    }
  }
  ptx::cp_async_wait<0>();  // no copy may be in flight when the block exits

#pragma unroll
  for (int mt = 0; mt < 4; ++mt) {
    const int row = m0 + warp_m * 64 + mt * 16 + lane / 4;
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      const int col = n0 + warp_n * 64 + nt * 8 + (lane % 4) * 2;
      if (col >= n) continue;
      if (row < m) {
        *reinterpret_cast<uint32_t*>(c + static_cast<std::size_t>(row) * n + col) =
            Traits::pack(acc[mt][nt][0], acc[mt][nt][1]);
      }
      if (row + 8 < m) {
        *reinterpret_cast<uint32_t*>(c + static_cast<std::size_t>(row + 8) * n + col) =
            Traits::pack(acc[mt][nt][2], acc[mt][nt][3]);
      }
    }
  }
}

template <typename T>
void launch(const void* a, const void* b, void* c, int m, int n, int k, cudaStream_t stream) {
  ROOFLINE_CUDA_CHECK(
      cudaFuncSetAttribute(gemm_mma_sync_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  const long long blocks = static_cast<long long>((m + kBM - 1) / kBM) * ((n + kBN - 1) / kBN);
  require(blocks <= 0x7fffffff, "gemm mma_sync: too many tiles");
  gemm_mma_sync_kernel<T><<<static_cast<unsigned>(blocks), kThreads, kSmemBytes, stream>>>(
      static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c), m, n, k);
  ROOFLINE_CHECK_LAUNCH("gemm_mma_sync_kernel");
}

}  // namespace

void gemm_mma_sync(StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k,
                   cudaStream_t stream) {
  dispatch_storage<gemm_formats>(type, [&](auto traits) {
    using T = typename decltype(traits)::Element;
    launch<T>(a, b, c, m, n, k, stream);
  });
}

}  // namespace roofline::kernels::detail
