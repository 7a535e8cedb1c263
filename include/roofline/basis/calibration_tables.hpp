#pragma once

// The names of calibration tables, made in one place. A benchmark's basis (validate, calibrate)
// and an operation's basis (op, llm, plan) must name the same table for a calibration learnt from
// the one to apply to the other, so every name is built here and nowhere else:
//   gemm.<a>[.w<b>]                       GEMM, activations a, weights b where they differ
//   gemm_grouped.<a>[.w<b>]               grouped GEMM of MoE experts (one weight per expert)
//   gemv.<activation>[.w<weight>]         GEMV
//   stream.r<in>w<out>                    vector work, by its arrays read and written
//   attention.<impl>.<act>[.kv<kv>].d<head_dim>.<causal|full>   prefill attention
//   attention.decode.<act>[.kv<kv>].d<head_dim>                 decode attention
//   attention.latent_decode.<act>[.kv<kv>].d<latent + rope>     latent (MLA) attention at decode
//   access.strided, access.<gather|scatter>                     access patterns
//   <best table>.<implementation>         the table of one implementation ("gemv.bf16.mma")
// A problem (what the best table keeps the fastest implementation of) is named
// <best table>.<what defines its size>.

#include <cstdint>
#include <string>
#include <string_view>

#include "roofline/core/dtype.hpp"

namespace roofline::calibration_tables {

[[nodiscard]] std::string gemm(DType a, DType b);
[[nodiscard]] std::string grouped_gemm(DType a, DType b);
[[nodiscard]] std::string gemv(DType activation, DType weight);
[[nodiscard]] std::string stream(int inputs, int outputs);
// `kernel` is the implementation ("flash", "standard") or the kernel that ran ("flashwgmma").
// `head_dim_v`: V's width where it differs from Q's and K's ("d192v128"; 0: the same).
[[nodiscard]] std::string attention(std::string_view kernel, DType act, DType kv, std::int64_t head_dim, bool causal,
                                    std::int64_t head_dim_v = 0);
[[nodiscard]] std::string decode_attention(DType act, DType kv, std::int64_t head_dim);
// `row_width`: the cached row, latent and rotary key (576 for DeepSeek-V3).
[[nodiscard]] std::string latent_decode_attention(DType act, DType kv, std::int64_t row_width);
[[nodiscard]] std::string access_strided();
// `pattern`: "gather" or "scatter".
[[nodiscard]] std::string access_random(std::string_view pattern);
[[nodiscard]] std::string implementation(std::string_view best_table, std::string_view implementation);
[[nodiscard]] std::string problem(std::string_view best_table, std::string_view size);
// A GEMV problem: "gemv.bf16.8192x8192.b1" (the memory suite's ids begin with it).
[[nodiscard]] std::string gemv_problem(DType activation, DType weight, std::int64_t m, std::int64_t k,
                                       std::int64_t batch);

}  // namespace roofline::calibration_tables
