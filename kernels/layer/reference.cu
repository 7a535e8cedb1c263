// The fp32 references the layer benchmark checks its output against (layer.hpp): conversions,
// e4m3 scales and rounding, RMSNorm, the add, SwiGLU, rotary embedding and attention, simple and
// slow on purpose.
#include <cmath>
#include <cstddef>

#include "../device_utils.cuh"
#include "common.cuh"

namespace roofline::kernels {
namespace {

using namespace layer_common;

// ---- fp32 references -------------------------------------------------------------------------

template <typename T>
__global__ void __launch_bounds__(kThreads)
    to_float_kernel(const T* __restrict__ in, float* __restrict__ out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    out[i] = TraitsOf<T>::to_float(in[i]);
  }
}

__device__ __forceinline__ float e4m3_value(__nv_fp8_storage_t bits) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(bits, __NV_E4M3)));
}

__global__ void __launch_bounds__(kThreads)
    dequantize_kernel(const __nv_fp8_storage_t* __restrict__ in, const float* __restrict__ scale,
                      float* __restrict__ out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    out[i] = e4m3_value(in[i]) * *scale;
  }
}

__global__ void __launch_bounds__(kThreads)
    round_to_e4m3_kernel(float* __restrict__ x, std::int64_t n, const float* __restrict__ scale) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    x[i] = e4m3_value(__nv_cvt_float_to_fp8(x[i] / *scale, __NV_SATFINITE, __NV_E4M3)) * *scale;
  }
}

// max |in| into *bits, as the bits of a non-negative float (which order as unsigned integers).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    abs_max_kernel(const T* __restrict__ in, std::int64_t n, unsigned int* __restrict__ bits) {
  __shared__ float scratch[kThreads / 32];
  float local = 0.0f;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    local = fmaxf(local, fabsf(TraitsOf<T>::to_float(in[i])));
  }
  for (int offset = 16; offset > 0; offset /= 2) local = fmaxf(local, __shfl_xor_sync(0xffffffffu, local, offset));
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = local;
  __syncthreads();
  if (threadIdx.x == 0) {
    float top = 0.0f;
    for (int w = 0; w < kThreads / 32; ++w) top = fmaxf(top, scratch[w]);
    atomicMax(bits, __float_as_uint(top));
  }
}

__global__ void e4m3_scale_from_max_kernel(float* scale) {
  constexpr float largest_e4m3 = 448.0f;
  *scale = __uint_as_float(*reinterpret_cast<const unsigned int*>(scale)) / largest_e4m3;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    gather_rows_kernel(const T* __restrict__ in, const int* __restrict__ rows, int cols, float* __restrict__ out) {
  const T* from = in + static_cast<std::size_t>(rows[blockIdx.x]) * cols;
  float* to = out + static_cast<std::size_t>(blockIdx.x) * cols;
  for (int c = static_cast<int>(threadIdx.x); c < cols; c += kThreads) to[c] = TraitsOf<T>::to_float(from[c]);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    rmsnorm_reference_kernel(const float* __restrict__ x, const T* __restrict__ gamma, float* __restrict__ out,
                             int hidden, float eps) {
  __shared__ float scratch[kThreads / 32];
  const float* row = x + static_cast<std::size_t>(blockIdx.x) * hidden;
  float sum = 0.0f;
  for (int i = static_cast<int>(threadIdx.x); i < hidden; i += kThreads) sum = fmaf(row[i], row[i], sum);
  const float total = device::block_sum(sum, scratch);
  __shared__ float inv_rms;
  if (threadIdx.x == 0) inv_rms = 1.0f / sqrtf(total / static_cast<float>(hidden) + eps);
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < hidden; i += kThreads) {
    out[static_cast<std::size_t>(blockIdx.x) * hidden + i] = row[i] * inv_rms * TraitsOf<T>::to_float(gamma[i]);
  }
}

__global__ void __launch_bounds__(kThreads)
    add_reference_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                         std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    out[i] = a[i] + b[i];
  }
}

__global__ void __launch_bounds__(kThreads)
    swiglu_reference_kernel(const float* __restrict__ gate_up, float* __restrict__ out, int rows, int ffn) {
  const std::int64_t n = static_cast<std::int64_t>(rows) * ffn;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    const std::int64_t r = i / ffn;
    const std::int64_t c = i % ffn;
    const float g = gate_up[r * 2 * ffn + c];
    out[i] = g / (1.0f + expf(-g)) * gate_up[r * 2 * ffn + ffn + c];
  }
}

// One block of 128 threads per (query row, head): scores for every key in shared memory (fp32),
// softmax with the true maximum, then O by thread per dimension. Keys come from `key(j, dim)`
// (head_dim wide), values from `value(j, dim)` (value_dim wide). Simple and slow on purpose: it
// shares no code or trick with the kernels it checks.
template <typename KeyValue>
__device__ void attention_reference_row(const float* __restrict__ q, int keys, int head_dim, int value_dim, float scale,
                                        const KeyValue& kv, float* __restrict__ out, float* scores) {
  __shared__ float scratch[kThreads / 32];
  const int tid = static_cast<int>(threadIdx.x);
  float local_max = -INFINITY;
  for (int j = tid; j < keys; j += blockDim.x) {
    float dot = 0.0f;
    for (int d = 0; d < head_dim; ++d) dot = fmaf(q[d], kv.key(j, d), dot);
    scores[j] = dot * scale;
    local_max = fmaxf(local_max, scores[j]);
  }
  // Block maximum through the scratch (blockDim.x <= 256).
  for (int offset = 16; offset > 0; offset /= 2)
    local_max = fmaxf(local_max, __shfl_xor_sync(0xffffffffu, local_max, offset));
  if (tid % 32 == 0) scratch[tid / 32] = local_max;
  __syncthreads();
  float top = -INFINITY;
  for (int w = 0; w < static_cast<int>(blockDim.x + 31) / 32; ++w) top = fmaxf(top, scratch[w]);
  __syncthreads();
  float local_sum = 0.0f;
  for (int j = tid; j < keys; j += blockDim.x) {
    scores[j] = expf(scores[j] - top);
    local_sum += scores[j];
  }
  const float total = device::block_sum(local_sum, scratch);
  __shared__ float inv_total;
  if (tid == 0) inv_total = 1.0f / total;
  __syncthreads();  // also: every score is written
  for (int d = tid; d < value_dim; d += blockDim.x) {
    float acc = 0.0f;
    for (int j = 0; j < keys; ++j) acc = fmaf(scores[j], kv.value(j, d), acc);
    out[d] = acc * inv_total;
  }
}

template <typename T>
struct DecodeKv {
  const T* k_cache;  // this sequence's and KV head's [context][d]
  const T* v_cache;
  const float* k_new;  // the current token's k and v (fp32), at position context - 1
  const float* v_new;
  int context;
  int head_dim;
  float scale;  // real value = stored x scale (1 for a 16-bit cache)
  __device__ float key(int j, int d) const {
    return j == context - 1 ? k_new[d]
                            : TraitsOf<T>::to_float(k_cache[static_cast<std::size_t>(j) * head_dim + d]) * scale;
  }
  __device__ float value(int j, int d) const {
    return j == context - 1 ? v_new[d]
                            : TraitsOf<T>::to_float(v_cache[static_cast<std::size_t>(j) * head_dim + d]) * scale;
  }
};

template <typename T>
__global__ void __launch_bounds__(kThreads)
    decode_attention_reference_kernel(const float* __restrict__ qkv, const T* __restrict__ k_cache,
                                      const T* __restrict__ v_cache, float* __restrict__ out, int heads, int kv_heads,
                                      int head_dim, int context, const float* __restrict__ cache_scale) {
  extern __shared__ float scores[];
  const int b = static_cast<int>(blockIdx.x);
  const int h = static_cast<int>(blockIdx.y);
  const int kvh = h / (heads / kv_heads);
  const std::size_t stride = static_cast<std::size_t>(heads + 2 * kv_heads) * head_dim;
  const float* row = qkv + b * stride;
  const std::size_t cache = (static_cast<std::size_t>(b) * kv_heads + kvh) * context * head_dim;
  const DecodeKv<T> kv{k_cache + cache,
                       v_cache + cache,
                       row + (heads + kvh) * head_dim,
                       row + (heads + kv_heads + kvh) * head_dim,
                       context,
                       head_dim,
                       cache_scale != nullptr ? *cache_scale : 1.0f};
  attention_reference_row(row + h * head_dim, context, head_dim, head_dim, rsqrtf(static_cast<float>(head_dim)), kv,
                          out + (static_cast<std::size_t>(b) * heads + h) * head_dim, scores);
}

struct PrefillKv {
  const float* k;  // token 0's k of this KV head; tokens `stride` apart
  const float* v;
  std::size_t stride;
  __device__ float key(int j, int d) const { return k[j * stride + d]; }
  __device__ float value(int j, int d) const { return v[j * stride + d]; }
};

__global__ void __launch_bounds__(kThreads)
    prefill_attention_reference_kernel(const float* __restrict__ qkv, const int* __restrict__ rows,
                                       float* __restrict__ out, int heads, int kv_heads, int head_dim) {
  extern __shared__ float scores[];
  const int token = rows[blockIdx.x];
  const int h = static_cast<int>(blockIdx.y);
  const int kvh = h / (heads / kv_heads);
  const std::size_t stride = static_cast<std::size_t>(heads + 2 * kv_heads) * head_dim;
  const PrefillKv kv{qkv + (heads + kvh) * head_dim, qkv + (heads + kv_heads + kvh) * head_dim, stride};
  attention_reference_row(qkv + token * stride + h * head_dim, token + 1, head_dim, head_dim,
                          rsqrtf(static_cast<float>(head_dim)), kv,
                          out + (static_cast<std::size_t>(blockIdx.x) * heads + h) * head_dim, scores);
}

// The shared latent rows of one sequence: keys are whole rows (latent, then rotary key), values the
// latent alone (the first value_dim columns).
template <typename T>
struct LatentKv {
  const T* rows;  // [context][row_width]
  int row_width;
  __device__ float key(int j, int d) const {
    return TraitsOf<T>::to_float(rows[static_cast<std::size_t>(j) * row_width + d]);
  }
  __device__ float value(int j, int d) const { return key(j, d); }
};

template <typename T>
__global__ void __launch_bounds__(kThreads)
    latent_attention_reference_kernel(const float* __restrict__ q, const T* __restrict__ cache, float* __restrict__ out,
                                      int heads, int rank, int row_width, int context, float scale) {
  extern __shared__ float scores[];
  const int b = static_cast<int>(blockIdx.x);
  const int h = static_cast<int>(blockIdx.y);
  const LatentKv<T> kv{cache + static_cast<std::size_t>(b) * context * row_width, row_width};
  attention_reference_row(q + (static_cast<std::size_t>(b) * heads + h) * row_width, context, row_width, rank, scale,
                          kv, out + (static_cast<std::size_t>(b) * heads + h) * rank, scores);
}

// Rotary embedding in double precision, in place on the q and k heads of fp32 qkv rows (the
// half-split pairing of layer.hpp's rope), one thread per pair.
__global__ void __launch_bounds__(kThreads)
    rope_reference_kernel(float* __restrict__ qkv, int tokens, int heads, int kv_heads, int head_dim,
                          int tokens_per_sequence, int first_position, double theta) {
  const int half = head_dim / 2;
  const int rotated = heads + kv_heads;
  const std::int64_t n = static_cast<std::int64_t>(tokens) * rotated * half;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    const auto row = static_cast<int>(i / (static_cast<std::int64_t>(rotated) * half));
    const int rest = static_cast<int>(i % (static_cast<std::int64_t>(rotated) * half));
    const int head = rest / half;
    const int j = rest % half;
    const int position = first_position + row % tokens_per_sequence;
    const double angle = position * pow(theta, -2.0 * j / head_dim);
    float* x = qkv + static_cast<std::size_t>(row) * (heads + 2 * kv_heads) * head_dim +
               static_cast<std::size_t>(head) * head_dim;
    const double lo = x[j];
    const double hi = x[j + half];
    x[j] = static_cast<float>(lo * cos(angle) - hi * sin(angle));
    x[j + half] = static_cast<float>(hi * cos(angle) + lo * sin(angle));
  }
}

}  // namespace

void to_float(StorageFormat type, const void* in, float* out, std::int64_t elements, Stream stream) {
  detail::require(in != nullptr && out != nullptr && elements >= 1, "to_float: bad arguments");
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    to_float_kernel<T><<<grid_for(elements), kThreads, 0, stream>>>(static_cast<const T*>(in), out, elements);
  });
  ROOFLINE_CHECK_LAUNCH("to_float_kernel");
}

void dequantize_e4m3(const void* in, const float* scale, float* out, std::int64_t elements, Stream stream) {
  detail::require(in != nullptr && scale != nullptr && out != nullptr && elements >= 1,
                  "dequantize_e4m3: bad arguments");
  dequantize_kernel<<<grid_for(elements), kThreads, 0, stream>>>(static_cast<const __nv_fp8_storage_t*>(in), scale, out,
                                                                 elements);
  ROOFLINE_CHECK_LAUNCH("dequantize_kernel");
}

void e4m3_scale_of(StorageFormat type, const void* in, std::int64_t elements, float* scale, Stream stream) {
  detail::require(in != nullptr && scale != nullptr && elements >= 1, "e4m3_scale_of: bad arguments");
  ROOFLINE_CUDA_CHECK(cudaMemsetAsync(scale, 0, sizeof(float), stream));
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    abs_max_kernel<T><<<grid_for(elements), kThreads, 0, stream>>>(static_cast<const T*>(in), elements,
                                                                   reinterpret_cast<unsigned int*>(scale));
  });
  ROOFLINE_CHECK_LAUNCH("abs_max_kernel");
  e4m3_scale_from_max_kernel<<<1, 1, 0, stream>>>(scale);
  ROOFLINE_CHECK_LAUNCH("e4m3_scale_from_max_kernel");
}

void round_to_e4m3_reference(float* x, std::int64_t elements, const float* scale, Stream stream) {
  detail::require(x != nullptr && scale != nullptr && elements >= 1, "round_to_e4m3_reference: bad arguments");
  round_to_e4m3_kernel<<<grid_for(elements), kThreads, 0, stream>>>(x, elements, scale);
  ROOFLINE_CHECK_LAUNCH("round_to_e4m3_kernel");
}

void gather_rows_to_float(StorageFormat type, const void* in, const int* rows, int nrows, int cols, float* out,
                          Stream stream) {
  detail::require(in != nullptr && rows != nullptr && out != nullptr && nrows >= 1 && cols >= 1,
                  "gather_rows_to_float: bad arguments");
  by_type(type, [&](auto tag) {
    using T = decltype(tag);
    gather_rows_kernel<T>
        <<<static_cast<unsigned>(nrows), kThreads, 0, stream>>>(static_cast<const T*>(in), rows, cols, out);
  });
  ROOFLINE_CHECK_LAUNCH("gather_rows_kernel");
}

void rmsnorm_reference(const float* x, StorageFormat gamma_type, const void* gamma, float* out, int rows, int hidden,
                       float eps, Stream stream) {
  detail::require(x != nullptr && gamma != nullptr && out != nullptr && rows >= 1 && hidden >= 1,
                  "rmsnorm_reference: bad arguments");
  by_type(gamma_type, [&](auto tag) {
    using T = decltype(tag);
    rmsnorm_reference_kernel<T>
        <<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(x, static_cast<const T*>(gamma), out, hidden, eps);
  });
  ROOFLINE_CHECK_LAUNCH("rmsnorm_reference_kernel");
}

void add_reference(const float* a, const float* b, float* out, std::int64_t elements, Stream stream) {
  detail::require(a != nullptr && b != nullptr && out != nullptr && elements >= 1, "add_reference: bad arguments");
  add_reference_kernel<<<grid_for(elements), kThreads, 0, stream>>>(a, b, out, elements);
  ROOFLINE_CHECK_LAUNCH("add_reference_kernel");
}

void swiglu_reference(const float* gate_up, float* out, int rows, int ffn, Stream stream) {
  detail::require(gate_up != nullptr && out != nullptr && rows >= 1 && ffn >= 1, "swiglu_reference: bad arguments");
  swiglu_reference_kernel<<<grid_for(static_cast<std::int64_t>(rows) * ffn), kThreads, 0, stream>>>(gate_up, out, rows,
                                                                                                    ffn);
  ROOFLINE_CHECK_LAUNCH("swiglu_reference_kernel");
}

namespace {
// Dynamic shared memory of the reference attention kernels: one fp32 score per key.
std::size_t scores_bytes(int keys) {
  return static_cast<std::size_t>(keys) * sizeof(float);
}
constexpr int kReferenceThreads = 128;
}  // namespace

void decode_attention_reference(const float* qkv_f32, StorageFormat cache_type, const void* k_cache,
                                const void* v_cache, float* out, int batch, HeadLayout layout, int context,
                                Stream stream, const float* cache_scale) {
  detail::require(qkv_f32 != nullptr && k_cache != nullptr && v_cache != nullptr && out != nullptr && batch >= 1 &&
                      context >= 1 && layout.kv_heads >= 1 && layout.heads % layout.kv_heads == 0,
                  "decode_attention_reference: bad arguments");
  const bool e4m3 = cache_type == StorageFormat::fp8_e4m3;
  detail::require(e4m3 == (cache_scale != nullptr), "decode_attention_reference: an e4m3 cache needs its scale");
  const std::size_t smem = scores_bytes(context);
  const dim3 grid(static_cast<unsigned>(batch), static_cast<unsigned>(layout.heads));
  const auto launch = [&](auto tag) {
    using T = decltype(tag);
    ROOFLINE_CUDA_CHECK(cudaFuncSetAttribute(decode_attention_reference_kernel<T>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    decode_attention_reference_kernel<T><<<grid, kReferenceThreads, smem, stream>>>(
        qkv_f32, static_cast<const T*>(k_cache), static_cast<const T*>(v_cache), out, layout.heads, layout.kv_heads,
        layout.head_dim, context, cache_scale);
  };
  if (e4m3) {
    launch(__nv_fp8_e4m3{});
  } else {
    by_type(cache_type, launch);
  }
  ROOFLINE_CHECK_LAUNCH("decode_attention_reference_kernel");
}

void latent_attention_reference(const float* q_f32, StorageFormat cache_type, const void* cache, float* out, int batch,
                                LatentLayout layout, int context, float softmax_scale, Stream stream) {
  detail::require(q_f32 != nullptr && cache != nullptr && out != nullptr && batch >= 1 && context >= 1 &&
                      layout.heads >= 1 && layout.kv_lora_rank >= 1 && layout.rope_dim >= 0,
                  "latent_attention_reference: bad arguments");
  const std::size_t smem = scores_bytes(context);
  const dim3 grid(static_cast<unsigned>(batch), static_cast<unsigned>(layout.heads));
  by_type(cache_type, [&](auto tag) {
    using T = decltype(tag);
    ROOFLINE_CUDA_CHECK(cudaFuncSetAttribute(latent_attention_reference_kernel<T>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    latent_attention_reference_kernel<T><<<grid, kReferenceThreads, smem, stream>>>(
        q_f32, static_cast<const T*>(cache), out, layout.heads, layout.kv_lora_rank,
        layout.kv_lora_rank + layout.rope_dim, context, softmax_scale);
  });
  ROOFLINE_CHECK_LAUNCH("latent_attention_reference_kernel");
}

void prefill_attention_reference(const float* qkv_f32, const int* rows, int nrows, int tokens, float* out,
                                 HeadLayout layout, Stream stream) {
  detail::require(qkv_f32 != nullptr && rows != nullptr && out != nullptr && nrows >= 1 && tokens >= 1 &&
                      layout.kv_heads >= 1 && layout.heads % layout.kv_heads == 0,
                  "prefill_attention_reference: bad arguments");
  // Row t sees t + 1 <= tokens keys.
  const std::size_t smem = scores_bytes(tokens);
  ROOFLINE_CUDA_CHECK(cudaFuncSetAttribute(prefill_attention_reference_kernel,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  const dim3 grid(static_cast<unsigned>(nrows), static_cast<unsigned>(layout.heads));
  prefill_attention_reference_kernel<<<grid, kReferenceThreads, smem, stream>>>(qkv_f32, rows, out, layout.heads,
                                                                                layout.kv_heads, layout.head_dim);
  ROOFLINE_CHECK_LAUNCH("prefill_attention_reference_kernel");
}

void rope_reference(float* qkv_f32, int tokens, HeadLayout layout, int tokens_per_sequence, int first_position,
                    float theta, Stream stream) {
  detail::require(qkv_f32 != nullptr && tokens >= 1 && tokens_per_sequence >= 1 && first_position >= 0 &&
                      layout.head_dim % 2 == 0 && theta > 1.0F,
                  "rope_reference: bad arguments");
  const std::int64_t pairs =
      static_cast<std::int64_t>(tokens) * (layout.heads + layout.kv_heads) * (layout.head_dim / 2);
  rope_reference_kernel<<<grid_for(pairs), kThreads, 0, stream>>>(qkv_f32, tokens, layout.heads, layout.kv_heads,
                                                                  layout.head_dim, tokens_per_sequence, first_position,
                                                                  static_cast<double>(theta));
  ROOFLINE_CHECK_LAUNCH("rope_reference_kernel");
}

}  // namespace roofline::kernels
