#pragma once

// Host side of TMA: encoding tensor maps (cuTensorMapEncodeTiled) for the Hopper kernels.

#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

#include "cuda_check.cuh"
#include "storage_format.hpp"

namespace roofline::kernels::detail {

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// cuTensorMapEncodeTiled lives in the driver library; taking it through the runtime's entry-point
// query avoids linking libcuda (absent on build machines without a GPU).
inline EncodeTiledFn encode_tiled() {
  static const EncodeTiledFn function = [] {
    void* pointer = nullptr;
    cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
    ROOFLINE_CUDA_CHECK(
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &pointer, 12000, cudaEnableDefault, &query));
    require(query == cudaDriverEntryPointSuccess && pointer != nullptr,
            "cuTensorMapEncodeTiled not found in the driver (needs a CUDA 12+ driver)");
    return reinterpret_cast<EncodeTiledFn>(pointer);
  }();
  return function;
}

// The tensor-map element type of a storage format (fp8 has none of its own: its bytes are UINT8).
inline CUtensorMapDataType tensor_map_type(StorageFormat format) {
  switch (format) {
    case StorageFormat::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case StorageFormat::fp16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case StorageFormat::fp8_e4m3:
    case StorageFormat::fp8_e5m2:
    case StorageFormat::int4_g128: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

// A tensor map over a tensor of `format` elements with `rank` dims (dims[0] innermost, strides in
// bytes for dims 1..rank-1), loaded in boxes of `box` elements with the 128-byte swizzle (box[0]
// elements must span at most 128 bytes). Elements outside the tensor read as zero.
inline CUtensorMap make_tensor_map_sw128(StorageFormat format, const void* base, cuuint32_t rank,
                                         const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                         const char* what) {
  CUtensorMap map{};
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  const CUresult result =
      encode_tiled()(&map, tensor_map_type(format), rank, const_cast<void*>(base), dims, strides, box, element_strides,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  require(result == CUDA_SUCCESS, std::string(what) + ": cuTensorMapEncodeTiled failed with CUresult " +
                                      std::to_string(static_cast<int>(result)));
  return map;
}

}  // namespace roofline::kernels::detail
