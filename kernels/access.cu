// Access-pattern kernels. Grid-stride loops over a resident grid, four independent accesses per
// thread in flight; lane l of a warp handles element i + l, so a warp instruction touches the
// sectors the model in roofline/access.hpp counts.
#include <cstdint>

#include "access.hpp"
#include "device_utils.cuh"

namespace roofline::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;

__global__ void __launch_bounds__(kThreads)
    strided_read(const std::uint32_t* __restrict__ data, std::int64_t accesses, std::int64_t stride,
                 std::int64_t offset, std::uint32_t* partials, unsigned* counter, std::uint32_t* result) {
  __shared__ std::uint32_t scratch[kThreads / 32];
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * kThreads;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const std::uint32_t* base = data + offset;
  std::uint32_t sum = 0;
  std::int64_t i = first;
  for (; i + (kUnroll - 1) * threads < accesses; i += kUnroll * threads) {
    std::uint32_t v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = base[(i + u * threads) * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) sum += v[u];
  }
  for (; i < accesses; i += threads) sum += base[i * stride];
  const std::uint32_t block_total = device::block_sum(sum, scratch);
  device::finish_reduction(block_total, partials, counter, result, scratch);
}

__global__ void __launch_bounds__(kThreads)
    gather(const std::uint32_t* __restrict__ table, const std::uint32_t* __restrict__ indices,
           std::uint32_t* __restrict__ out, std::int64_t count) {
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * kThreads;
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  for (; i + (kUnroll - 1) * threads < count; i += kUnroll * threads) {
    std::uint32_t index[kUnroll];
    std::uint32_t value[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) index[u] = indices[i + u * threads];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) value[u] = table[index[u]];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) out[i + u * threads] = value[u];
  }
  for (; i < count; i += threads) out[i] = table[indices[i]];
}

__global__ void __launch_bounds__(kThreads)
    scatter(std::uint32_t* __restrict__ table, const std::uint32_t* __restrict__ indices,
            const std::uint32_t* __restrict__ values, std::int64_t count) {
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * kThreads;
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  for (; i + (kUnroll - 1) * threads < count; i += kUnroll * threads) {
    std::uint32_t index[kUnroll];
    std::uint32_t value[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      index[u] = indices[i + u * threads];
      value[u] = values[i + u * threads];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) table[index[u]] = value[u];
  }
  for (; i < count; i += threads) table[indices[i]] = values[i];
}

cudaError_t after_launch() {
  return cudaGetLastError();
}

}  // namespace

int access_blocks(int sms) {
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, strided_read, kThreads, 0) != cudaSuccess || per_sm < 1) {
    per_sm = 1;
  }
  return per_sm * sms;
}

cudaError_t launch_strided_read(const StridedReadArgs& a, cudaStream_t stream) {
  if (a.data == nullptr || a.accesses <= 0 || a.stride < 1 || a.offset < 0 || a.blocks < 1 || a.partials == nullptr ||
      a.counter == nullptr || a.result == nullptr) {
    return cudaErrorInvalidValue;
  }
  strided_read<<<a.blocks, kThreads, 0, stream>>>(a.data, a.accesses, a.stride, a.offset, a.partials, a.counter,
                                                  a.result);
  return after_launch();
}

cudaError_t launch_gather(const RandomAccessArgs& a, cudaStream_t stream) {
  if (a.table == nullptr || a.indices == nullptr || a.values == nullptr || a.count <= 0 || a.blocks < 1) {
    return cudaErrorInvalidValue;
  }
  gather<<<a.blocks, kThreads, 0, stream>>>(a.table, a.indices, a.values, a.count);
  return after_launch();
}

cudaError_t launch_scatter(const RandomAccessArgs& a, cudaStream_t stream) {
  if (a.table == nullptr || a.indices == nullptr || a.values == nullptr || a.count <= 0 || a.blocks < 1) {
    return cudaErrorInvalidValue;
  }
  scatter<<<a.blocks, kThreads, 0, stream>>>(a.table, a.indices, a.values, a.count);
  return after_launch();
}

}  // namespace roofline::kernels
