#pragma once

// Host-side error checks for the launchers: every CUDA runtime call and every launch is checked,
// and a failure throws KernelError naming the call and where it was made.

#include <cuda_runtime.h>

#include <string>

#include "compute_types.hpp"

namespace roofline::kernels::detail {

inline void check_cuda(cudaError_t status, const char* what, const char* file, int line) {
  if (status != cudaSuccess) {
    throw KernelError(std::string(what) + " failed at " + file + ":" + std::to_string(line) + ": " +
                      cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
  }
}

inline void require(bool condition, const std::string& message) {
  if (!condition) throw KernelError(message);
}

}  // namespace roofline::kernels::detail

#define ROOFLINE_CUDA_CHECK(expr) ::roofline::kernels::detail::check_cuda((expr), #expr, __FILE__, __LINE__)
// After a <<<...>>> launch: a bad configuration shows up here, a fault in the kernel at the next sync.
#define ROOFLINE_CHECK_LAUNCH(name) \
  ::roofline::kernels::detail::check_cuda(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)

namespace roofline::kernels::detail {

// The multiprocessors of the current device: what a persistent kernel sizes its grid by.
inline int current_device_sms() {
  int device = 0;
  int sms = 0;
  ROOFLINE_CUDA_CHECK(cudaGetDevice(&device));
  ROOFLINE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

// Whether this build has the sm_90a (Hopper) kernels and `device` can run them: what every
// wgmma/TMA kernel's "supported" query asks.
inline bool sm90a_runs_on(int device) {
#if defined(ROOFLINE_HAVE_SM90A)
  cudaDeviceProp prop{};
  ROOFLINE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return prop.major == 9 && prop.minor == 0;
#else
  (void)device;
  return false;
#endif
}

}  // namespace roofline::kernels::detail
