#pragma once

// Device-side inputs and checks of the collectives suite: every rank's input is a rank- and
// index-dependent pattern of small integers (-8..8), exact in fp32 and in any sum over up to
// 2^20 ranks, so that the output of a collective is checked exactly. Plain C++ declarations; the
// kernels are in collectives.cu.

#include <cstdint>

#include "compute_types.hpp"

#ifdef __CUDACC__
#define ROOFLINE_COLLECTIVE_HD __host__ __device__
#else
#define ROOFLINE_COLLECTIVE_HD
#endif

namespace roofline::kernels {

// The input value of element `index` on `rank`, as the device computes it (also for the host).
[[nodiscard]] ROOFLINE_COLLECTIVE_HD constexpr float collective_pattern(int rank, std::int64_t index) {
  const std::uint64_t h =
      (static_cast<std::uint64_t>(index) + 7919ULL * static_cast<std::uint64_t>(rank) + 1ULL) * 0x9E3779B97F4A7C15ULL;
  return static_cast<float>(static_cast<int>((h >> 40) % 17ULL) - 8);
}

enum class CollectiveKind : std::uint8_t { all_reduce, all_gather, reduce_scatter };

// data[j] = collective_pattern(rank, j) for j < count.
void fill_collective_input(float* data, std::int64_t count, int rank, Stream stream);

// Counts the output elements that differ from what `kind` must produce on `rank` of `ranks`
// (`chunk`: elements each rank contributes or keeps; the output has `count` elements):
//   all_reduce     out[j] = sum over r of pattern(r, j)
//   all_gather     out[j] = pattern(j / chunk, j % chunk)
//   reduce_scatter out[j] = sum over r of pattern(r, rank x chunk + j)
// `counters` (device, 2 x uint64) receives the count of mismatches and the smallest wrong index
// (UINT64_MAX when none); the call resets them first. Asynchronous on `stream`.
void check_collective_output(const float* out, std::int64_t count, CollectiveKind kind, int rank, int ranks,
                             std::int64_t chunk, unsigned long long* counters, Stream stream);

}  // namespace roofline::kernels
