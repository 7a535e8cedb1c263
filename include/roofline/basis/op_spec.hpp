#pragma once

// An operation written on one line, for flags that name operations (`plot --op`):
//
//   KIND:key=value,key=value,...
//   gemm:m=4096,n=4096,k=4096              gemv:m=8192,k=8192,batch=8,dtype=fp16
//   attention:heads=64,kv_heads=8,head_dim=128,seq=2048,causal
//   elementwise:elements=1e9,fn=silu       norm:rows=4096,hidden=8192,residual
//
// The keys are the flags of `roofline op KIND` without their dashes (kv-heads and kv_heads
// both work); unset keys take the op command's defaults (batch 1, dtype bf16, ...), a flag
// without a value is true (causal, residual), and label=TEXT names the point. The operation's
// FLOPs and bytes come from the same functions as `roofline op` (through validate.hpp's bases).

#include <string>
#include <string_view>

#include "roofline/basis/basis.hpp"

namespace roofline {

struct OpSpec {
  std::string kind;   // gemm, gemv, elementwise, norm, softmax, attention
  std::string label;  // label=..., or one built from the shape: "GEMM 4096x4096x4096 bf16"
  Basis basis;
};

// Throws InputError naming `flag`, the spec and the offending key (with a suggestion).
[[nodiscard]] OpSpec parse_op_spec(std::string_view text, std::string_view flag = "--op");

}  // namespace roofline
