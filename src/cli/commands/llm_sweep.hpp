#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llm.hpp"

namespace roofline::cli {

// --context and --batch as op's sweeps (roofline/model/sweep.hpp): 1024:32768:x2, 1,8,64; a
// --batch list may name max among its values (1,8,max).
struct LlmSweep {
  std::vector<std::int64_t> contexts;
  std::vector<std::string> batches;  // each "max" or a positive integer, as --batch takes it

  [[nodiscard]] bool single() const { return contexts.size() == 1 && batches.size() == 1; }
};

// A sweep is one full llm evaluation per point; this many keeps one well under a minute.
inline constexpr std::uint64_t max_llm_sweep_points = 10'000;

// Throws InputError naming the flag.
[[nodiscard]] LlmSweep parse_llm_sweep(const std::string& context, const std::string& batch);

// The report "llm-sweep": one row per point, --context the outer loop and --batch the inner, each
// row the figures of `roofline llm` at that point.
[[nodiscard]] Report run_llm_sweep(const LlmOptions& options, const LlmSweep& sweep, const HardwareRegistry& registry);

}  // namespace roofline::cli
