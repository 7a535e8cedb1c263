#pragma once

// roofline op KIND: FLOPs, bytes, intensity and roofline time of one operation on one or more
// GPUs, for every point of a sweep. Every numeric flag is a string here because it may be a
// list or a range (roofline/sweep.hpp).

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "../common.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli {

// Flags every op kind takes.
struct OpCommonOptions {
  std::string gpus;
  std::string dtype = "bf16";
  std::optional<std::string> efficiency;   // compute=X,memory=Y
  std::optional<std::string> calibration;  // CAL.json (not for fuse)
  std::vector<std::string> what_if;        // --set
  CommonOptions common;
};

struct GemmOptions {
  OpCommonOptions op;
  std::string m, n, k;
  std::string batch = "1";
  std::optional<std::string> weights, act, out;
};

struct GemvOptions {
  OpCommonOptions op;
  std::string m, k;
  std::string batch = "1";
  std::optional<std::string> weights, act;
};

struct ElementwiseOptions {
  OpCommonOptions op;
  std::string elements;
  std::optional<std::string> fn;  // a named function sets the three below unless they are given
  std::optional<std::string> inputs, outputs, flops_per_element;
};

struct NormOptions {
  OpCommonOptions op;
  std::string rows, hidden;
  std::string kind = "rmsnorm";
  bool residual = false;
};

struct SoftmaxOptions {
  OpCommonOptions op;
  std::string rows, cols;
};

struct AttentionOptions {
  OpCommonOptions op;
  std::string batch = "1";
  std::string heads, head_dim, seq;
  std::optional<std::string> kv_heads, kv_seq;  // unset: equal to heads, to seq
  std::optional<std::int64_t> head_dim_v;       // V's width; unset: each point's head_dim
  bool causal = false;
  std::string impl = "both";                 // standard, flash or both
  std::optional<std::string> tile, tile_kv;  // unset: from the GPU's shared memory
  std::optional<std::string> act, kv;
};

struct FuseOptions {
  OpCommonOptions op;
  std::string chain, rows, hidden;
  std::optional<std::string> weights, act;
};

// Table and JSON reports hold at most this many rows; CSV streams any number.
inline constexpr std::uint64_t max_report_rows = 100'000;

// The report (table and JSON output).
[[nodiscard]] Report run_op(const GemmOptions& options, const HardwareRegistry& registry);
[[nodiscard]] Report run_op(const GemvOptions& options, const HardwareRegistry& registry);
[[nodiscard]] Report run_op(const ElementwiseOptions& options, const HardwareRegistry& registry);
[[nodiscard]] Report run_op(const NormOptions& options, const HardwareRegistry& registry);
[[nodiscard]] Report run_op(const SoftmaxOptions& options, const HardwareRegistry& registry);
[[nodiscard]] Report run_op(const AttentionOptions& options, const HardwareRegistry& registry);
[[nodiscard]] Report run_op(const FuseOptions& options, const HardwareRegistry& registry);

// CSV output, streamed row by row (the first table of the report, without holding it). Notes go
// to `notes` (stderr in the CLI). Returns the number of rows written.
std::uint64_t stream_op_csv(const GemmOptions& options, const HardwareRegistry& registry, std::ostream& out,
                            std::ostream& notes);
std::uint64_t stream_op_csv(const GemvOptions& options, const HardwareRegistry& registry, std::ostream& out,
                            std::ostream& notes);
std::uint64_t stream_op_csv(const ElementwiseOptions& options, const HardwareRegistry& registry, std::ostream& out,
                            std::ostream& notes);
std::uint64_t stream_op_csv(const NormOptions& options, const HardwareRegistry& registry, std::ostream& out,
                            std::ostream& notes);
std::uint64_t stream_op_csv(const SoftmaxOptions& options, const HardwareRegistry& registry, std::ostream& out,
                            std::ostream& notes);
std::uint64_t stream_op_csv(const AttentionOptions& options, const HardwareRegistry& registry, std::ostream& out,
                            std::ostream& notes);
std::uint64_t stream_op_csv(const FuseOptions& options, const HardwareRegistry& registry, std::ostream& out,
                            std::ostream& notes);

}  // namespace roofline::cli
