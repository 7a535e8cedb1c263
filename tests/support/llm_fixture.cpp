#include "llm_fixture.hpp"

#include "catch.hpp"

namespace roofline::llm_fixture {

const StepOp& find_op(const StepTime& step, std::string_view group, std::string_view name) {
  for (const LayerGroup& g : step.groups) {
    if (g.name != group) continue;
    for (const StepOp& op : g.ops) {
      if (op.name == name) return op;
    }
  }
  FAIL("no op " << name << " in " << group);
  static const StepOp none;
  return none;
}

}  // namespace roofline::llm_fixture
