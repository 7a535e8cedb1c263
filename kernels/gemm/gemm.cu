// GEMM entry points: shape checks, dispatch to the kernels, and the cuBLAS reference.
#include <cublas_v2.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../blas_api.hpp"
#include "../cuda_check.cuh"
#include "gemm_internal.cuh"

namespace roofline::kernels {

const char* gemm_kernel_name(GemmKernel kernel) {
  switch (kernel) {
    case GemmKernel::naive: return "naive";
    case GemmKernel::smem_tiled: return "smem_tiled";
    case GemmKernel::mma_sync: return "mma_sync";
    case GemmKernel::wgmma: return "wgmma";
  }
  return "?";
}

GemmTiling gemm_tiling(GemmKernel kernel) {
  switch (kernel) {
    case GemmKernel::naive: return detail::naive_tiling;
    case GemmKernel::smem_tiled: return detail::smem_tiled_tiling;
    case GemmKernel::mma_sync: return detail::mma_sync_tiling;
    case GemmKernel::wgmma: return detail::wgmma_tiling;
  }
  return {};
}

bool gemm_kernel_supported(GemmKernel kernel, int device) {
  cudaDeviceProp prop{};
  ROOFLINE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  switch (kernel) {
    case GemmKernel::naive:
    case GemmKernel::smem_tiled: return true;
    case GemmKernel::mma_sync: return prop.major >= 8;
    case GemmKernel::wgmma: return detail::sm90a_runs_on(device);
  }
  return false;
}

namespace {

void check_gemm_arguments(const char* name, const void* a, const void* b, const void* c, int m, int n, int k) {
  const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  detail::require(m >= 1 && n >= 1 && k >= 1, std::string("gemm ") + name + ": empty shape " + shape);
  detail::require(n % 8 == 0 && k % 8 == 0,
                  std::string("gemm ") + name + ": n and k must be multiples of 8, got " + shape);
  for (const void* pointer : {a, b, c}) {
    detail::require(pointer != nullptr && reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0,
                    std::string("gemm ") + name + ": operands must be 16-byte aligned");
  }
}

}  // namespace

void gemm(GemmKernel kernel, StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k,
          Stream stream) {
  check_gemm_arguments(gemm_kernel_name(kernel), a, b, c, m, n, k);
  switch (kernel) {
    case GemmKernel::naive: detail::gemm_naive(type, a, b, c, m, n, k, stream); return;
    case GemmKernel::smem_tiled: detail::gemm_smem_tiled(type, a, b, c, m, n, k, stream); return;
    case GemmKernel::mma_sync: detail::gemm_mma_sync(type, a, b, c, m, n, k, stream); return;
    case GemmKernel::wgmma: detail::gemm_wgmma(type, a, b, c, m, n, k, stream); return;
  }
}

std::size_t gemm_split_k_workspace_bytes(int m, int n, int k, int sms) {
  return detail::gemm_wgmma_split_k_workspace_bytes(m, n, k, sms);
}

void gemm_split_k(StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k, int sms,
                  void* workspace, Stream stream) {
  check_gemm_arguments("wgmma split-K", a, b, c, m, n, k);
  detail::gemm_wgmma_split_k(type, a, b, c, m, n, k, sms, workspace, stream);
}

namespace {

__global__ void fill_fp8_check_kernel(__nv_fp8_e4m3* data, std::size_t count, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    data[i] = __nv_fp8_e4m3(static_cast<float>(fp8_check_level(seed, i)) * static_cast<float>(fp8_check_level_scale));
  }
}

}  // namespace

void fill_fp8_check_operand(void* data, std::size_t count, std::uint64_t seed, Stream stream) {
  if (count == 0) return;
  const std::size_t threads = 256;
  const std::size_t blocks = std::min<std::size_t>((count + threads - 1) / threads, 4096);
  fill_fp8_check_kernel<<<static_cast<unsigned>(blocks), static_cast<unsigned>(threads), 0, stream>>>(
      static_cast<__nv_fp8_e4m3*>(data), count, seed);
  ROOFLINE_CHECK_LAUNCH("fill_fp8_check_kernel");
}

void gemm_fp8(GemmKernel kernel, const Fp8GemmArgs& args, Stream stream) {
  const std::string shape = std::to_string(args.m) + "x" + std::to_string(args.n) + "x" + std::to_string(args.k);
  detail::require(kernel == GemmKernel::wgmma,
                  std::string("gemm_fp8: only the wgmma kernel is built for FP8, not ") + gemm_kernel_name(kernel));
  detail::require(args.m >= 1 && args.n >= 1 && args.k >= 1, "gemm_fp8: empty shape " + shape);
  detail::require(args.n % 8 == 0 && args.k % 16 == 0, "gemm_fp8: n must be a multiple of 8 and k of 16, got " + shape);
  for (const void* pointer : {args.a, args.b, static_cast<const void*>(args.c)}) {
    detail::require(pointer != nullptr && reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0,
                    "gemm_fp8: operands must be 16-byte aligned");
  }
  detail::require(args.a_scale != nullptr && args.b_scale != nullptr, "gemm_fp8: the scales must be given");
  detail::gemm_wgmma_fp8(args, stream);
}

namespace {

using detail::check_cublas;

// Column-major view: C^T[n x m] = B[n x k] . A^T[k x m], i.e. op(B) = T on the k x n column-major
// buffer of B, op(A) = N on the k x m column-major buffer of A.
void tn_gemm(const BlasApi& blas, cudaDataType data, cudaDataType out, const void* a, const void* b, void* c, int m,
             int n, int k, Stream stream) {
  detail::require(blas.handle != nullptr && blas.gemm_ex != nullptr && blas.set_stream != nullptr,
                  "cuBLAS GEMM: cuBLAS is not loaded");
  detail::require(m >= 1 && n >= 1 && k >= 1, "cuBLAS GEMM: empty shape");
  check_cublas(blas.set_stream(blas.handle, stream), "cublasSetStream");
  const float alpha = 1.0f;
  const float beta = 0.0f;
  check_cublas(blas.gemm_ex(blas.handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, b, data, k, a, data, k, &beta, c,
                            out, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

}  // namespace

void cublas_gemm(const BlasApi& blas, StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k,
                 Stream stream) {
  const cudaDataType data = cuda_data_type(type);
  tn_gemm(blas, data, data, a, b, c, m, n, k, stream);
}

void cublas_gemm_f32(const BlasApi& blas, const float* a, const float* b, float* c, int m, int n, int k,
                     Stream stream) {
  // CUBLAS_COMPUTE_32F with fp32 operands and the default math mode: plain fp32, no TF32.
  tn_gemm(blas, CUDA_R_32F, CUDA_R_32F, a, b, c, m, n, k, stream);
}

}  // namespace roofline::kernels
