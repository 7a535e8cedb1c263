#include "catch.hpp"
#include "roofline/core/roofline.hpp"

using namespace roofline;

TEST_CASE("ridge point is peak over bandwidth") {
  // H100 SXM bf16: 989.4e12 FLOP/s / 3.35e12 B/s = 295.343 FLOP/B (the blog's 295.2 used 989e12).
  CHECK(ridge_point(989.4e12, 3.35e12) == Approx(295.3433).epsilon(1e-6));
  // H200: same peak, 4.8 TB/s: 989.4 / 4.8 = 206.125.
  CHECK(ridge_point(989.4e12, 4.8e12) == Approx(206.125));
}

TEST_CASE("attainable is min(peak, AI x bandwidth)") {
  // AI 1 on H100: 1 x 3.35e12 = 3.35 TFLOP/s, memory-bound, 3.35 / 989.4 = 0.003386 of peak.
  const Attainable low = attainable(989.4e12, 3.35e12, 1.0);
  CHECK(low.flops == Approx(3.35e12));
  CHECK(low.bound == Bound::memory);
  CHECK(low.fraction_of_peak == Approx(3.35 / 989.4));
  // AI 50 (the book's review question): 50 x 3.35 = 167.5 TFLOP/s.
  CHECK(attainable(989.4e12, 3.35e12, 50.0).flops == Approx(167.5e12));
  // AI 1365 (GEMM 4096^3): above the ridge, the full 989.4 TFLOP/s.
  const Attainable high = attainable(989.4e12, 3.35e12, 1365.0);
  CHECK(high.flops == Approx(989.4e12));
  CHECK(high.bound == Bound::compute);
  CHECK(high.fraction_of_peak == 1.0);
  // Exactly at the ridge the two roofs meet; it counts as compute-bound.
  CHECK(attainable(100.0, 1.0, 100.0).bound == Bound::compute);
}
