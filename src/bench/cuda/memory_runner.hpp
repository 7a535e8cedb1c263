#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "harness.hpp"
#include "roofline/memory_suite.hpp"

namespace roofline::bench::cuda {

// Runs the given cases of the memory suite (in table order), recording one result per case.
void run_memory_suite(Context& ctx, std::span<const memory::Case* const> cases, bool quick, std::uint64_t seed,
                      Recorder& recorder, std::vector<std::string>& notes);

}  // namespace roofline::bench::cuda
