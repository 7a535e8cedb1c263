// The layer's row-wise and elementwise steps (layer.hpp): residual add + RMSNorm, rotary
// embedding, SwiGLU, and the quantisation of 16-bit activations to e4m3.
#include <cmath>
#include <cstddef>

#include "../device_utils.cuh"
#include "common.cuh"

namespace roofline::kernels {
namespace {

using namespace layer_common;

__device__ __forceinline__ float silu(float g) {
  return g / (1.0f + __expf(-g));
}

// One block per row: h = x + residual (16-byte loads), stored in the 16-bit format as the new
// residual stream, its sum of squares; then the normalised row from the stored h (each thread
// reads back what it wrote), in T or e4m3.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    add_rmsnorm_kernel(const T* __restrict__ x, const T* __restrict__ residual, const T* __restrict__ gamma,
                       void* __restrict__ out, T* __restrict__ residual_out, int hidden, float eps,
                       const float* __restrict__ e4m3_scale) {
  __shared__ float scratch[kThreads / 32];
  const std::size_t offset = static_cast<std::size_t>(blockIdx.x) * hidden;
  const uint4* xr = reinterpret_cast<const uint4*>(x + offset);
  const uint4* rr = reinterpret_cast<const uint4*>(residual + offset);
  uint4* hr = reinterpret_cast<uint4*>(residual_out + offset);
  const std::int64_t out_row = static_cast<std::int64_t>(blockIdx.x) * (hidden / 8);  // in vectors of 8
  const uint4* g = reinterpret_cast<const uint4*>(gamma);
  const int vectors = hidden / 8;
  float sum = 0.0f;
  for (int i = static_cast<int>(threadIdx.x); i < vectors; i += kThreads) {
    float a[8];
    float b[8];
    unpack8<T>(xr[i], a);
    unpack8<T>(rr[i], b);
#pragma unroll
    for (int j = 0; j < 8; ++j) a[j] += b[j];
    const uint4 h = pack8<T>(a);
    hr[i] = h;
    unpack8<T>(h, a);
#pragma unroll
    for (int j = 0; j < 8; ++j) sum = fmaf(a[j], a[j], sum);
  }
  const float total = device::block_sum(sum, scratch);
  __shared__ float inv_rms;
  if (threadIdx.x == 0) inv_rms = rsqrtf(total / static_cast<float>(hidden) + eps);
  __syncthreads();
  const float scale = inv_rms;
  for (int i = static_cast<int>(threadIdx.x); i < vectors; i += kThreads) {
    float f[8];
    float w[8];
    unpack8<T>(hr[i], f);
    unpack8<T>(g[i], w);
#pragma unroll
    for (int j = 0; j < 8; ++j) f[j] = f[j] * scale * w[j];
    store8<T>(out, out_row + i, f, e4m3_scale);
  }
}

// One thread per 8 pairs (i, i + d/2) of one q or k head of one token: angle = position x
// theta^(-2i/d), in fp32 as engines compute their cos/sin tables.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    rope_kernel(T* __restrict__ qkv, T* __restrict__ q_out, int tokens, int heads, int kv_heads, int head_dim,
                int tokens_per_sequence, int first_position, float log2_theta) {
  const int half = head_dim / 2;
  const int chunks = half / 8;
  const int rotated = heads + kv_heads;
  const std::int64_t tasks = static_cast<std::int64_t>(tokens) * rotated * chunks;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; t < tasks; t += stride) {
    const auto row = static_cast<int>(t / (static_cast<std::int64_t>(rotated) * chunks));
    const int rest = static_cast<int>(t % (static_cast<std::int64_t>(rotated) * chunks));
    const int head = rest / chunks;
    const int chunk = rest % chunks;
    const float position = static_cast<float>(first_position + row % tokens_per_sequence);
    T* src = qkv + static_cast<std::size_t>(row) * (heads + 2 * kv_heads) * head_dim +
             static_cast<std::size_t>(head) * head_dim;
    // Queries go head-major to q_out where given ([heads][tokens][d]); keys stay in place.
    T* dst =
        q_out != nullptr && head < heads ? q_out + (static_cast<std::size_t>(head) * tokens + row) * head_dim : src;
    float lo[8];
    float hi[8];
    unpack8<T>(reinterpret_cast<const uint4*>(src)[chunk], lo);
    unpack8<T>(reinterpret_cast<const uint4*>(src + half)[chunk], hi);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int i = chunk * 8 + j;
      const float inv_freq = exp2f(-2.0f * static_cast<float>(i) / static_cast<float>(head_dim) * log2_theta);
      float s;
      float c;
      sincosf(position * inv_freq, &s, &c);
      const float a = lo[j];
      const float b = hi[j];
      lo[j] = a * c - b * s;
      hi[j] = b * c + a * s;
    }
    reinterpret_cast<uint4*>(dst)[chunk] = pack8<T>(lo);
    reinterpret_cast<uint4*>(dst + half)[chunk] = pack8<T>(hi);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) swiglu_kernel(const T* __restrict__ gate_up, void* __restrict__ out,
                                                          int rows, int ffn, const float* __restrict__ e4m3_scale) {
  const int per_row = ffn / 8;
  const std::int64_t vectors = static_cast<std::int64_t>(rows) * per_row;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < vectors; i += stride) {
    const std::int64_t r = i / per_row;
    const std::int64_t c = i % per_row;
    const uint4* row = reinterpret_cast<const uint4*>(gate_up + r * 2 * ffn);
    float g[8];
    float u[8];
    unpack8<T>(row[c], g);
    unpack8<T>(row[per_row + c], u);
#pragma unroll
    for (int j = 0; j < 8; ++j) g[j] = silu(g[j]) * u[j];
    store8<T>(out, i, g, e4m3_scale);  // i = r x per_row + c
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) quantize_kernel(const uint4* __restrict__ in, uint2* __restrict__ out,
                                                            std::int64_t vectors, const float* __restrict__ scale) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < vectors; i += stride) {
    float f[8];
    unpack8<T>(in[i], f);
    out[i] = pack8_e4m3(f, *scale);
  }
}

}  // namespace

void add_rmsnorm(StorageFormat type, const void* x, const void* residual, const void* gamma, void* out,
                 void* residual_out, int rows, int hidden, float eps, Stream stream, const float* e4m3_scale) {
  detail::require(rows >= 1 && hidden >= 8 && hidden % 8 == 0, "add_rmsnorm: rows >= 1 and hidden a multiple of 8");
  for (const void* p : {x, residual, gamma, static_cast<const void*>(out), static_cast<const void*>(residual_out)}) {
    require_aligned(p, "add_rmsnorm");
  }
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    add_rmsnorm_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(residual), static_cast<const T*>(gamma), out,
        static_cast<T*>(residual_out), hidden, eps, e4m3_scale);
  });
  ROOFLINE_CHECK_LAUNCH("add_rmsnorm_kernel");
}

void rope(StorageFormat type, void* qkv, void* q_head_major, int tokens, HeadLayout layout, int tokens_per_sequence,
          int first_position, float theta, Stream stream) {
  detail::require(tokens >= 1 && tokens_per_sequence >= 1 && first_position >= 0 && layout.head_dim % 16 == 0 &&
                      theta > 1.0F && (q_head_major == nullptr || tokens_per_sequence == tokens),
                  "rope: bad shape (head-major queries need one sequence)");
  require_aligned(qkv, "rope");
  if (q_head_major != nullptr) require_aligned(q_head_major, "rope");
  const std::int64_t tasks =
      static_cast<std::int64_t>(tokens) * (layout.heads + layout.kv_heads) * (layout.head_dim / 16);
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    rope_kernel<T><<<grid_for(tasks), kThreads, 0, stream>>>(static_cast<T*>(qkv), static_cast<T*>(q_head_major),
                                                             tokens, layout.heads, layout.kv_heads, layout.head_dim,
                                                             tokens_per_sequence, first_position, std::log2(theta));
  });
  ROOFLINE_CHECK_LAUNCH("rope_kernel");
}

void swiglu(StorageFormat type, const void* gate_up, void* out, int rows, int ffn, Stream stream,
            const float* e4m3_scale) {
  detail::require(rows >= 1 && ffn >= 8 && ffn % 8 == 0, "swiglu: rows >= 1 and ffn a multiple of 8");
  require_aligned(gate_up, "swiglu");
  require_aligned(out, "swiglu");
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    swiglu_kernel<T><<<grid_for(static_cast<std::int64_t>(rows) * ffn / 8), kThreads, 0, stream>>>(
        static_cast<const T*>(gate_up), out, rows, ffn, e4m3_scale);
  });
  ROOFLINE_CHECK_LAUNCH("swiglu_kernel");
}

void quantize_e4m3(StorageFormat type, const void* in, void* out, std::int64_t elements, const float* scale,
                   Stream stream) {
  detail::require(elements >= 8 && elements % 8 == 0 && scale != nullptr,
                  "quantize_e4m3: elements a positive multiple of 8 and a scale");
  require_aligned(in, "quantize_e4m3");
  require_aligned(out, "quantize_e4m3");
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    quantize_kernel<T><<<grid_for(elements / 8), kThreads, 0, stream>>>(static_cast<const uint4*>(in),
                                                                        static_cast<uint2*>(out), elements / 8, scale);
  });
  ROOFLINE_CHECK_LAUNCH("quantize_kernel");
}

}  // namespace roofline::kernels
