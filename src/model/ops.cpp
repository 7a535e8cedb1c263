// FLOPs and bytes of the operations declared in roofline/ops.hpp: one formula per operation,
// used by the model and by the microbenchmarks that time it.
#include "roofline/ops.hpp"

namespace roofline {
namespace {

double as_double(std::int64_t value) {
  return static_cast<double>(value);
}

}  // namespace

OpCost gemm_cost(const GemmShape& s) {
  const double batch = as_double(s.batch);
  const double m = as_double(s.m);
  const double n = as_double(s.n);
  const double k = as_double(s.k);
  OpCost cost;
  cost.flops = 2.0 * m * n * k * batch;  // one multiply and one add per term
  cost.bytes_read = batch * (m * k * bytes_per_element(s.a) + k * n * bytes_per_element(s.b));
  cost.bytes_written = batch * m * n * bytes_per_element(s.c);
  return cost;
}

OpCost gemv_cost(const GemvShape& s) {
  const double batch = as_double(s.batch);
  const double m = as_double(s.m);
  const double k = as_double(s.k);
  OpCost cost;
  cost.flops = 2.0 * m * k * batch;
  // The weights are read once for the whole batch; each vector is read once and each result
  // written once, in the activation format.
  cost.bytes_read = m * k * bytes_per_element(s.weight) + batch * k * bytes_per_element(s.activation);
  cost.bytes_written = batch * m * bytes_per_element(s.activation);
  return cost;
}

OpCost elementwise_cost(const ElementwiseShape& s) {
  const double elements = as_double(s.elements);
  const double element_bytes = bytes_per_element(s.dtype);
  OpCost cost;
  cost.flops = elements * s.flops_per_element;
  cost.bytes_read = elements * s.inputs * element_bytes;
  cost.bytes_written = elements * s.outputs * element_bytes;
  return cost;
}

}  // namespace roofline
