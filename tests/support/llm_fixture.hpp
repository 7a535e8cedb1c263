#pragma once

// What the LLM model's unit tests share: the bundled models and GPUs (loaded once per test run),
// and an op of a step found by its group and name.

#include <string_view>

#include "roofline/hardware.hpp"
#include "roofline/llm.hpp"
#include "roofline/model.hpp"

namespace roofline::llm_fixture {

// The registries of the bundled files only, so that no user file changes a test's numbers.
[[nodiscard]] const ModelRegistry& models();
[[nodiscard]] const HardwareRegistry& gpus();

// The op `name` of the layer group `group` of `step`; fails the running test if there is none.
[[nodiscard]] const StepOp& find_op(const StepTime& step, std::string_view group, std::string_view name);

}  // namespace roofline::llm_fixture
