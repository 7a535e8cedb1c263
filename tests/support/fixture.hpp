#pragma once

// The registries of the bundled hardware and model files, shared by every unit test (built once
// per test run), so that no user file or environment variable changes a test's numbers.

#include "roofline/hardware/hardware.hpp"
#include "roofline/llm/model_presets.hpp"

namespace roofline::fixture {

[[nodiscard]] const HardwareRegistry& gpus();
[[nodiscard]] const ModelRegistry& models();

}  // namespace roofline::fixture
