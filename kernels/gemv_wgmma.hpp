#pragma once

// The Hopper GEMV (gemv_wgmma.cu), reached through launch_gemv with GemvKernel::wgmma.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gemm.hpp"
#include "gemv.hpp"
#include "roofline/model/kernel_tiles.hpp"

namespace roofline::kernels::detail {

// Why the wgmma GEMV cannot run this shape, or nullptr when it can (the device check is
// gemv_kernel_supported's).
[[nodiscard]] const char* gemv_wgmma_unsupported(std::int64_t m, std::int64_t k, std::int64_t batch,
                                                 StorageFormat weights);
[[nodiscard]] std::size_t gemv_wgmma_workspace_bytes(std::int64_t m, std::int64_t k, std::int64_t batch, int sms);
[[nodiscard]] cudaError_t launch_gemv_wgmma(const GemvArgs& args, cudaStream_t stream);

// The grouped GEMM of MoE experts through the same kernel, A and B swapped (gemm.hpp's
// gemm_grouped_swap_ab says what it takes); the plan, the workspace and the launch.
[[nodiscard]] kernel_tiles::GemvWgmmaSplit grouped_gemv_wgmma_plan(const GroupedGemmArgs& args, int sms);
[[nodiscard]] std::size_t grouped_gemv_wgmma_workspace_bytes(const GroupedGemmArgs& args, int sms);
[[nodiscard]] const char* grouped_gemv_wgmma_unsupported(const GroupedGemmArgs& args);
[[nodiscard]] cudaError_t launch_grouped_gemv_wgmma(const GroupedGemmArgs& args, int sms, void* workspace,
                                                    cudaStream_t stream);

}  // namespace roofline::kernels::detail
