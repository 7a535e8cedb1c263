#pragma once

// GEMV for LLM decode: y[b, m] = sum_k W[m, k] x[b, k] for a batch of vectors, fp32 accumulation.
// W is row-major (m rows of k), x is batch rows of k, y is batch rows of m. x and y are in one 16-bit
// format; W in that format, or quantised (weight-only, as decode serves it):
//   fp8_e4m3 (W8A16, bf16 x and y): W[m][k] one byte per element, real W = stored x *weight_scale
//     (one fp32 per tensor, on the device);
//   int4_g128 (W4A16, bf16 x and y): W[m][k / 2] bytes, row-major, byte j of a row holding k = 2j
//     in its low nibble and k = 2j + 1 in its high nibble, each an unsigned q in 0..15; scales
//     [m][k / 128] bf16, row-major (group_scales); real W[r][c] = (q - 8) x scales[r][c / 128]
//     (symmetric, GPTQ-style: no zero point stored).
// The kernels turn quantised W into bf16 in registers (e4m3 and (q - 8) are exact in bf16) and
// apply the scales in fp32.
// W8A8 (fp8_e4m3 W and fp8_e4m3 activations, as FP8 checkpoints are served): x is e4m3 [batch][k]
// with a per-tensor scale (activation_scale), y is bf16 [batch][m]:
//   y = (*activation_scale) * (*weight_scale) * W_e4m3 . x_e4m3, fp32 accumulation;
// no conversion: the e4m3 bytes feed mma.m16n8k32 (sm_89+) as loaded (gemv_w8a8.cu).
// Plain C++ launchers; the kernels live in gemv.cu and gemv_w8a8.cu.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "storage_format.hpp"

namespace roofline::kernels {

// The storage formats of W, x and y that the GEMV kernels are built for: W in any of gemv_formats
// with x and y in the same format, or W in one of gemv_quantised_weights with bf16 x and y.
inline constexpr StorageFormats gemv_formats = half16_formats;
inline constexpr StorageFormats gemv_quantised_weights{StorageFormat::fp8_e4m3, StorageFormat::int4_g128};
// W8A8: W and x in this format, y in gemv_w8a8_output.
inline constexpr StorageFormat gemv_w8a8_format = StorageFormat::fp8_e4m3;
inline constexpr StorageFormat gemv_w8a8_output = StorageFormat::bf16;
// Whether W and x in these formats are the W8A8 GEMV.
[[nodiscard]] constexpr bool gemv_is_w8a8(StorageFormat weights, StorageFormat activations) {
  return weights == gemv_w8a8_format && activations == gemv_w8a8_format;
}
// The largest batch of the W8A8 kernels (mma; stag and pdl: 16).
inline constexpr std::int64_t gemv_w8a8_max_batch = 64;
// Elements of k that share one scale of int4_g128 W.
inline constexpr int gemv_int4_group = group_of(StorageFormat::int4_g128);

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
  // Hopper (sm_90a), 16-bit W, batches up to 256: TMA stages 128 rows of W and every vector in
  // shared memory, two warpgroups multiply them with wgmma (the batch is wgmma's N), k split over
  // blocks until the grid fills the GPU, the partial sums added by the last block of each row tile
  // (gemv_wgmma.cu). Needs GemvArgs::workspace.
  wgmma,
};

// The largest batch of the wgmma kernel (wgmma's largest N, 256; above 64 the GEMV is a skinny
// GEMM, one block per SM).
inline constexpr std::int64_t gemv_wgmma_max_batch = 256;

struct GemvArgs {
  GemvKernel kernel = GemvKernel::mma;
  StorageFormat weights = StorageFormat::bf16;      // of W
  StorageFormat activations = StorageFormat::bf16;  // of x and y (W8A8: of x; y is gemv_w8a8_output)
  const void* w = nullptr;
  const void* x = nullptr;
  void* y = nullptr;
  std::int64_t m = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  int sms = 0;  // the device's SM count: picks the block shape (0: assume a large m for the GPU)
  const float* weight_scale = nullptr;  // fp8 W: device pointer to the per-tensor scale (y = scale * W.x)
  const void* group_scales = nullptr;   // int4 W: bf16 [m][k / 128] per-group scales (see above)
  // wgmma: device memory of gemv_workspace_bytes(), zeroed once before the first launch (each
  // launch leaves it zeroed where the next one needs it).
  void* workspace = nullptr;
  // W8A8: device pointer to x's per-tensor scale (y = activation_scale * weight_scale * W.x).
  const float* activation_scale = nullptr;
};

// Device memory `args.kernel` needs in GemvArgs::workspace for this shape (0: none).
[[nodiscard]] std::size_t gemv_workspace_bytes(const GemvArgs& args);

// Whether this build holds `kernel`'s machine code and `device` can run it (wgmma: sm_90a code and
// a compute capability 9.0 device; the others: any device the build supports).
[[nodiscard]] bool gemv_kernel_supported(GemvKernel kernel, int device);

// Whether `device` can run the W8A8 GEMV from this build: e4m3 mma.sync needs compute capability
// 8.9 or later and kernels compiled for it (their PTX version, read from the runtime).
[[nodiscard]] bool gemv_w8a8_supported(int device);

// Why the GEMV kernels cannot take W in `weights` and x, y in `activations`, or nullptr when they
// can.
[[nodiscard]] const char* gemv_formats_unsupported(StorageFormat weights, StorageFormat activations);

// Why `kernel` cannot run this shape with W in `weights` (and x in `activations`), or nullptr when
// it can.
[[nodiscard]] const char* gemv_unsupported(GemvKernel kernel, std::int64_t m, std::int64_t k, std::int64_t batch,
                                           StorageFormat weights = StorageFormat::bf16,
                                           StorageFormat activations = StorageFormat::bf16);

[[nodiscard]] cudaError_t launch_gemv(const GemvArgs& args, cudaStream_t stream);

}  // namespace roofline::kernels
