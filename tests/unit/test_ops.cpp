// The operation cost model against hand-derived numbers (derivations in the comments; the
// formulas are derived in docs/formulas.md).
#include "catch.hpp"
#include "roofline/core/error.hpp"
#include "roofline/model/ops.hpp"

using namespace roofline;
using Catch::Matchers::Contains;

TEST_CASE("gemm 4096^3 bf16: the book's 137.4 GFLOP, 100.7 MB, AI 1365") {
  const OpCost c = gemm_cost({4096, 4096, 4096, 1, DType::bf16, DType::bf16, DType::bf16});
  // 2 x 4096^3 = 137,438,953,472 FLOPs.
  CHECK(c.flops == 137438953472.0);
  // A and B: 2 x 4096^2 x 2 B = 67,108,864 read; C: 4096^2 x 2 B = 33,554,432 written.
  CHECK(c.bytes_read == 67108864.0);
  CHECK(c.bytes_written == 33554432.0);
  CHECK(c.bytes() == 100663296.0);
  // 137,438,953,472 / 100,663,296 = 1365.33 FLOP/B.
  CHECK(c.intensity() == Approx(1365.3333).epsilon(1e-6));
}

TEST_CASE("gemm batch multiplies everything and each data type class counts its own bytes") {
  GemmShape s{64, 128, 256, 3, DType::bf16, DType::bf16, DType::bf16};
  const OpCost bf16 = gemm_cost(s);
  // 2 x 64 x 128 x 256 x 3 = 12,582,912 FLOPs; read 3 x (64x256 + 256x128) x 2 = 294,912; write 3 x 64x128 x 2.
  CHECK(bf16.flops == 12582912.0);
  CHECK(bf16.bytes_read == 294912.0);
  CHECK(bf16.bytes_written == 49152.0);

  s.batch = 1;
  s.a = s.b = s.c = DType::fp32;  // 4 B
  CHECK(gemm_cost(s).bytes_read == 4.0 * (64 * 256 + 256 * 128));
  s.a = s.b = s.c = DType::tf32;  // stored as fp32
  CHECK(gemm_cost(s).bytes_read == 4.0 * (64 * 256 + 256 * 128));
  s.a = s.b = s.c = DType::fp64;
  CHECK(gemm_cost(s).bytes_written == 8.0 * 64 * 128);
  s.a = s.b = s.c = DType::fp8_e4m3;
  CHECK(gemm_cost(s).bytes_read == 1.0 * (64 * 256 + 256 * 128));
  s.a = s.b = s.c = DType::int8;
  CHECK(gemm_cost(s).bytes_written == 1.0 * 64 * 128);
}

TEST_CASE("gemm with mixed types: int4 and block-scaled weights, bf16 activations") {
  // W4A16 decode-sized GEMM: m = 16 tokens, k = n = 4096.
  GemmShape s{16, 4096, 4096, 1, DType::bf16, DType::int4, DType::bf16};
  const OpCost int4 = gemm_cost(s);
  // A: 16 x 4096 x 2 = 131,072; B: 4096^2 x 0.5 = 8,388,608; C: 16 x 4096 x 2 = 131,072.
  CHECK(int4.bytes_read == 131072.0 + 8388608.0);
  CHECK(int4.bytes_written == 131072.0);
  // 2 x 16 x 4096^2 = 536,870,912 FLOPs over 8,650,752 B = 62.06 FLOP/B.
  CHECK(int4.intensity() == Approx(536870912.0 / 8650752.0));

  // Block scales: nvfp4 = 4 + 8/16 = 4.5 bits; mxfp4 = 4 + 8/32 = 4.25; int4_g128 = 4 + 16/128 = 4.125;
  // mxfp6 = 6 + 8/32 = 6.25; mxfp8 = 8 + 8/32 = 8.25 bits per element (4096^2 = 16,777,216 weights).
  const double weights = 4096.0 * 4096.0;
  const auto b_bytes = [&](DType type) {
    s.b = type;
    return gemm_cost(s).bytes_read - 131072.0;
  };
  CHECK(b_bytes(DType::nvfp4) == weights * 4.5 / 8);  // 9,437,184
  CHECK(b_bytes(DType::mxfp4) == weights * 4.25 / 8);
  CHECK(b_bytes(DType::int4_g128) == weights * 4.125 / 8);
  CHECK(b_bytes(DType::mxfp6) == weights * 6.25 / 8);
  CHECK(b_bytes(DType::mxfp8) == weights * 8.25 / 8);
  CHECK(b_bytes(DType::fp4) == weights * 4.0 / 8);
}

TEST_CASE("tiled gemm re-reads A per column of tiles and B per row of tiles while naive loads every operand") {
  const GemmShape s{4096, 4096, 4096, 1, DType::bf16, DType::bf16, DType::bf16};
  // Naive: 2 x 4096^3 = 137.4e9 loads (the book's "137 billion HBM reads") of 2 B each.
  const OpCost naive = gemm_naive_cost(s);
  CHECK(naive.bytes_read == 2.0 * 4096 * 4096 * 4096 * 2);
  CHECK(naive.flops == 137438953472.0);
  // Tiles 128 x 128: A (4096^2 x 2 B) read 4096/128 = 32 times, B likewise: 2 x 32 x 33,554,432.
  const OpCost tiled = gemm_tiled_cost(s, {128, 128});
  CHECK(tiled.bytes_read == 2147483648.0);
  CHECK(tiled.bytes_written == 33554432.0);
  // 128x fewer loads than naive, i.e. 128 FLOPs per element loaded; per byte of bf16 that is 64,
  // and 63.0 with C's write: the book's "AI rises to 128 FLOP/byte" counts elements.
  CHECK(naive.bytes_read / tiled.bytes_read == 128.0);
  CHECK(tiled.intensity() == Approx(137438953472.0 / 2181038080.0));
  CHECK(tiled.intensity() == Approx(63.015).epsilon(1e-4));
  // Tiles that do not divide: ceil(1000 / 128) = 8 re-reads each.
  const OpCost ragged = gemm_tiled_cost({1000, 1000, 64, 1, DType::bf16, DType::bf16, DType::bf16}, {128, 128});
  CHECK(ragged.bytes_read == 2.0 * (1000 * 64 * 2 * 8));
  // A whole-matrix tile reads each operand once: the minimum.
  CHECK(gemm_tiled_cost(s, {4096, 4096}).bytes_read == gemm_cost(s).bytes_read);
}

TEST_CASE("gemv 8192^2 batch 1 bf16: AI 1 (the book), not the blog's 1.5") {
  const OpCost c = gemv_cost({8192, 8192, 1, DType::bf16, DType::bf16, std::nullopt});
  // 2 x 8192^2 = 134,217,728 FLOPs; W 134,217,728 B + x 16,384 B read; y 16,384 B written.
  CHECK(c.flops == 134217728.0);
  CHECK(c.bytes_read == 134217728.0 + 16384.0);
  CHECK(c.bytes_written == 16384.0);
  CHECK(c.intensity() == Approx(0.999756).epsilon(1e-5));
  // Batch 32: 32x the FLOPs, W still read once: 4,294,967,296 / (134,217,728 + 2 x 524,288) = 31.75.
  const OpCost b32 = gemv_cost({8192, 8192, 32, DType::bf16, DType::bf16, std::nullopt});
  CHECK(b32.intensity() == Approx(4294967296.0 / 135266304.0));
  // int4 weights: W is 33,554,432 B, AI 4x higher: 134,217,728 / 33,587,200 = 3.996.
  CHECK(gemv_cost({8192, 8192, 1, DType::int4, DType::bf16, std::nullopt}).intensity() ==
        Approx(3.99610).epsilon(1e-5));
  // W8A8: e4m3 W and x, bf16 y (GemvShape::output). By hand at 8192^2 batch 16: W 8192^2 x 1 B =
  // 67108864 B, x 16 x 8192 x 1 B = 131072 B read; y 16 x 8192 x 2 B = 262144 B written.
  const OpCost w8a8 = gemv_cost({8192, 8192, 16, DType::fp8_e4m3, DType::fp8_e4m3, DType::bf16});
  CHECK(w8a8.bytes_read == 67108864.0 + 131072.0);
  CHECK(w8a8.bytes_written == 262144.0);
  CHECK(w8a8.flops == 2.0 * 8192 * 8192 * 16);
  // Unset, y is in x's format: e4m3 y would be 131072 B.
  CHECK(gemv_cost({8192, 8192, 16, DType::fp8_e4m3, DType::fp8_e4m3, std::nullopt}).bytes_written == 131072.0);
}

TEST_CASE("elementwise: named functions and explicit counts") {
  // add over 1e6 bf16 elements: 1 FLOP, 2 inputs (4e6 B), 1 output (2e6 B): AI 1/6.
  const ElementwiseFnInfo& add = info(ElementwiseFn::add);
  const OpCost a = elementwise_cost({1000000, add.inputs, add.outputs, add.flops_per_element, DType::bf16});
  CHECK(a.flops == 1e6);
  CHECK(a.bytes_read == 4e6);
  CHECK(a.bytes_written == 2e6);
  // GELU (tanh form) in fp32: 9 FLOPs per element over 8 B: AI 1.125.
  CHECK(info(ElementwiseFn::gelu).flops_per_element == 9);
  CHECK(elementwise_cost({1000000, 1, 1, 9, DType::fp32}).intensity() == Approx(1.125));
  CHECK(info(ElementwiseFn::silu).flops_per_element == 4);
  CHECK(info(ElementwiseFn::swiglu).inputs == 2);
  // A fill reads nothing; an fp8 element is 1 B.
  const OpCost fill = elementwise_cost({1000, 0, 1, 0, DType::fp8_e4m3});
  CHECK(fill.bytes_read == 0);
  CHECK(fill.bytes_written == 1000);
  CHECK(parse_elementwise_fn("GELU") == ElementwiseFn::gelu);
  CHECK_THROWS_WITH(parse_elementwise_fn("gleu"), Contains("unknown function"));
}

TEST_CASE("norm: RMSNorm and LayerNorm FLOPs and bytes, with and without the fused residual") {
  // RMSNorm 4096 x 8192 bf16: rows (4 hidden + 3) = 4096 x 32,771 = 134,230,016 FLOPs;
  // x read 67,108,864 B + gamma 16,384 B; y written 67,108,864 B.
  const OpCost rms = norm_cost({4096, 8192, NormKind::rmsnorm, false, DType::bf16});
  CHECK(rms.flops == 134230016.0);
  CHECK(rms.bytes_read == 67108864.0 + 16384.0);
  CHECK(rms.bytes_written == 67108864.0);
  // About 1 FLOP/B in bf16 (4 FLOPs per 4 B moved), not the book's 1.25.
  CHECK(rms.intensity() == Approx(1.0).epsilon(1e-3));
  // LayerNorm: 4096 x (7 x 8192 + 4) = 234,897,408 FLOPs; gamma and beta 32,768 B.
  const OpCost ln = norm_cost({4096, 8192, NormKind::layernorm, false, DType::bf16});
  CHECK(ln.flops == 234897408.0);
  CHECK(ln.bytes_read == 67108864.0 + 32768.0);
  // Residual: one more add per element, residual read and the sum written: 4096 x (5 x 8192 + 3).
  const OpCost res = norm_cost({4096, 8192, NormKind::rmsnorm, true, DType::bf16});
  CHECK(res.flops == 167784448.0);
  CHECK(res.bytes_read == 2 * 67108864.0 + 16384.0);
  CHECK(res.bytes_written == 2 * 67108864.0);
  CHECK(parse_norm_kind("LayerNorm") == NormKind::layernorm);
  CHECK_THROWS_AS(parse_norm_kind("batchnorm"), InputError);
}

TEST_CASE("softmax: 5 FLOPs per element, each row read and written once") {
  // 4096 x 4096 bf16: 4096 x (5 x 4096 + 1) = 83,890,176 FLOPs; 33,554,432 B each way.
  const OpCost c = softmax_cost({4096, 4096, DType::bf16});
  CHECK(c.flops == 83890176.0);
  CHECK(c.bytes_read == 33554432.0);
  CHECK(c.bytes_written == 33554432.0);
  // 1.25 FLOP/B; the book's "AI ~ 5" is FLOPs per element, not per byte.
  CHECK(c.intensity() == Approx(1.25).epsilon(1e-4));
}

TEST_CASE("roofline_time: the larger of compute and memory time, classified like attainable()") {
  const OpCost gemm = gemm_cost({4096, 4096, 4096, 1, DType::bf16, DType::bf16, DType::bf16});
  // H100: 137.44e9 / 989.4e12 = 138.911 us compute; 100.66e6 / 3.35e12 = 30.049 us memory.
  const OpTime t = roofline_time(gemm, 989.4e12, 3.35e12);
  CHECK(t.compute_s == Approx(138.911e-6).epsilon(1e-5));
  CHECK(t.memory_s == Approx(30.049e-6).epsilon(1e-4));
  CHECK(t.time_s == t.compute_s);
  CHECK(t.bound == Bound::compute);
  CHECK(t.attainable_flops == Approx(989.4e12));
  CHECK(t.bound == attainable(989.4e12, 3.35e12, gemm.intensity()).bound);
  // GEMV: memory-bound, 134,250,496 / 3.35e12 = 40.075 us; attainable 3.35 x 0.99976 TFLOP/s.
  const OpCost gemv = gemv_cost({8192, 8192, 1, DType::bf16, DType::bf16, std::nullopt});
  const OpTime m = roofline_time(gemv, 989.4e12, 3.35e12);
  CHECK(m.bound == Bound::memory);
  CHECK(m.time_s == Approx(40.0748e-6).epsilon(1e-5));
  CHECK(m.attainable_flops == Approx(attainable(989.4e12, 3.35e12, gemv.intensity()).flops));
  // Efficiency stretches each part: memory 40.075 / 0.9 = 44.528 us.
  CHECK(expected_time_s(m, {0.8, 0.9}) == Approx(44.528e-6).epsilon(1e-4));
  CHECK(expected_time_s(t, {0.5, 1.0}) == Approx(2 * 138.911e-6).epsilon(1e-5));
  // Vector math: fp32 for every narrower type, fp64 for fp64.
  CHECK(vector_peak_class(DType::bf16) == PeakClass::fp32);
  CHECK(vector_peak_class(DType::fp64) == PeakClass::fp64);
}

TEST_CASE("parse_efficiency takes compute= and memory= fractions") {
  const Efficiency e = parse_efficiency("compute=0.7,memory=0.85");
  CHECK(e.compute == 0.7);
  CHECK(e.memory == 0.85);
  CHECK(parse_efficiency("memory=0.5").compute == 1.0);
  for (const char* bad : {"", "compute", "compute=0", "memory=1.5", "speed=0.5", "compute=x", "compute=-1"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_efficiency(bad), InputError);
  }
}

TEST_CASE("bad shapes throw InputError: sizes below 1, byte counts beyond 64 bits") {
  CHECK_THROWS_WITH(gemm_cost({0, 1, 1, 1, DType::bf16, DType::bf16, DType::bf16}), Contains("m = 0"));
  CHECK_THROWS_AS(gemm_cost({1, -5, 1, 1, DType::bf16, DType::bf16, DType::bf16}), InputError);
  CHECK_THROWS_AS(gemv_cost({1, 1, 0, DType::bf16, DType::bf16, std::nullopt}), InputError);
  CHECK_THROWS_AS(softmax_cost({1, 0, DType::bf16}), InputError);
  CHECK_THROWS_AS(norm_cost({0, 1, NormKind::rmsnorm, false, DType::bf16}), InputError);
  CHECK_THROWS_AS(elementwise_cost({10, 0, 0, 1, DType::bf16}), InputError);
  CHECK_THROWS_AS(elementwise_cost({10, 1, 1, -1, DType::bf16}), InputError);
  CHECK_THROWS_AS(gemm_tiled_cost({8, 8, 8, 1, DType::bf16, DType::bf16, DType::bf16}, {0, 8}), InputError);
  // 2^32 x 2^32 bf16 outputs alone are 2^65 B.
  CHECK_THROWS_WITH(
      gemm_cost({std::int64_t{1} << 32, std::int64_t{1} << 32, 2, 1, DType::bf16, DType::bf16, DType::bf16}),
      Contains("does not fit in 64 bits"));
  // 2^60 fp16 elements read and written move 2^62 B: fine; 2^61 move 2^63 B: one byte past the limit.
  CHECK_NOTHROW(elementwise_cost({std::int64_t{1} << 60, 1, 1, 1, DType::fp16}));
  CHECK_THROWS_AS(elementwise_cost({std::int64_t{1} << 61, 1, 1, 1, DType::fp16}), InputError);
}
