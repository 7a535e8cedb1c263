#pragma once

// The cuBLAS entry points the kernels call (the GEMM reference, standard attention, the cuBLAS
// variants of the decoder layer), handed to them by their caller. The benchmark harness loads
// cuBLAS at run time (dlopen), so that `roofline` does not load ~700 MB of libraries at start-up
// for commands that never touch a GPU; nothing in kernels/ links cuBLAS.

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstddef>
#include <memory>

#include "storage_format.hpp"

namespace roofline::kernels {

// cublasGemmEx, cublasGemmStridedBatchedEx and cublasSetStream as the library exports them (the
// header also declares C++ overloads, which dlsym cannot name).
using CublasGemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                        const void*, const void*, cudaDataType, int, const void*, cudaDataType, int,
                                        const void*, void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using CublasGemmStridedBatchedEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                                      int, const void*, const void*, cudaDataType, int, long long int,
                                                      const void*, cudaDataType, int, long long int, const void*, void*,
                                                      cudaDataType, int, long long int, int, cublasComputeType_t,
                                                      cublasGemmAlgo_t);
using CublasSetStream = cublasStatus_t (*)(cublasHandle_t, cudaStream_t);
// cublasGemmGroupedBatchedEx (cuBLAS 12.5 and later): groups of problems of one shape each, the
// shapes, leading dimensions and scalars in host arrays (one entry per group), the operand
// pointers in device arrays (one entry per problem).
using CublasGemmGroupedBatchedEx = cublasStatus_t (*)(cublasHandle_t, const cublasOperation_t[],
                                                      const cublasOperation_t[], const int[], const int[], const int[],
                                                      const void*, const void* const[], cudaDataType, const int[],
                                                      const void* const[], cudaDataType, const int[], const void*,
                                                      void* const[], cudaDataType, const int[], int, const int[],
                                                      cublasComputeType_t);

// The cuBLAS element type of a storage format.
constexpr cudaDataType cuda_data_type(StorageFormat format) {
  switch (format) {
    case StorageFormat::bf16: return CUDA_R_16BF;
    case StorageFormat::fp16: return CUDA_R_16F;
    case StorageFormat::fp8_e4m3: return CUDA_R_8F_E4M3;
    case StorageFormat::fp8_e5m2: return CUDA_R_8F_E5M2;
    case StorageFormat::int4_g128: return CUDA_R_4U;
  }
  return CUDA_R_16BF;
}

struct BlasApi {
  cublasHandle_t handle = nullptr;
  CublasGemmEx gemm_ex = nullptr;
  CublasGemmStridedBatchedEx gemm_strided_batched_ex = nullptr;
  CublasSetStream set_stream = nullptr;
  // Null where the loaded cuBLAS predates it (before 12.5): the grouped GEMM cases that need it
  // are then not supported.
  CublasGemmGroupedBatchedEx gemm_grouped_batched_ex = nullptr;
};

// The cached cuBLASLt descriptors of the FP8 GEMM, one plan per shape (kernels/gemm.hpp).
class BlasLtPlans;

// cuBLASLt as the FP8 GEMM calls it: a handle, the entry points (plain C functions, bound by name),
// the workspace every matmul may use, and the plans built so far. The caller that loads the
// library (the benchmark harness) owns the handle and the workspace and makes the plans with
// make_blaslt_plans (gemm.hpp).
struct BlasLtApi {
  cublasLtHandle_t handle = nullptr;
  decltype(&cublasLtMatmulDescCreate) matmul_desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) matmul_desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) matmul_desc_set_attribute = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) matrix_layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) matrix_layout_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set_attribute = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) algo_get_heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  std::shared_ptr<BlasLtPlans> plans;
};

}  // namespace roofline::kernels
