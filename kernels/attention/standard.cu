// Standard (materialised) attention: S = scale * Q K^T and O = P V through cuBLAS strided-batched
// GEMMs, a row softmax kernel in between that overwrites S with P in place. This is the
// memory-bound baseline of the standard-vs-flash comparison: S is written once and read twice
// (softmax, then the P V product), batch*heads*seq^2 elements each time.
//
// Grouped-query attention without copying K/V: the query heads of one kv group are consecutive in
// [batch, heads, seq, d], so their rows form one (group*seq) x d matrix that multiplies the
// group's K; each GEMM batch entry is one (batch, kv head).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../attention.hpp"
#include "../blas_api.hpp"
#include "../cuda_check.cuh"
#include "../tc_ptx.cuh"

namespace roofline::kernels {
namespace {

constexpr int kSoftmaxThreads = 256;

// Combines two (max, sum of exp2(x - max)) pairs of one row.
__device__ __forceinline__ void combine(float& m, float& l, float m_other, float l_other) {
  const float top = fmaxf(m, m_other);
  if (top == -INFINITY) return;  // both empty
  l = l * exp2f(m - top) + l_other * exp2f(m_other - top);
  m = top;
}

// One block per row of S (batch*heads*seq rows of `seq` elements, already scaled). Values are taken
// in base 2 (x log2 e). Pass 1: each thread keeps a running (max, sum) over its columns; the block
// combines them. Pass 2 rewrites the row as probabilities, 0 where the causal mask hides the key.
template <typename T>
__global__ void __launch_bounds__(kSoftmaxThreads) softmax_rows_kernel(T* __restrict__ s, int seq, int causal) {
  using Traits = TraitsOf<T>;
  constexpr float kLog2e = 1.4426950408889634f;
  const std::size_t row = blockIdx.x;
  const int query = static_cast<int>(row % static_cast<std::size_t>(seq));
  const int valid = causal ? query + 1 : seq;
  T* p = s + row * static_cast<std::size_t>(seq);
  const int tid = static_cast<int>(threadIdx.x);

  float m = -INFINITY;
  float l = 0.0f;
  for (int c = tid; c < valid; c += kSoftmaxThreads) {
    const float x = Traits::to_float(p[c]) * kLog2e;
    if (x > m) {
      l = l * exp2f(m - x) + 1.0f;
      m = x;
    } else {
      l += exp2f(x - m);
    }
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    const float m_other = __shfl_xor_sync(0xffffffffu, m, offset);
    const float l_other = __shfl_xor_sync(0xffffffffu, l, offset);
    combine(m, l, m_other, l_other);
  }
  __shared__ float warp_m[kSoftmaxThreads / 32];
  __shared__ float warp_l[kSoftmaxThreads / 32];
  if (tid % 32 == 0) {
    warp_m[tid / 32] = m;
    warp_l[tid / 32] = l;
  }
  __syncthreads();
  m = warp_m[0];
  l = warp_l[0];
  for (int w = 1; w < kSoftmaxThreads / 32; ++w) combine(m, l, warp_m[w], warp_l[w]);
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;

  for (int c = tid; c < seq; c += kSoftmaxThreads) {
    const float prob = c < valid ? exp2f(Traits::to_float(p[c]) * kLog2e - m) * inv : 0.0f;
    p[c] = Traits::from_float(prob);
  }
}

void check_cublas(cublasStatus_t status, const char* what) {
  // A number: cublasGetStatusName lives in the library, which is not linked (blas_api.hpp).
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw KernelError(std::string(what) + " failed: cuBLAS status " + std::to_string(static_cast<int>(status)));
  }
}

}  // namespace

std::size_t standard_attention_workspace_bytes(const AttentionShape& shape) {
  return static_cast<std::size_t>(shape.batch) * shape.heads * shape.seq * static_cast<std::size_t>(shape.seq) * 2;
}

void standard_attention_forward(const BlasApi& blas, StorageFormat type, const AttentionShape& shape, const void* q,
                                const void* k, const void* v, void* o, void* workspace, Stream stream) {
  detail::require(blas.handle != nullptr && blas.gemm_strided_batched_ex != nullptr && blas.set_stream != nullptr,
                  "standard attention: cuBLAS is not loaded");
  detail::require(shape.batch >= 1 && shape.heads >= 1 && shape.kv_heads >= 1 && shape.seq >= 1 &&
                      shape.head_dim >= 1 && shape.heads % shape.kv_heads == 0,
                  "standard attention: invalid shape (heads must be a multiple of kv_heads)");
  const long long group = shape.heads / shape.kv_heads;
  const long long seq = shape.seq;
  const long long d = shape.head_dim;
  const long long dv = shape.head_dim_v == 0 ? shape.head_dim : shape.head_dim_v;  // V and O
  detail::require(dv >= 1, "standard attention: head_dim_v must be >= 1 (or 0: head_dim)");
  const long long rows = static_cast<long long>(shape.batch) * shape.heads * seq;
  detail::require(group * seq <= 0x7fffffff && rows <= 0x7fffffff,
                  "standard attention: seq * heads too large for one cuBLAS call");
  const float scale = shape.scale > 0 ? shape.scale : 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
  const float one = 1.0f;
  const float zero = 0.0f;
  const cudaDataType data = cuda_data_type(type);
  cublasHandle_t handle = blas.handle;
  check_cublas(blas.set_stream(handle, stream), "cublasSetStream");
  const int batch_count = shape.batch * shape.kv_heads;

  // S[g*seq x seq] = scale * Qg . K^T; column-major that is S^T[seq x g*seq] = K (as d x seq)^T . Qg (d x g*seq).
  check_cublas(blas.gemm_strided_batched_ex(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(seq),
                                            static_cast<int>(group * seq), static_cast<int>(d), &scale, k, data,
                                            static_cast<int>(d), seq * d, q, data, static_cast<int>(d), group * seq * d,
                                            &zero, workspace, data, static_cast<int>(seq), group * seq * seq,
                                            batch_count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx (S = Q K^T)");

  dispatch_storage<attention_formats>(type, [&](auto traits) {
    using T = typename decltype(traits)::Element;
    softmax_rows_kernel<T><<<static_cast<unsigned>(rows), kSoftmaxThreads, 0, stream>>>(
        static_cast<T*>(workspace), shape.seq, shape.causal ? 1 : 0);
  });
  ROOFLINE_CHECK_LAUNCH("softmax_rows_kernel");

  // O[g*seq x dv] = P . V; column-major O^T[dv x g*seq] = V (as dv x seq) . P^T (seq x g*seq).
  check_cublas(blas.gemm_strided_batched_ex(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(dv),
                                            static_cast<int>(group * seq), static_cast<int>(seq), &one, v, data,
                                            static_cast<int>(dv), seq * dv, workspace, data, static_cast<int>(seq),
                                            group * seq * seq, &zero, o, data, static_cast<int>(dv), group * seq * dv,
                                            batch_count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx (O = P V)");
}

}  // namespace roofline::kernels
