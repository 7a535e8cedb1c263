#pragma once

// BabelStream-style kernels on fp32 arrays: copy, scale, add, triad and dot, with 4-, 8- or
// 16-byte accesses. Plain C++ launchers; the kernels live in stream.cu.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace roofline::kernels {

enum class StreamOp : std::uint8_t { copy, scale, add, triad, dot };
// tile: one tile per block, as many blocks as tiles. persistent: a resident grid looping over
// tiles. persistent_streaming: the same with evict-first cache hints (ld/st.global.cs), so that
// data used once does not push other lines out of L2.
enum class StreamSchedule : std::uint8_t { tile, persistent, persistent_streaming };

struct StreamArgs {
  StreamOp op = StreamOp::copy;
  StreamSchedule schedule = StreamSchedule::tile;
  int vector_bytes = 16;  // 4, 8 or 16; arrays must be aligned to it and `elements` a multiple of it / 4
  const float* x = nullptr;
  const float* y = nullptr;  // add, triad, dot
  float* out = nullptr;      // copy, scale, add, triad: out = x | s*x | x+y | x+s*y
  float scalar = 0;
  std::int64_t elements = 0;
  int blocks = 0;  // persistent schedule (and dot): the grid; see stream_persistent_blocks()
  // dot: one partial per block, an arrival counter (zero before the first launch; the kernel
  // leaves it zero) and the result (a double accumulated from exact fp32 products).
  double* partials = nullptr;
  unsigned* counter = nullptr;
  double* result = nullptr;
};

// The persistent grid: every block resident at once (SMs x resident blocks per SM).
[[nodiscard]] int stream_persistent_blocks(StreamOp op, StreamSchedule schedule, int vector_bytes, int sms);

// Queues one launch; cudaErrorInvalidValue for a bad argument, else the launch's error.
[[nodiscard]] cudaError_t launch_stream(const StreamArgs& args, cudaStream_t stream);

}  // namespace roofline::kernels
