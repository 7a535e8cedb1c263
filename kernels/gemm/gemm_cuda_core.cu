// The two CUDA-core rungs of the GEMM ladder: naive (one thread per output, no reuse) and
// shared-memory tiled (128x128 block tile, 8x8 outputs per thread, fp32 FFMA).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

#include "../cuda_check.cuh"
#include "../tc_ptx.cuh"
#include "gemm_internal.cuh"

namespace roofline::kernels::detail {
namespace {

template <typename T>
__global__ void gemm_naive_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m, int n,
                                  int k) {
  using Traits = TraitsOf<T>;
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int row = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (row >= m || col >= n) return;
  const T* a_row = a + static_cast<std::size_t>(row) * k;
  const T* b_row = b + static_cast<std::size_t>(col) * k;
  float acc = 0.0f;
  for (int i = 0; i < k; ++i) acc = fmaf(Traits::to_float(a_row[i]), Traits::to_float(b_row[i]), acc);
  c[static_cast<std::size_t>(row) * n + col] = Traits::from_float(acc);
}

constexpr int kTiledM = smem_tiled_tiling.tile_m;
constexpr int kTiledN = smem_tiled_tiling.tile_n;
constexpr int kTiledK = smem_tiled_tiling.tile_k;
constexpr int kTiledThreads = smem_tiled_tiling.threads;
static_assert(kTiledM == 128 && kTiledN == 128 && kTiledK == 16 && kTiledThreads == 256,
              "the thread mapping below assumes 128x128x16 tiles and 256 threads");

// Each thread loads one 16-byte chunk (8 elements along k) of A and of B per k step and computes an
// 8x8 block of outputs: rows ty*8..ty*8+7, columns tx*4..tx*4+3 and 64+tx*4..64+tx*4+3 (two
// 4-wide halves, so that a warp's float4 reads of the B tile are contiguous).
template <typename T>
__global__ void __launch_bounds__(kTiledThreads)
    gemm_smem_tiled_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m, int n, int k) {
  using Traits = TraitsOf<T>;
  // [k][m] and [k][n]: transposed so that the inner loop reads rows of 4 consecutive floats.
  __shared__ __align__(16) float as[kTiledK][kTiledM + 4];
  __shared__ __align__(16) float bs[kTiledK][kTiledN + 4];

  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % 16;
  const int ty = tid / 16;
  const int m0 = static_cast<int>(blockIdx.y) * kTiledM;
  const int n0 = static_cast<int>(blockIdx.x) * kTiledN;
  const int load_row = tid / 2;
  const int load_k = (tid % 2) * 8;

  float acc[8][8] = {};
  for (int k0 = 0; k0 < k; k0 += kTiledK) {
    uint4 va = make_uint4(0, 0, 0, 0);
    uint4 vb = make_uint4(0, 0, 0, 0);
    if (m0 + load_row < m && k0 + load_k < k) {
      va = *reinterpret_cast<const uint4*>(a + static_cast<std::size_t>(m0 + load_row) * k + k0 + load_k);
    }
    if (n0 + load_row < n && k0 + load_k < k) {
      vb = *reinterpret_cast<const uint4*>(b + static_cast<std::size_t>(n0 + load_row) * k + k0 + load_k);
    }
    __syncthreads();  // the previous step's reads of as/bs are done
    const T* ea = reinterpret_cast<const T*>(&va);
    const T* eb = reinterpret_cast<const T*>(&vb);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      as[load_k + i][load_row] = Traits::to_float(ea[i]);
      bs[load_k + i][load_row] = Traits::to_float(eb[i]);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTiledK; ++kk) {
      const float4 a_lo = *reinterpret_cast<const float4*>(&as[kk][ty * 8]);
      const float4 a_hi = *reinterpret_cast<const float4*>(&as[kk][ty * 8 + 4]);
      const float4 b_lo = *reinterpret_cast<const float4*>(&bs[kk][tx * 4]);
      const float4 b_hi = *reinterpret_cast<const float4*>(&bs[kk][64 + tx * 4]);
      const float av[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
      const float bv[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
      for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
      }
    }
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = m0 + ty * 8 + i;
    if (row >= m) continue;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int col = n0 + half * 64 + tx * 4;
      if (col >= n) continue;  // n % 8 == 0, so a 4-wide group is either all in or all out
      uint2 packed;
      packed.x = Traits::pack(acc[i][half * 4 + 0], acc[i][half * 4 + 1]);
      packed.y = Traits::pack(acc[i][half * 4 + 2], acc[i][half * 4 + 3]);
      *reinterpret_cast<uint2*>(c + static_cast<std::size_t>(row) * n + col) = packed;
    }
  }
}

template <typename T>
void launch_naive(const void* a, const void* b, void* c, int m, int n, int k, cudaStream_t stream) {
  const dim3 block(16, 16);
  static_assert(naive_tiling.threads == 16 * 16);
  const dim3 grid(static_cast<unsigned>((n + 15) / 16), static_cast<unsigned>((m + 15) / 16));
  gemm_naive_kernel<T>
      <<<grid, block, 0, stream>>>(static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c), m, n, k);
  ROOFLINE_CHECK_LAUNCH("gemm_naive_kernel");
}

template <typename T>
void launch_smem_tiled(const void* a, const void* b, void* c, int m, int n, int k, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((n + kTiledN - 1) / kTiledN),
                  static_cast<unsigned>((m + kTiledM - 1) / kTiledM));
  gemm_smem_tiled_kernel<T><<<grid, kTiledThreads, 0, stream>>>(static_cast<const T*>(a), static_cast<const T*>(b),
                                                                static_cast<T*>(c), m, n, k);
  ROOFLINE_CHECK_LAUNCH("gemm_smem_tiled_kernel");
}

}  // namespace

void gemm_naive(StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k, cudaStream_t stream) {
  dispatch_storage<gemm_formats>(type, [&](auto traits) {
    using T = typename decltype(traits)::Element;
    launch_naive<T>(a, b, c, m, n, k, stream);
  });
}

void gemm_smem_tiled(StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k,
                     cudaStream_t stream) {
  dispatch_storage<gemm_formats>(type, [&](auto traits) {
    using T = typename decltype(traits)::Element;
    launch_smem_tiled<T>(a, b, c, m, n, k, stream);
  });
}

}  // namespace roofline::kernels::detail
