#include <cstdint>

#include "device_utils.cuh"
#include "hierarchy.hpp"

namespace roofline::kernels {
namespace {

constexpr int kThreads = hierarchy_threads;
constexpr int kSharedVectors = static_cast<int>(shared_read_block_bytes / 16);  // uint4 per block
static_assert(kSharedVectors % kThreads == 0, "each round reads kThreads vectors");
constexpr int kRoundsPerSweep = kSharedVectors / kThreads;  // 8 rounds read the slice once

__device__ __forceinline__ std::uint32_t sum4(uint4 v) {
  return (v.x + v.y) + (v.z + v.w);
}

__global__ void __launch_bounds__(kThreads)
    l2_read(const uint4* __restrict__ data, std::int64_t slice_vectors, int passes, std::uint32_t* partials,
            unsigned* counter, std::uint32_t* result) {
  __shared__ std::uint32_t scratch[kThreads / 32];
  std::uint32_t acc[4] = {0, 0, 0, 0};
  for (int pass = 0; pass < passes; ++pass) {
    const std::int64_t slice = (static_cast<std::int64_t>(blockIdx.x) + pass) % gridDim.x;
    const uint4* p = data + slice * slice_vectors + threadIdx.x;
    std::int64_t v = 0;
    for (; v + 3 * kThreads < slice_vectors; v += 4 * kThreads) {
      uint4 r[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) r[u] = device::load_l2_16(p + v + u * kThreads);
#pragma unroll
      for (int u = 0; u < 4; ++u) acc[u] += sum4(r[u]);
    }
    for (; v < slice_vectors; v += kThreads) acc[0] += sum4(device::load_l2_16(p + v));
  }
  const std::uint32_t block_total = device::block_sum((acc[0] + acc[1]) + (acc[2] + acc[3]), scratch);
  device::finish_reduction(block_total, partials, counter, result, scratch);
}

__global__ void __launch_bounds__(kThreads)
    shared_read(const uint4* __restrict__ data, int rounds, std::uint32_t* __restrict__ block_sums) {
  __shared__ uint4 slice[kSharedVectors];
  __shared__ std::uint32_t scratch[kThreads / 32];
  const uint4* source = data + static_cast<std::int64_t>(blockIdx.x) * kSharedVectors;
  for (int v = threadIdx.x; v < kSharedVectors; v += kThreads) slice[v] = source[v];
  __syncthreads();
  // Round r reads vector (tid + r x kThreads) mod kSharedVectors: a warp reads 512 consecutive
  // bytes, four conflict-free 128-byte wavefronts.
  const std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(slice)) + threadIdx.x * 16U;
  std::uint32_t acc[kRoundsPerSweep] = {};
  for (int sweep = 0; sweep < rounds / kRoundsPerSweep; ++sweep) {
#pragma unroll
    for (int r = 0; r < kRoundsPerSweep; ++r) {
      acc[r] += sum4(device::load_shared_16(base + static_cast<std::uint32_t>(r * kThreads * 16)));
    }
  }
  std::uint32_t total = 0;
#pragma unroll
  for (int r = 0; r < kRoundsPerSweep; ++r) total += acc[r];
  total = device::block_sum(total, scratch);
  if (threadIdx.x == 0) block_sums[blockIdx.x] = total;
}

}  // namespace

cudaError_t launch_l2_read(const L2ReadArgs& a, cudaStream_t stream) {
  if (a.data == nullptr || a.blocks < 1 || a.passes < 1 || a.slice_bytes < 16 * kThreads ||
      a.slice_bytes % (16 * kThreads) != 0 || a.partials == nullptr || a.counter == nullptr || a.result == nullptr) {
    return cudaErrorInvalidValue;
  }
  l2_read<<<a.blocks, kThreads, 0, stream>>>(static_cast<const uint4*>(a.data), a.slice_bytes / 16, a.passes,
                                             a.partials, a.counter, a.result);
  return cudaGetLastError();
}

cudaError_t launch_shared_read(const SharedReadArgs& a, cudaStream_t stream) {
  if (a.data == nullptr || a.blocks < 1 || a.rounds < kRoundsPerSweep || a.rounds % kRoundsPerSweep != 0 ||
      a.block_sums == nullptr) {
    return cudaErrorInvalidValue;
  }
  shared_read<<<a.blocks, kThreads, 0, stream>>>(static_cast<const uint4*>(a.data), a.rounds, a.block_sums);
  return cudaGetLastError();
}

}  // namespace roofline::kernels
