#pragma once

// FLOPs and bytes of the operations of LLM inference: the one formula that the model, the
// reports and the microbenchmarks all use (a benchmark turns its time into FLOP/s and B/s by
// calling the same function). Byte counts are HBM traffic: bytes read + bytes written.
//
// Contract draft (foundation): the names and fields below are relied on by the benchmarks and
// the LLM model; the operation-model work may extend them but not rename them.

#include <cstdint>

#include "roofline/dtype.hpp"

namespace roofline {

struct OpCost {
  double flops = 0;
  double bytes_read = 0;
  double bytes_written = 0;

  [[nodiscard]] double bytes() const { return bytes_read + bytes_written; }
  [[nodiscard]] double intensity() const { return flops / bytes(); }
};

// C[m x n] = A[m x k] . B[k x n], `batch` independent products. Minimum traffic: each operand
// read once, C written once.
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  DType a = DType::bf16;
  DType b = DType::bf16;
  DType c = DType::bf16;
};
[[nodiscard]] OpCost gemm_cost(const GemmShape& shape);

// y[batch x m] = W[m x k] . x[batch x k]: the weight matrix is read once for all vectors.
struct GemvShape {
  std::int64_t m = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  DType weight = DType::bf16;
  DType activation = DType::bf16;
};
[[nodiscard]] OpCost gemv_cost(const GemvShape& shape);

// `inputs` arrays read and `outputs` arrays written, `elements` each.
struct ElementwiseShape {
  std::int64_t elements = 0;
  int inputs = 1;
  int outputs = 1;
  double flops_per_element = 0;
  DType dtype = DType::bf16;
};
[[nodiscard]] OpCost elementwise_cost(const ElementwiseShape& shape);

}  // namespace roofline
