#pragma once

// GEMV for LLM decode: y[b, m] = sum_k W[m, k] x[b, k] for a batch of vectors, operands and
// results in one storage format (gemv_formats), fp32 accumulation. W is row-major (m rows of k), x is batch rows of
// k, y is batch rows of m. Plain C++ launchers; the kernels live in gemv.cu.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "storage_format.hpp"

namespace roofline::kernels {

// The storage formats of W, x and y that the GEMV kernels are built for.
inline constexpr StorageFormats gemv_formats = half16_formats;

enum class GemvKernel : std::uint8_t {
  // Tensor cores (mma.sync m16n8k16): a block owns 16 or 32 rows of W and its warps split k;
  // each thread streams 16-byte pieces of W straight from HBM into mma operands.
  mma,
  // The tuned tensor-core kernels (batches up to 16), two changes to mma and one to the launch:
  //   stag: a resident grid looping over 16-row tiles, each tile starting its k sweep at a
  //         different offset, so that the blocks in flight do not all read the same columns
  //         (addresses a multiple of the row pitch apart, which map to few memory channels);
  //   pipe: stag, with the loads of a warp's next k step issued before its current step is used;
  //   pdl:  stag, launched with programmatic dependent launch: the next kernel's blocks start
  //         streaming W while this one finishes, and wait (griddepcontrol.wait) before reading x.
  //         (Run 2 of 2026-11-30 built it on pipe, which was slower than stag at 8192^2.)
  stag,
  pipe,
  pdl,
  // CUDA cores: one warp per row, 16-byte loads, fp32 FMA; batches 1, 2 and 4.
  simt,
};

struct GemvArgs {
  GemvKernel kernel = GemvKernel::mma;
  StorageFormat weights = StorageFormat::bf16;      // of W
  StorageFormat activations = StorageFormat::bf16;  // of x and y
  const void* w = nullptr;
  const void* x = nullptr;
  void* y = nullptr;
  std::int64_t m = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  int sms = 0;  // the device's SM count: picks the block shape (0: assume a large m for the GPU)
};

// Why the GEMV kernels cannot take W in `weights` and x, y in `activations`, or nullptr when they
// can (today: both in one format of gemv_formats).
[[nodiscard]] const char* gemv_formats_unsupported(StorageFormat weights, StorageFormat activations);

// Why `kernel` cannot run this shape, or nullptr when it can.
[[nodiscard]] const char* gemv_unsupported(GemvKernel kernel, std::int64_t m, std::int64_t k, std::int64_t batch);

[[nodiscard]] cudaError_t launch_gemv(const GemvArgs& args, cudaStream_t stream);

}  // namespace roofline::kernels
