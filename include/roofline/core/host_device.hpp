#pragma once

// Marks a function that both the host compiler and nvcc compile, for headers shared by the host
// code and kernels/ (test data, the GEMV operand mapping).

#if defined(__CUDACC__)
#define ROOFLINE_HOST_DEVICE __host__ __device__
#else
#define ROOFLINE_HOST_DEVICE
#endif
