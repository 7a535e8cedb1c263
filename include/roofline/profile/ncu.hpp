#pragma once

// Nsight Compute output as roofline data. `roofline profile` runs
//
//   ncu --clock-control none --print-units base --csv --page raw
//       --section SpeedOfLight --section SpeedOfLight_RooflineChart
//       --section SpeedOfLight_HierarchicalSingleRooflineChart
//       --section SpeedOfLight_HierarchicalHalfRooflineChart
//       --section SpeedOfLight_HierarchicalDoubleRooflineChart
//       --section SpeedOfLight_HierarchicalTensorRooflineChart
//       --section MemoryWorkloadAnalysis  CMD ARGS...
//
// and this reads its CSV: one header row of metric names, one row of units, one row per profiled
// kernel. Per kernel it derives what a roofline needs (docs/profile.md):
//   - time: gpu__time_duration.sum;
//   - FLOPs of the vector pipes from the SASS instruction counters per elapsed cycle times the
//     cycles per second (smsp__cycles_elapsed.avg.per_second), a fused multiply-add counting 2:
//     fp32 = fadd + fmul + 2 ffma, fp64 = dadd + dmul + 2 dfma, fp16 = 2 hadd + 2 hmul + 4 hfma
//     (packed half2 instructions: the factors Nsight Compute's own roofline sections use);
//   - tensor-core operations per source type (sm__ops_path_tensor_src_*.sum);
//   - bytes per memory level: DRAM (dram__bytes), L2 to the SMs (lts2xbar), L1 to the registers
//     (LSU writeback of global, local and shared loads), each rate times the duration.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/core/dtype.hpp"

namespace roofline::ncu {

// The metric table of `--page raw --csv`: lines before the header (the program's own output, ncu's
// ==PROF== notes) are kept apart.
struct RawCsv {
  std::vector<std::string> header;
  std::vector<std::string> units;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> other_lines;  // everything that is not the table
};

// Throws InputError naming `name` when no table is found or a row is malformed.
[[nodiscard]] RawCsv parse_raw_csv(std::string_view text, const std::string& name);

// Tensor-core operations of one source type.
struct TensorOps {
  std::string source;             // as the metric names it: "bf16_dst_fp32", "fp16", "fp8_sparsity_off", ...
  std::optional<PeakClass> peak;  // the hardware file's class for it (bf16, fp16, tf32, fp64_tensor, fp8, int8)
  bool floating = true;           // int8 and int1 count integer operations
  double ops = 0;
};

struct Kernel {
  std::int64_t id = 0;
  std::string name;        // as ncu prints it (demangled)
  std::string short_name;  // the function name without return type, namespaces, template arguments
  std::string block;
  std::string grid;
  std::string device;  // device__attribute_display_name, where present
  double duration_s = 0;
  double fp32_flops = 0;
  double fp64_flops = 0;
  double fp16_flops = 0;
  std::vector<TensorOps> tensor;  // types with ops > 0
  std::optional<double> dram_bytes;
  std::optional<double> l2_bytes;
  std::optional<double> l1_bytes;

  [[nodiscard]] double tensor_flops() const;  // floating-point tensor operations
  [[nodiscard]] double flops() const { return fp32_flops + fp64_flops + fp16_flops + tensor_flops(); }
};

// Every kernel of the table. Throws InputError naming `name` and the metric when a column the
// roofline needs is missing (the time, or the cycle rate when instruction counts are present).
[[nodiscard]] std::vector<Kernel> kernels(const RawCsv& csv, const std::string& name);

// "void at::vectorized_elementwise_kernel<8, ...>(int, T2, T3)" -> "vectorized_elementwise_kernel".
[[nodiscard]] std::string short_kernel_name(std::string_view name);

// The sections profile asks ncu for.
[[nodiscard]] std::vector<std::string> sections();

}  // namespace roofline::ncu
