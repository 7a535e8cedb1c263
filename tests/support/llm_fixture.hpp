#pragma once

// What the LLM model's unit tests share: the bundled models and GPUs (fixture.hpp), and an op of
// a step found by its group and name.

#include <string_view>

#include "fixture.hpp"
#include "roofline/llm/llm.hpp"

namespace roofline::llm_fixture {

using fixture::gpus;
using fixture::models;

// The op `name` of the layer group `group` of `step`; fails the running test if there is none.
[[nodiscard]] const StepOp& find_op(const StepTime& step, std::string_view group, std::string_view name);

}  // namespace roofline::llm_fixture
