#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "harness.hpp"
#include "kernels/gemv.hpp"
#include "roofline/bench/memory_suite.hpp"

namespace roofline::bench::cuda {

// Runs the given cases of the memory suite (in table order), recording one result per case.
void run_memory_suite(Context& ctx, std::span<const memory::Case* const> cases, bool quick, std::uint64_t seed,
                      Recorder& recorder, std::vector<std::string>& notes);

// The GEMV kernel of a GEMV variant (mma for the variants that are not the project's tuned ones).
[[nodiscard]] kernels::GemvKernel gemv_kernel_of(memory::Variant variant);

}  // namespace roofline::bench::cuda
