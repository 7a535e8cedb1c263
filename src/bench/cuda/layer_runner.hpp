#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "harness.hpp"
#include "roofline/bench/layer_suite.hpp"

namespace roofline::bench::cuda {

// Runs the selected decoder-layer cases: per case one result for the whole layer, then one per
// stage (the order of layer::stages()).
void run_layer_suite(Context& ctx, std::span<const layer::Case* const> cases, bool quick, std::uint64_t seed,
                     Recorder& recorder, std::vector<std::string>& notes);

}  // namespace roofline::bench::cuda
