#pragma once

// The W8A8 GEMV (gemv_w8a8.cu), reached through launch_gemv with fp8_e4m3 W and x.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gemv.hpp"

namespace roofline::kernels::detail {

// Why `kernel` cannot run the W8A8 GEMV of this shape, or nullptr when it can (the device check is
// gemv_w8a8_supported's).
[[nodiscard]] const char* gemv_w8a8_unsupported(GemvKernel kernel, std::int64_t m, std::int64_t k, std::int64_t batch);
[[nodiscard]] bool gemv_w8a8_device_supported(int device);
[[nodiscard]] cudaError_t launch_gemv_w8a8(const GemvArgs& args, cudaStream_t stream);

}  // namespace roofline::kernels::detail
