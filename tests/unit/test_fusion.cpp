// Fusion chains: parsing, and unfused vs fused traffic against hand-derived numbers.
#include "catch.hpp"
#include "roofline/core/error.hpp"
#include "roofline/model/fusion.hpp"

using namespace roofline;
using Catch::Matchers::Contains;

TEST_CASE("parse_chain: elements, linear widths, and the errors") {
  const Chain chain = parse_chain("Linear:14336, silu ,linear");
  REQUIRE(chain.size == 3);
  CHECK(chain.elements[0].op == ChainOp::linear);
  CHECK(chain.elements[0].width == 14336);
  CHECK(chain.elements[1].op == ChainOp::silu);
  CHECK(chain.elements[2].width == 0);
  CHECK(to_string(chain) == "linear:14336,silu,linear");
  CHECK_THROWS_WITH(parse_chain(""), Contains("empty"));
  CHECK_THROWS_WITH(parse_chain("linear,,gelu"), Contains("element 2 is empty"));
  CHECK_THROWS_WITH(parse_chain("linear,gleu"), Contains("unknown element 'gleu'"));
  CHECK_THROWS_WITH(parse_chain("lineer"), Contains("did you mean 'linear'"));
  CHECK_THROWS_WITH(parse_chain("gelu:4"), Contains("only linear takes a width"));
  CHECK_THROWS_AS(parse_chain("linear:0"), InputError);
  CHECK_THROWS_AS(parse_chain("linear:x"), InputError);
  CHECK_THROWS_WITH(parse_chain("relu,relu,relu,relu,relu,relu,relu,relu,relu,relu,relu,relu,relu,relu,relu,relu,relu"),
                    Contains("at most 16"));
}

TEST_CASE("linear, gelu, layernorm at 4096 x 4096 bf16: the book's fusion example, counted in full") {
  // X = one activation tensor = 4096 x 4096 x 2 B = 33,554,432 B; W = 4096 x 4096 x 2 B (same size);
  // LayerNorm's gamma and beta: 2 x 4096 x 2 = 16,384 B.
  const double x = 33554432.0;
  const FuseCost c = fuse_cost(parse_chain("linear,gelu,layernorm"), {4096, 4096, DType::bf16, DType::bf16});
  REQUIRE(c.size == 3);
  // Unfused: linear reads x and W, writes z (3X); gelu reads z, writes g (2X); layernorm reads g and
  // the parameters, writes y (2X + 16,384): 7X + 16,384 = 234,897,408 B. The book counts the linear as
  // 1X and leaves out W (80 "GB" for 5 tensors).
  CHECK(c.unfused.bytes() == 7 * x + 16384);
  // Fused: x, W and the parameters read, y written: 3X + 16,384 = 100,679,680 B.
  CHECK(c.fused.bytes_read == 2 * x + 16384);
  CHECK(c.fused.bytes_written == x);
  // The two intermediates (z, g) stay on chip; each would be written and read back: 2 x 2X saved.
  CHECK(c.on_chip_bytes == 2 * x);
  CHECK(c.unfused.bytes() - c.fused.bytes() == 2 * c.on_chip_bytes);
  // Without the weights the ratio is 6X / 2X = 3 (the book: 2.5).
  CHECK((c.unfused.bytes() - x - 16384) / (c.fused.bytes() - x - 16384) == 3.0);
  // FLOPs: the GEMM (2 x 4096^3) on the tensor cores, GELU (9 per element) and LayerNorm
  // (4096 x (7 x 4096 + 4)) on the vector units.
  CHECK(c.matrix_flops == 137438953472.0);
  CHECK(c.vector_flops == 9.0 * 4096 * 4096 + 4096.0 * (7 * 4096 + 4));
  CHECK(c.fused.flops == c.unfused.flops);
  CHECK(c.steps[0].matrix);
  CHECK_FALSE(c.steps[1].matrix);
}

TEST_CASE("chain widths: linear:N, swiglu halving, residual add reading a second tensor") {
  // A LLaMA-3 8B MLP for one token: 4096 -> 28672 (gate and up) -> swiglu 14336 -> 4096.
  const FuseCost mlp = fuse_cost(parse_chain("linear:28672,swiglu,linear"), {1, 4096, DType::bf16, DType::int4});
  REQUIRE(mlp.size == 3);
  CHECK(mlp.steps[0].width_out == 28672);
  CHECK(mlp.steps[1].width_in == 28672);
  CHECK(mlp.steps[1].width_out == 14336);
  CHECK(mlp.steps[2].width_in == 14336);
  CHECK(mlp.steps[2].width_out == 4096);
  // int4 weights: (4096 x 28672 + 14336 x 4096) x 0.5 B = 88,080,384 B, read fused or not.
  const double weights = (4096.0 * 28672 + 14336.0 * 4096) * 0.5;
  CHECK(mlp.fused.bytes_read == 4096 * 2 + weights);
  CHECK(mlp.fused.bytes_written == 4096 * 2);
  CHECK(mlp.on_chip_bytes == (28672 + 14336) * 2.0);
  // add reads the residual (1 x 4096 x 2 B) in both forms.
  const FuseCost add = fuse_cost(parse_chain("add,rmsnorm"), {1, 4096, DType::bf16, DType::bf16});
  CHECK(add.fused.bytes_read == 8192.0 + 8192.0 + 8192.0);  // x, residual, gamma
  CHECK(add.unfused.bytes_read == 8192.0 * 2 + 8192.0 + 8192.0);
  CHECK_THROWS_WITH(fuse_cost(parse_chain("swiglu"), {4, 4095, DType::bf16, DType::bf16}), Contains("odd"));
  CHECK_THROWS_AS(fuse_cost(parse_chain("gelu"), {0, 4096, DType::bf16, DType::bf16}), InputError);
  CHECK_THROWS_WITH(
      fuse_cost(parse_chain("gelu"), {std::int64_t{1} << 40, std::int64_t{1} << 40, DType::bf16, DType::bf16}),
      Contains("64 bits"));
}
