#pragma once

// The shared-memory-fed GEMV (gemv_bulk.cu), reached through launch_gemv with GemvKernel::bulk.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gemv.hpp"

namespace roofline::kernels::detail {

// Why the bulk GEMV cannot run this shape, or nullptr when it can (the device check is
// gemv_kernel_supported's).
[[nodiscard]] const char* gemv_bulk_unsupported(std::int64_t m, std::int64_t k, std::int64_t batch,
                                                StorageFormat weights);
[[nodiscard]] cudaError_t launch_gemv_bulk(const GemvArgs& args, cudaStream_t stream);

}  // namespace roofline::kernels::detail
