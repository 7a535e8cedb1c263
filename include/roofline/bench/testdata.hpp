#pragma once

// Deterministic random test data for the microbenchmarks: the value at (seed, index) is a pure
// function, so the host fills input buffers and recomputes any element it needs for a
// reference. Values are never zero where a zero could hide an unwritten output (fp32 data lies
// in [1, 2)), and the 16-bit levels are exact in bf16, fp16, fp32 and double, so a product of
// two of them is exact in float and a reference sum of them is exact in double.
//
// Plain C++ that nvcc also compiles (the header is shared with kernels/).

#include <bit>
#include <cstdint>

#include "roofline/core/host_device.hpp"

namespace roofline::testdata {

// The SplitMix64 finalizer (Steele, Lea and Flood): a bijective 64-bit mix.
ROOFLINE_HOST_DEVICE constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// 32 random bits for element `index` of the stream `seed`.
ROOFLINE_HOST_DEVICE constexpr std::uint32_t bits32(std::uint64_t seed, std::uint64_t index) {
  return static_cast<std::uint32_t>(mix64(mix64(seed + 0x9E3779B97F4A7C15ULL) ^ index) >> 32);
}

// The bit pattern of an fp32 value in [1, 2): exponent 0 and 23 random mantissa bits.
ROOFLINE_HOST_DEVICE constexpr std::uint32_t unit_f32_bits(std::uint64_t seed, std::uint64_t index) {
  return 0x3F800000U | (bits32(seed, index) >> 9);
}

// A signed level in [-128, 127]; level / 256 is the value (exact in every float format used).
ROOFLINE_HOST_DEVICE constexpr int level(std::uint64_t seed, std::uint64_t index) {
  return static_cast<int>(bits32(seed, index) & 0xFFU) - 128;
}
inline constexpr double level_scale = 1.0 / 256.0;

// A bijection of [0, 2^bits) onto itself (2 <= bits <= 40): xor with a key, then rounds of
// odd multiplication and xor-shift, each invertible modulo 2^bits. Distinct inputs give
// distinct outputs, so a scatter through it never writes one element twice.
ROOFLINE_HOST_DEVICE constexpr std::uint64_t permute(std::uint64_t x, int bits, std::uint64_t seed) {
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  const int shift = bits / 2 + 1;
  x = (x ^ mix64(seed)) & mask;
  for (int round = 0; round < 3; ++round) {
    x = (x * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(round)) & mask;  // odd multiplier
    x ^= x >> shift;
  }
  return x;
}

// fp32 <-> 16-bit formats on the host, bit-exact (used to read results back).
constexpr float bf16_bits_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

constexpr float fp16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000U) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1FU;
  std::uint32_t mantissa = bits & 0x3FFU;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000U | (mantissa << 13));  // inf, NaN
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);  // signed zero
  // Subnormal: shift the mantissa up until its leading one becomes the implicit bit.
  std::uint32_t e = 113;
  while ((mantissa & 0x400U) == 0) {
    mantissa <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (e << 23) | ((mantissa & 0x3FFU) << 13));
}

// The bf16 and fp16 bit patterns of level / 256 (exact in both formats).
constexpr std::uint16_t level_bf16_bits(int lvl) {
  return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(lvl) / 256.0F) >> 16);
}
constexpr std::uint16_t level_fp16_bits(int lvl) {
  if (lvl == 0) return 0;
  const std::uint32_t f = std::bit_cast<std::uint32_t>(static_cast<float>(lvl) / 256.0F);
  const std::uint32_t sign = (f >> 16) & 0x8000U;
  const std::uint32_t exponent = ((f >> 23) & 0xFFU) - 127 + 15;  // |value| >= 2^-8: a normal half
  return static_cast<std::uint16_t>(sign | (exponent << 10) | ((f >> 13) & 0x3FFU));
}

}  // namespace roofline::testdata
