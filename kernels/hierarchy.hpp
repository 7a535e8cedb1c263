#pragma once

// The cache-level ceilings: bandwidth of reads served by L2 and by shared memory. Plain C++
// launchers; the kernels live in hierarchy.cu.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace roofline::kernels {

// `blocks` slices of `slice_bytes` (a multiple of 4096) form a buffer that fits in L2. Each
// pass, block b reads slice (b + pass) mod blocks with 16-byte L1-bypassing loads, so no SM
// re-reads its own slice from L1; the sum of all words read (wrapping 32-bit add) goes to
// *result, which equals passes x (sum of the buffer).
struct L2ReadArgs {
  const void* data = nullptr;
  std::int64_t slice_bytes = 0;
  int blocks = 0;
  int passes = 0;
  std::uint32_t* partials = nullptr;  // one per block
  unsigned* counter = nullptr;        // zero before the first launch; left zero
  std::uint32_t* result = nullptr;
};

// Each block copies its 32 KiB slice of `data` into shared memory, then its threads read it
// `rounds` times over (16 bytes per thread per round, conflict-free) and store the sum of the
// words read in block_sums[block] = rounds / 8 x (sum of the slice). rounds: a multiple of 8.
struct SharedReadArgs {
  const void* data = nullptr;
  int blocks = 0;
  int rounds = 0;
  std::uint32_t* block_sums = nullptr;
};

inline constexpr int hierarchy_threads = 256;
inline constexpr std::int64_t shared_read_block_bytes = 32 * 1024;

[[nodiscard]] cudaError_t launch_l2_read(const L2ReadArgs& args, cudaStream_t stream);
[[nodiscard]] cudaError_t launch_shared_read(const SharedReadArgs& args, cudaStream_t stream);

}  // namespace roofline::kernels
