#include "roofline/basis/calibration_tables.hpp"

#include <fmt/format.h>

namespace roofline::calibration_tables {
namespace {

std::string_view mask_name(bool causal) {
  return causal ? "causal" : "full";
}

// ".kvfp8" where the cache is stored in another format than the activations.
std::string kv_suffix(DType act, DType kv) {
  return kv == act ? std::string() : fmt::format(".kv{}", name_of(kv));
}

}  // namespace

std::string gemm(DType a, DType b) {
  return a == b ? fmt::format("gemm.{}", name_of(a)) : fmt::format("gemm.{}.w{}", name_of(a), name_of(b));
}

std::string grouped_gemm(DType a, DType b) {
  return a == b ? fmt::format("gemm_grouped.{}", name_of(a))
                : fmt::format("gemm_grouped.{}.w{}", name_of(a), name_of(b));
}

std::string gemv(DType activation, DType weight) {
  return activation == weight ? fmt::format("gemv.{}", name_of(weight))
                              : fmt::format("gemv.{}.w{}", name_of(activation), name_of(weight));
}

std::string stream(int inputs, int outputs) {
  return fmt::format("stream.r{}w{}", inputs, outputs);
}

std::string attention(std::string_view kernel, DType act, DType kv, std::int64_t head_dim, bool causal,
                      std::int64_t head_dim_v) {
  const std::string value_dim = head_dim_v == 0 || head_dim_v == head_dim ? "" : fmt::format("v{}", head_dim_v);
  return fmt::format("attention.{}.{}{}.d{}{}.{}", kernel, name_of(act), kv_suffix(act, kv), head_dim, value_dim,
                     mask_name(causal));
}

std::string decode_attention(DType act, DType kv, std::int64_t head_dim) {
  return fmt::format("attention.decode.{}{}.d{}", name_of(act), kv_suffix(act, kv), head_dim);
}

std::string latent_decode_attention(DType act, DType kv, std::int64_t row_width) {
  return fmt::format("attention.latent_decode.{}{}.d{}", name_of(act), kv_suffix(act, kv), row_width);
}

std::string access_strided() {
  return "access.strided";
}

std::string access_random(std::string_view pattern) {
  return fmt::format("access.{}", pattern);
}

std::string implementation(std::string_view best_table, std::string_view implementation) {
  return fmt::format("{}.{}", best_table, implementation);
}

std::string problem(std::string_view best_table, std::string_view size) {
  return fmt::format("{}.{}", best_table, size);
}

std::string gemv_problem(DType activation, DType weight, std::int64_t m, std::int64_t k, std::int64_t batch) {
  return problem(gemv(activation, weight), fmt::format("{}x{}.b{}", m, k, batch));
}

}  // namespace roofline::calibration_tables
