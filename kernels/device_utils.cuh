#pragma once

// Device helpers shared by the kernels: cache-hinted loads and the one-pass reduction that
// lets the last block of a grid combine the partial results of all blocks (no second launch,
// no memset between launches: the arrival counter resets itself).

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace roofline::kernels::device {

// 16 bytes that are read once: skip L1 (they are never re-read by this SM).
__device__ __forceinline__ uint4 load_stream_16(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// 16 read-only bytes through L1 (small operands that many warps share). Volatile: the load
// stays where it is written, so the compiler cannot hoist many of them and run out of registers.
__device__ __forceinline__ uint4 load_shared_operand_16(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// 16 bytes from L2, bypassing L1 (cache-global); volatile so that repeated passes over the
// same addresses are all issued.
__device__ __forceinline__ uint4 load_l2_16(const void* p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// 16 bytes of shared memory at a 32-bit shared-window address; volatile for the same reason.
__device__ __forceinline__ uint4 load_shared_16(std::uint32_t address) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(address));
  return v;
}

template <typename T>
__device__ __forceinline__ T warp_sum(T value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xFFFFFFFFU, value, offset);
  return value;
}

// Sum of `value` over the block, valid in thread 0. `scratch` holds one T per warp.
template <typename T>
__device__ __forceinline__ T block_sum(T value, T* scratch) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int warps = static_cast<int>((blockDim.x + 31) / 32);
  value = warp_sum(value);
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  T total = T(0);
  if (warp == 0) {
    total = lane < warps ? scratch[lane] : T(0);
    total = warp_sum(total);
  }
  __syncthreads();  // scratch may be reused by the caller
  return total;
}

// Each block stores its partial; the block that arrives last sums all partials in block order
// (a deterministic result) into *result and resets the counter for the next launch.
// `Partial` is the type stored per block, `Total` the type of the final sum.
template <typename Partial, typename Total>
__device__ __forceinline__ void finish_reduction(Partial block_value, Partial* partials, unsigned* counter,
                                                 Total* result, Total* scratch) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_value;
    __threadfence();                                             // the partial is visible before the arrival is counted
    const unsigned arrived = atomicInc(counter, gridDim.x - 1);  // wraps to 0 on the last arrival
    last = arrived == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  Total sum = Total(0);
  // Thread i sums partials i, i + blockDim, ... in order; the block sum is then deterministic.
  for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x) sum += static_cast<Total>(__ldcg(partials + i));
  sum = block_sum(sum, scratch);
  if (threadIdx.x == 0) *result = sum;
}

// Programmatic dependent launch (sm_90): let the next kernel of the stream be scheduled now, and wait
// until the previous one has finished (and its writes are visible) before touching what it wrote.
// No-ops where the architecture has no such control.
__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void grid_dependency_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Launches `kernel` as the programmatic dependent of the stream's previous kernel: it may be
// scheduled once that kernel's blocks have all called grid_dependency_launch() (or ended), and must
// call grid_dependency_wait() before it reads what that kernel wrote. Returns the launch's error.
template <typename... Params, typename... Args>
cudaError_t launch_programmatic_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem_bytes,
                                          cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem_bytes;
  config.stream = stream;
  config.attrs = attribute;
  config.numAttrs = 1;
  const cudaError_t status = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  return status != cudaSuccess ? status : cudaGetLastError();
}

}  // namespace roofline::kernels::device
