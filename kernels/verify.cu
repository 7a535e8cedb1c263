// Random fill and whole-buffer comparison: the device side of the compute and layer suites' checks.
#include <cstddef>
#include <cstdint>

#include "cuda_check.cuh"
#include "storage_format.cuh"
#include "verify.hpp"

namespace roofline::kernels {
namespace {

__device__ __forceinline__ std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

template <typename T>
__global__ void fill_kernel(T* data, std::size_t count, std::uint64_t seed, float scale, float offset) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    const std::uint64_t bits = mix(seed * 0x9e3779b97f4a7c15ULL + i);
    const float unit = static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    data[i] = TraitsOf<T>::from_float(offset + (2.0f * unit - 1.0f) * scale);
  }
}

struct Sums {
  double sum_sq_diff;
  double sum_sq_ref;
  double max_abs_diff;
  unsigned long long nonfinite;
};

template <typename T>
__global__ void compare_kernel(const T* out, const T* ref, std::size_t count, Sums* sums) {
  using Traits = TraitsOf<T>;
  double diff2 = 0;
  double ref2 = 0;
  double worst = 0;
  unsigned long long bad = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    const float o = Traits::to_float(out[i]);
    const float r = ref == nullptr ? 0.0f : Traits::to_float(ref[i]);
    if (!isfinite(o)) {
      ++bad;
      continue;
    }
    const double d = static_cast<double>(o) - r;
    diff2 += d * d;
    ref2 += static_cast<double>(r) * r;
    worst = fmax(worst, fabs(d));
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    diff2 += __shfl_xor_sync(0xffffffffu, diff2, offset);
    ref2 += __shfl_xor_sync(0xffffffffu, ref2, offset);
    worst = fmax(worst, __shfl_xor_sync(0xffffffffu, worst, offset));
    bad += __shfl_xor_sync(0xffffffffu, bad, offset);
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&sums->sum_sq_diff, diff2);
    atomicAdd(&sums->sum_sq_ref, ref2);
    atomicAdd(&sums->nonfinite, bad);
    // max of non-negative doubles: their bit patterns order like unsigned integers
    atomicMax(reinterpret_cast<unsigned long long*>(&sums->max_abs_diff),
              static_cast<unsigned long long>(__double_as_longlong(worst)));
  }
}

constexpr int kThreads = 256;

unsigned grid_for(std::size_t count) {
  const std::size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 4096 ? (blocks == 0 ? 1 : blocks) : 4096);
}

Comparison run_compare(StorageFormat type, const void* out, const void* ref, std::size_t count, Stream stream) {
  Sums* sums = nullptr;
  ROOFLINE_CUDA_CHECK(cudaMalloc(&sums, sizeof(Sums)));
  Sums host{};
  try {
    ROOFLINE_CUDA_CHECK(cudaMemsetAsync(sums, 0, sizeof(Sums), stream));
    dispatch_storage<verify_formats>(type, [&](auto traits) {
      using T = typename decltype(traits)::Element;
      compare_kernel<<<grid_for(count), kThreads, 0, stream>>>(static_cast<const T*>(out), static_cast<const T*>(ref),
                                                               count, sums);
    });
    ROOFLINE_CHECK_LAUNCH("compare_kernel");
    ROOFLINE_CUDA_CHECK(cudaMemcpyAsync(&host, sums, sizeof(Sums), cudaMemcpyDeviceToHost, stream));
    ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
  } catch (...) {
    cudaFree(sums);
    throw;
  }
  ROOFLINE_CUDA_CHECK(cudaFree(sums));
  return {host.sum_sq_diff, host.sum_sq_ref, host.max_abs_diff, host.nonfinite};
}

}  // namespace

void fill_uniform(StorageFormat type, void* data, std::size_t count, std::uint64_t seed, float scale, Stream stream) {
  fill_uniform(type, data, count, seed, scale, 0.0f, stream);
}

void fill_uniform(StorageFormat type, void* data, std::size_t count, std::uint64_t seed, float scale, float offset,
                  Stream stream) {
  dispatch_storage<verify_formats>(type, [&](auto traits) {
    using T = typename decltype(traits)::Element;
    fill_kernel<<<grid_for(count), kThreads, 0, stream>>>(static_cast<T*>(data), count, seed, scale, offset);
  });
  ROOFLINE_CHECK_LAUNCH("fill_kernel");
}

Comparison compare(StorageFormat type, const void* out, const void* ref, std::size_t count, Stream stream) {
  return run_compare(type, out, ref, count, stream);
}

std::uint64_t count_nonfinite(StorageFormat type, const void* data, std::size_t count, Stream stream) {
  return run_compare(type, data, nullptr, count, stream).nonfinite;
}

}  // namespace roofline::kernels
