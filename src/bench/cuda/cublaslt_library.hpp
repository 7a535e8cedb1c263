#pragma once

// cuBLASLt as the FP8 GEMM uses it: loaded with dlopen when a case first needs it (as cuBLAS and
// NCCL are: linking it would load a large library into every command), its entry points bound by
// name into the kernels' BlasLtApi, with a handle, a workspace and the per-shape plan cache.

#include "harness.hpp"
#include "kernels/blas_api.hpp"

namespace roofline::bench::cuda {

class CublasLtLibrary {
 public:
  // Loads the library of the toolkit the binary was built with (the loader's path first, then the
  // toolkit's directory), binds the entry points, creates a handle, and hands cuBLASLt `workspace`
  // for every matmul. Throws CudaError when any of it fails.
  explicit CublasLtLibrary(DeviceBuffer workspace);
  CublasLtLibrary(const CublasLtLibrary&) = delete;
  CublasLtLibrary& operator=(const CublasLtLibrary&) = delete;
  ~CublasLtLibrary();

  [[nodiscard]] const kernels::BlasLtApi& api() const { return api_; }
  // cublasLtGetVersion: major * 10000 + minor * 100 + patch.
  [[nodiscard]] std::size_t version() const { return version_; }

 private:
  void* library_ = nullptr;
  decltype(&cublasLtDestroy) destroy_ = nullptr;
  DeviceBuffer workspace_;
  kernels::BlasLtApi api_;
  std::size_t version_ = 0;
};

}  // namespace roofline::bench::cuda
