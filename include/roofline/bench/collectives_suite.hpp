#pragma once

// The collectives suite: all-reduce, all-gather and reduce-scatter through NCCL across the GPUs
// of one host (one process driving them all) or one GPU per rank under MPI. Sizes are powers of
// two from 8 B to 8 GiB, as nccl-tests size them (comm.hpp: the larger buffer of one rank); fp32
// sums, out of place. Each result records the algorithm bandwidth (bytes / time), the bus
// bandwidth (x bus_factor: what each link carried) and, side by side, the model's time for the
// same collective: the ring over the hardware file's scale-up link (comm.hpp's ring_time). Host
// code; the NCCL runner is src/bench/cuda/collectives_runner.cpp.

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "roofline/bench/bench.hpp"
#include "roofline/model/comm.hpp"

namespace roofline::bench::collectives {

struct Case {
  Collective op = Collective::all_reduce;
  std::int64_t bytes = 8;
  bool quick = false;
};

inline constexpr int min_log2_bytes = 3;   // 8 B
inline constexpr int max_log2_bytes = 33;  // 8 GiB
// --quick: every fourth size up to 32 MiB (8 B, 32 B, ..., 32 MiB).
inline constexpr int quick_max_log2_bytes = 25;
inline constexpr std::array<Collective, 3> ops{Collective::all_reduce, Collective::all_gather,
                                               Collective::reduce_scatter};

inline constexpr auto cases = [] {
  std::array<Case, ops.size() * (max_log2_bytes - min_log2_bytes + 1)> table{};
  std::size_t i = 0;
  for (Collective op : ops) {
    for (int e = min_log2_bytes; e <= max_log2_bytes; ++e) {
      table[i++] = Case{op, std::int64_t{1} << e, e % 2 == 1 && e <= quick_max_log2_bytes};
    }
  }
  return table;
}();

// The element type every case reduces in (sums of small integers stay exact in it).
inline constexpr std::string_view dtype = "fp32";
inline constexpr std::int64_t element_bytes = 4;

// "allreduce.fp32.64KiB", "reducescatter.fp32.8GiB"
[[nodiscard]] std::string case_id(const Case& c);

// What one rank holds for a collective of `bytes` over `ranks` (nccl-tests' sizes): the element
// count of the larger buffer is rounded down to a multiple of `ranks` (so that it splits evenly);
// the smaller buffer is 1 / ranks of it (all-gather's input, reduce-scatter's output).
struct Buffers {
  std::int64_t bytes = 0;  // the size actually run (after rounding)
  std::int64_t send_elements = 0;
  std::int64_t recv_elements = 0;
  std::int64_t chunk_elements = 0;  // elements one rank contributes or keeps: count / ranks
};
[[nodiscard]] Buffers buffers(Collective op, std::int64_t bytes, int ranks);

// The model's view of a case: the ring over `link` (the scale-up link of the hardware file with
// the default per-step latency, deployment.hpp), as llm and plan charge it.
[[nodiscard]] LinkSpec model_link(const GpuSpec& gpu);

// A not-yet-run result: parameters op, dtype, ranks, bytes (run), count, and the model's time and
// bus bandwidth where `link` is known.
[[nodiscard]] BenchmarkResult make_result(const Case& c, int ranks, const std::optional<LinkSpec>& link);

[[nodiscard]] const SuiteInfo& suite();

}  // namespace roofline::bench::collectives
