#pragma once

// Types shared by the launchers of the compute kernels (GEMM, attention, compute-ceiling probes).
// Plain C++: a host file can call the launchers without any CUDA header.

#include <stdexcept>

#include "storage_format.hpp"

struct CUstream_st;

namespace roofline::kernels {

// A cudaStream_t; nullptr is the legacy default stream.
using Stream = CUstream_st*;

// A CUDA or cuBLAS call failed, or a kernel was launched with a shape it does not support.
// The message names the call, the file and line, and the CUDA error string.
class KernelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace roofline::kernels
