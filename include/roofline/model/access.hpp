#pragma once

// How many bytes the memory system moves to serve an access pattern. NVIDIA GPUs move global
// memory in 32-byte sectors (four to a 128-byte cache line): a warp that asks for 4 bytes out of
// each of 32 different sectors makes the hardware move 32 x 32 = 1024 bytes for 128 useful ones.
// The access benchmarks report both figures; this model says how many sectors each pattern
// touches, so that a measured time turns into "useful" and "moved" bandwidth by one formula.
//
// The model counts distinct sectors requested from L2 (and from HBM when nothing is reused):
// elements are aligned to their size, the first element starts a sector, and sectors are not
// shared between separate launches.

#include <cstdint>

namespace roofline {

inline constexpr std::int64_t sector_bytes = 32;
inline constexpr std::int64_t cache_line_bytes = 128;
inline constexpr std::int64_t warp_size = 32;

struct SectorTraffic {
  double useful_bytes = 0;  // bytes the program reads or writes
  double sectors = 0;       // 32-byte sectors moved to serve them

  [[nodiscard]] double moved_bytes() const { return sectors * static_cast<double>(sector_bytes); }
  // Useful over moved bytes: 1 for a coalesced stream of 4-byte elements, 1/8 for one 4-byte
  // element per sector.
  [[nodiscard]] double efficiency() const { return moved_bytes() == 0 ? 0.0 : useful_bytes / moved_bytes(); }

  SectorTraffic& operator+=(const SectorTraffic& other) {
    useful_bytes += other.useful_bytes;
    sectors += other.sectors;
    return *this;
  }
};

// `accesses` elements of `element_bytes` at element indices 0, stride, 2 x stride, ...
// element_bytes must be a power of two up to 32, or a multiple of 32 (whole sectors); stride >= 1.
// Throws std::invalid_argument otherwise.
[[nodiscard]] SectorTraffic strided_traffic(std::int64_t accesses, std::int64_t stride_elements,
                                            std::int64_t element_bytes);

// A coalesced stream: the same as stride 1.
[[nodiscard]] SectorTraffic contiguous_traffic(std::int64_t elements, std::int64_t element_bytes);

// Independent accesses at random positions of a table much larger than the L2 cache: each one
// touches its own sector(s), none is served by a neighbour's. Same element sizes as above.
[[nodiscard]] SectorTraffic random_traffic(std::int64_t accesses, std::int64_t element_bytes);

// Sectors one warp instruction touches when its 32 lanes access consecutive strided elements:
// what Nsight Compute reports as sectors per request.
[[nodiscard]] double sectors_per_warp_request(std::int64_t stride_elements, std::int64_t element_bytes);

}  // namespace roofline
