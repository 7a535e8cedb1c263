#pragma once

// The layer suite as the registry holds it: its description (roofline/layer_suite.hpp) with the
// basis of a recorded result and calibrate's rule, both through the layer suite's own functions.
// Kept apart from the layer suite's files so that the decoder layer's description can change
// without touching the registry.

#include "roofline/bench/bench.hpp"

namespace roofline::bench {

[[nodiscard]] SuiteInfo layer_suite_registration();

}  // namespace roofline::bench
