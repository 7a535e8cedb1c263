#pragma once

// What the GEMM translation units share: each kernel's tiling (written once, in
// roofline/kernel_tiles.hpp: the kernels size themselves from it, gemm_tiling() reports it and the
// benchmarks hand it to the model), the per-kernel launchers, and the block rasterisation
// (tile_order.hpp).

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "../cuda_check.cuh"
#include "../gemm.hpp"
#include "roofline/model/kernel_tiles.hpp"
#include "tile_order.hpp"

namespace roofline::kernels::detail {

inline constexpr GemmTiling naive_tiling = kernel_tiles::gemm_naive;
inline constexpr GemmTiling smem_tiled_tiling = kernel_tiles::gemm_smem_tiled;
inline constexpr GemmTiling mma_sync_tiling = kernel_tiles::gemm_mma_sync;
inline constexpr GemmTiling wgmma_tiling = kernel_tiles::gemm_wgmma;
// The FP8 wgmma kernel is the same kernel with 8-bit elements: its 128-byte stage rows hold twice
// the k of the 16-bit one.
inline constexpr GemmTiling wgmma_fp8_tiling{wgmma_tiling.tile_m, wgmma_tiling.tile_n, 2 * wgmma_tiling.tile_k,
                                             wgmma_tiling.stages, wgmma_tiling.threads};

void gemm_naive(StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k, cudaStream_t stream);
void gemm_smem_tiled(StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k,
                     cudaStream_t stream);
void gemm_mma_sync(StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k, cudaStream_t stream);
void gemm_wgmma(StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k, cudaStream_t stream);
void gemm_wgmma_fp8(const Fp8GemmArgs& args, cudaStream_t stream);
std::size_t gemm_wgmma_split_k_workspace_bytes(int m, int n, int k, int sms);
void gemm_wgmma_split_k(StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k, int sms,
                        void* workspace, cudaStream_t stream);

// Throws KernelError naming the call when cuBLAS reports an error. The status is a number here:
// cublasGetStatusName lives in the library, which is not linked.
inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw KernelError(std::string(what) + " failed: cuBLAS status " + std::to_string(static_cast<int>(status)));
  }
}

}  // namespace roofline::kernels::detail
