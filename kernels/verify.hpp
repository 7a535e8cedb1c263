#pragma once

// Device-side helpers of the benchmarks' checks: random fill and whole-buffer comparison of
// buffers in a storage format. Plain C++ declarations; the kernels are in verify.cu.

#include <cstddef>
#include <cstdint>

#include "compute_types.hpp"

namespace roofline::kernels {

// The storage formats fill_uniform, compare and count_nonfinite take (e4m3: the FP8 GEMM's operands).
inline constexpr StorageFormats verify_formats{StorageFormat::bf16, StorageFormat::fp16, StorageFormat::fp8_e4m3};

// Uniform values in [-scale, scale), a counter-based hash of (seed, index): reproducible, never
// all zeros.
void fill_uniform(StorageFormat type, void* data, std::size_t count, std::uint64_t seed, float scale,
                  Stream stream = nullptr);
// Uniform values in [offset - scale, offset + scale).
void fill_uniform(StorageFormat type, void* data, std::size_t count, std::uint64_t seed, float scale, float offset,
                  Stream stream);

struct Comparison {
  double sum_sq_diff = 0;       // sum of (out - ref)^2 over finite pairs
  double sum_sq_ref = 0;        // sum of ref^2
  double max_abs_diff = 0;      // over finite pairs
  std::uint64_t nonfinite = 0;  // elements of out that are NaN or inf (an unwritten, poisoned element)
};
// Compares two buffers element by element on the device (synchronises the stream).
Comparison compare(StorageFormat type, const void* out, const void* ref, std::size_t count, Stream stream = nullptr);
// Counts NaN/inf elements (synchronises the stream).
std::uint64_t count_nonfinite(StorageFormat type, const void* data, std::size_t count, Stream stream = nullptr);

}  // namespace roofline::kernels
