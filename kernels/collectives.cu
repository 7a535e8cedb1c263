#include <cuda_runtime.h>

#include "collectives.hpp"
#include "cuda_check.cuh"

namespace roofline::kernels {
namespace {

constexpr int threads = 256;

int blocks_for(std::int64_t count) {
  const std::int64_t wanted = (count + threads - 1) / threads;
  return static_cast<int>(wanted < 65536 ? (wanted > 0 ? wanted : 1) : 65536);
}

__global__ void fill_kernel(float* data, std::int64_t count, int rank) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < count; j += stride) {
    data[j] = collective_pattern(rank, j);
  }
}

__device__ float reduced(int ranks, std::int64_t index) {
  float sum = 0.0F;
  for (int r = 0; r < ranks; ++r) sum += collective_pattern(r, index);
  return sum;
}

__global__ void check_kernel(const float* out, std::int64_t count, CollectiveKind kind, int rank, int ranks,
                             std::int64_t chunk, unsigned long long* counters) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  unsigned long long bad = 0;
  for (std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < count; j += stride) {
    float expected = 0.0F;
    switch (kind) {
      case CollectiveKind::all_reduce: expected = reduced(ranks, j); break;
      case CollectiveKind::all_gather: expected = collective_pattern(static_cast<int>(j / chunk), j % chunk); break;
      case CollectiveKind::reduce_scatter: expected = reduced(ranks, rank * chunk + j); break;
    }
    // Exact: the sums are of small integers. A poisoned (NaN) element never compares equal.
    if (!(out[j] == expected)) {
      ++bad;
      atomicMin(&counters[1], static_cast<unsigned long long>(j));
    }
  }
  if (bad != 0) atomicAdd(&counters[0], bad);
}

}  // namespace

void fill_collective_input(float* data, std::int64_t count, int rank, Stream stream) {
  fill_kernel<<<blocks_for(count), threads, 0, stream>>>(data, count, rank);
  ROOFLINE_CHECK_LAUNCH("fill_kernel");
}

void check_collective_output(const float* out, std::int64_t count, CollectiveKind kind, int rank, int ranks,
                             std::int64_t chunk, unsigned long long* counters, Stream stream) {
  ROOFLINE_CUDA_CHECK(cudaMemsetAsync(counters, 0, sizeof(unsigned long long), stream));
  ROOFLINE_CUDA_CHECK(cudaMemsetAsync(counters + 1, 0xFF, sizeof(unsigned long long), stream));
  check_kernel<<<blocks_for(count), threads, 0, stream>>>(out, count, kind, rank, ranks, chunk, counters);
  ROOFLINE_CHECK_LAUNCH("check_kernel");
}

}  // namespace roofline::kernels
