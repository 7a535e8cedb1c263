// BabelStream-style kernels. Each thread moves `kUnroll` vectors per array per tile, all loads
// issued before the first store, so that 64 bytes per array and thread are in flight.
#include <cstdint>

#include "device_utils.cuh"
#include "stream.hpp"

namespace roofline::kernels {
namespace {

constexpr int kThreads = 256;

template <int Bytes>
struct VectorOf;
template <>
struct VectorOf<4> {
  using type = float;
};
template <>
struct VectorOf<8> {
  using type = float2;
};
template <>
struct VectorOf<16> {
  using type = float4;
};

__device__ __forceinline__ float combine(StreamOp op, float x, float y, float s) {
  switch (op) {
    case StreamOp::scale: return s * x;
    case StreamOp::add: return x + y;
    case StreamOp::triad: return x + s * y;
    default: return x;
  }
}
__device__ __forceinline__ float2 combine(StreamOp op, float2 x, float2 y, float s) {
  return make_float2(combine(op, x.x, y.x, s), combine(op, x.y, y.y, s));
}
__device__ __forceinline__ float4 combine(StreamOp op, float4 x, float4 y, float s) {
  return make_float4(combine(op, x.x, y.x, s), combine(op, x.y, y.y, s), combine(op, x.z, y.z, s),
                     combine(op, x.w, y.w, s));
}

__device__ __forceinline__ double product(float x, float y) {
  return static_cast<double>(x) * static_cast<double>(y);  // exact: 24 x 24 bits fit in 53
}
__device__ __forceinline__ double product(float2 x, float2 y) {
  return product(x.x, y.x) + product(x.y, y.y);
}
__device__ __forceinline__ double product(float4 x, float4 y) {
  return (product(x.x, y.x) + product(x.y, y.y)) + (product(x.z, y.z) + product(x.w, y.w));
}

template <bool Streaming, typename V>
__device__ __forceinline__ V load(const V* p) {
  if constexpr (Streaming) {
    return __ldcs(p);
  } else {
    return *p;
  }
}
template <bool Streaming, typename V>
__device__ __forceinline__ void store(V* p, V v) {
  if constexpr (Streaming) {
    __stcs(p, v);
  } else {
    *p = v;
  }
}

__host__ __device__ constexpr bool reads_y(StreamOp op) {
  return op == StreamOp::add || op == StreamOp::triad || op == StreamOp::dot;
}

// One tile: kThreads x U consecutive vectors starting at `tile`, vector j of thread t at
// tile_start + j x kThreads + t (coalesced for every j).
template <StreamOp Op, typename V, int U, bool Streaming = false>
__device__ __forceinline__ void stream_tile_body(const V* __restrict__ x, const V* __restrict__ y, V* __restrict__ out,
                                                 float s, std::int64_t tile, std::int64_t nvec) {
  const std::int64_t base = tile * (kThreads * U) + threadIdx.x;
  if (base + static_cast<std::int64_t>(U - 1) * kThreads < nvec) {
    V xv[U];
    V yv[U];
#pragma unroll
    for (int j = 0; j < U; ++j) {
      xv[j] = load<Streaming>(x + base + j * kThreads);
      if constexpr (reads_y(Op)) yv[j] = load<Streaming>(y + base + j * kThreads);
    }
#pragma unroll
    for (int j = 0; j < U; ++j) {
      if constexpr (reads_y(Op)) {
        store<Streaming>(out + base + j * kThreads, combine(Op, xv[j], yv[j], s));
      } else {
        store<Streaming>(out + base + j * kThreads, combine(Op, xv[j], xv[j], s));
      }
    }
  } else {
    for (int j = 0; j < U; ++j) {
      const std::int64_t i = base + j * kThreads;
      if (i < nvec) out[i] = combine(Op, x[i], reads_y(Op) ? y[i] : x[i], s);
    }
  }
}

template <StreamOp Op, typename V, int U>
__global__ void __launch_bounds__(kThreads)
    stream_tile(const V* __restrict__ x, const V* __restrict__ y, V* __restrict__ out, float s, std::int64_t nvec) {
  stream_tile_body<Op, V, U>(x, y, out, s, blockIdx.x, nvec);
}

template <StreamOp Op, typename V, int U, bool Streaming>
__global__ void __launch_bounds__(kThreads) stream_persistent(const V* __restrict__ x, const V* __restrict__ y,
                                                              V* __restrict__ out, float s, std::int64_t nvec) {
  const std::int64_t tiles = (nvec + kThreads * U - 1) / (kThreads * U);
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    stream_tile_body<Op, V, U, Streaming>(x, y, out, s, tile, nvec);
  }
}

template <typename V, int U>
__global__ void __launch_bounds__(kThreads)
    stream_dot(const V* __restrict__ x, const V* __restrict__ y, std::int64_t nvec, double* partials, unsigned* counter,
               double* result) {
  __shared__ double scratch[kThreads / 32];
  double sum = 0;
  const std::int64_t tiles = (nvec + kThreads * U - 1) / (kThreads * U);
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t base = tile * (kThreads * U) + threadIdx.x;
    if (base + static_cast<std::int64_t>(U - 1) * kThreads < nvec) {
      V xv[U];
      V yv[U];
#pragma unroll
      for (int j = 0; j < U; ++j) {
        xv[j] = x[base + j * kThreads];
        yv[j] = y[base + j * kThreads];
      }
#pragma unroll
      for (int j = 0; j < U; ++j) sum += product(xv[j], yv[j]);
    } else {
      for (int j = 0; j < U; ++j) {
        const std::int64_t i = base + j * kThreads;
        if (i < nvec) sum += product(x[i], y[i]);
      }
    }
  }
  const double block_total = device::block_sum(sum, scratch);
  device::finish_reduction(block_total, partials, counter, result, scratch);
}

// 64 bytes per thread and array in flight: 16 scalars, 8 float2 or 4 float4.
template <int Bytes>
constexpr int unroll_for() {
  return 64 / Bytes;
}

template <StreamOp Op, int Bytes>
void* kernel_for(StreamSchedule schedule) {
  using V = typename VectorOf<Bytes>::type;
  constexpr int U = unroll_for<Bytes>();
  switch (schedule) {
    case StreamSchedule::tile: return reinterpret_cast<void*>(&stream_tile<Op, V, U>);
    case StreamSchedule::persistent: return reinterpret_cast<void*>(&stream_persistent<Op, V, U, false>);
    case StreamSchedule::persistent_streaming: return reinterpret_cast<void*>(&stream_persistent<Op, V, U, true>);
  }
  return nullptr;
}

template <int Bytes>
void* dot_kernel() {
  using V = typename VectorOf<Bytes>::type;
  return reinterpret_cast<void*>(&stream_dot<V, unroll_for<Bytes>()>);
}

template <int Bytes>
void* select_kernel(StreamOp op, StreamSchedule schedule) {
  switch (op) {
    case StreamOp::copy: return kernel_for<StreamOp::copy, Bytes>(schedule);
    case StreamOp::scale: return kernel_for<StreamOp::scale, Bytes>(schedule);
    case StreamOp::add: return kernel_for<StreamOp::add, Bytes>(schedule);
    case StreamOp::triad: return kernel_for<StreamOp::triad, Bytes>(schedule);
    case StreamOp::dot: return dot_kernel<Bytes>();
  }
  return nullptr;
}

void* select_kernel(StreamOp op, StreamSchedule schedule, int vector_bytes) {
  switch (vector_bytes) {
    case 4: return select_kernel<4>(op, schedule);
    case 8: return select_kernel<8>(op, schedule);
    case 16: return select_kernel<16>(op, schedule);
    default: return nullptr;
  }
}

bool aligned(const void* p, int bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % static_cast<std::uintptr_t>(bytes) == 0;
}

}  // namespace

int stream_persistent_blocks(StreamOp op, StreamSchedule schedule, int vector_bytes, int sms) {
  void* kernel =
      select_kernel(op, schedule == StreamSchedule::tile ? StreamSchedule::persistent : schedule, vector_bytes);
  int per_sm = 0;
  if (kernel == nullptr || cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0) != cudaSuccess ||
      per_sm < 1) {
    per_sm = 1;
  }
  return per_sm * sms;
}

cudaError_t launch_stream(const StreamArgs& a, cudaStream_t stream) {
  void* kernel = select_kernel(a.op, a.schedule, a.vector_bytes);
  const std::int64_t per_vector = a.vector_bytes / 4;
  if (kernel == nullptr || a.elements <= 0 || a.elements % per_vector != 0 || !aligned(a.x, a.vector_bytes)) {
    return cudaErrorInvalidValue;
  }
  const bool dot = a.op == StreamOp::dot;
  if ((reads_y(a.op) && !aligned(a.y, a.vector_bytes)) || (!dot && !aligned(a.out, a.vector_bytes))) {
    return cudaErrorInvalidValue;
  }
  if (dot && (a.partials == nullptr || a.counter == nullptr || a.result == nullptr || a.blocks < 1)) {
    return cudaErrorInvalidValue;
  }
  std::int64_t nvec = a.elements / per_vector;
  const std::int64_t tile = static_cast<std::int64_t>(kThreads) * (64 / a.vector_bytes);
  const std::int64_t tiles = (nvec + tile - 1) / tile;
  std::int64_t grid = a.schedule == StreamSchedule::tile && !dot ? tiles : a.blocks;
  if (grid < 1 || grid > 0x7FFFFFFF) return cudaErrorInvalidValue;
  const float* x = a.x;
  const float* y = a.y != nullptr ? a.y : a.x;
  float* out = a.out;
  double* partials = a.partials;
  unsigned* counter = a.counter;
  double* result = a.result;
  float s = a.scalar;
  void* dot_args[] = {&x, &y, &nvec, &partials, &counter, &result};
  void* stream_args[] = {&x, &y, &out, &s, &nvec};
  const cudaError_t launched = cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(grid)), dim3(kThreads),
                                                dot ? dot_args : stream_args, 0, stream);
  return launched != cudaSuccess ? launched : cudaGetLastError();
}

}  // namespace roofline::kernels
