#pragma once

#include <cstdint>
#include <string_view>

namespace roofline {

// Which roof limits an operation: bytes moved (memory) or arithmetic (compute).
enum class Bound : std::uint8_t { memory, compute };

[[nodiscard]] constexpr std::string_view name_of(Bound bound) {
  return bound == Bound::memory ? "memory" : "compute";
}

// The arithmetic intensity (FLOP per byte) at which memory time equals compute time.
[[nodiscard]] constexpr double ridge_point(double peak_flops, double bandwidth_bytes_per_s) {
  return peak_flops / bandwidth_bytes_per_s;
}

struct Attainable {
  double flops = 0;             // FLOP/s the roofline allows at this intensity
  Bound bound = Bound::memory;  // memory below the ridge, compute at or above it
  double fraction_of_peak = 0;  // flops / peak
};

// The roofline: attainable = min(peak, intensity x bandwidth).
[[nodiscard]] constexpr Attainable attainable(double peak_flops, double bandwidth_bytes_per_s, double intensity) {
  const double memory_roof = intensity * bandwidth_bytes_per_s;
  if (memory_roof < peak_flops) return {memory_roof, Bound::memory, memory_roof / peak_flops};
  return {peak_flops, Bound::compute, 1.0};
}

}  // namespace roofline
