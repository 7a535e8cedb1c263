#pragma once

// The Hopper GEMV (gemv_wgmma.cu), reached through launch_gemv with GemvKernel::wgmma.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gemv.hpp"

namespace roofline::kernels::detail {

// Why the wgmma GEMV cannot run this shape, or nullptr when it can (the device check is
// gemv_kernel_supported's).
[[nodiscard]] const char* gemv_wgmma_unsupported(std::int64_t m, std::int64_t k, std::int64_t batch,
                                                 StorageFormat weights);
[[nodiscard]] std::size_t gemv_wgmma_workspace_bytes(std::int64_t m, std::int64_t k, std::int64_t batch, int sms);
[[nodiscard]] cudaError_t launch_gemv_wgmma(const GemvArgs& args, cudaStream_t stream);

}  // namespace roofline::kernels::detail
