#pragma once

// Access-pattern kernels on 4-byte words: strided reads (summed, so nothing is written but one
// word), random gather and random scatter. Plain C++ launchers; the kernels live in access.cu.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace roofline::kernels {

// sum over i < accesses of data[offset + i x stride] (wrapping 32-bit add) into *result.
struct StridedReadArgs {
  const std::uint32_t* data = nullptr;
  std::int64_t accesses = 0;
  std::int64_t stride = 1;
  std::int64_t offset = 0;
  int blocks = 0;                     // see access_blocks()
  std::uint32_t* partials = nullptr;  // one per block
  unsigned* counter = nullptr;        // zero before the first launch; left zero
  std::uint32_t* result = nullptr;
};

// out[i] = table[indices[i]] (gather) or table[indices[i]] = values[i] (scatter), i < count.
struct RandomAccessArgs {
  std::uint32_t* table = nullptr;
  const std::uint32_t* indices = nullptr;
  std::uint32_t* values = nullptr;  // gather: written; scatter: read
  std::int64_t count = 0;
  int blocks = 0;
};

// Resident blocks on `sms` SMs for the grid-stride kernels of this file.
[[nodiscard]] int access_blocks(int sms);

[[nodiscard]] cudaError_t launch_strided_read(const StridedReadArgs& args, cudaStream_t stream);
[[nodiscard]] cudaError_t launch_gather(const RandomAccessArgs& args, cudaStream_t stream);
[[nodiscard]] cudaError_t launch_scatter(const RandomAccessArgs& args, cudaStream_t stream);

}  // namespace roofline::kernels
