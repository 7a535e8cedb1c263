#include "roofline/bench/layer_registration.hpp"

#include <fmt/format.h>

#include "roofline/bench/layer_suite.hpp"

namespace roofline::bench {
namespace {

// A stage of the decoder layer: the operation it ran (layer::stage_operation, for the layer named
// by its "layer" parameter), predicted from the table of the implementation that ran it where the
// run recorded one (parameter "table"), else from the operation's best table. Its pattern says it
// is a layer stage, so that the stages are summarised apart from the microbenchmarks they are
// predicted from.
BasisOrReason stage_basis(const RecordedResult& m) {
  const auto layer = m.parameters.find("layer");
  const layer::Case* c =
      layer != m.parameters.end() && layer->is_string() ? layer::find_case(layer->get<std::string>()) : nullptr;
  if (c == nullptr) return NoBasis{"not a stage of this build's layer suite", false};
  std::optional<layer::StageOperation> op = layer::stage_operation(*c, layer::stage_word_of(m.id));
  if (!op) return NoBasis{"not a stage of this build's layer suite", false};
  Basis b = std::move(op->basis);
  b.pattern = fmt::format("layer.{}", b.pattern);
  // The layer's own kernels record no table (a null cell).
  const auto ran = m.parameters.find("table");
  b.table = ran != m.parameters.end() && ran->is_string() ? ran->get<std::string>() : std::string();
  if (b.table.empty()) b.table = b.best_table;
  return b;
}

BasisOrReason recorded_basis(const RecordedResult& m) {
  if (m.group == "layer") {
    return NoBasis{"a whole decoder layer: predicted as the sum of its stages (the layers table)", false};
  }
  if (m.group == "layer_stages") return stage_basis(m);
  return NoBasis{fmt::format("group '{}' has no prediction in this build", m.group), false};
}

}  // namespace

SuiteInfo layer_suite_registration() {
  SuiteInfo info = layer::suite();
  info.basis = &recorded_basis;
  info.not_learnt = "the decoder layer and its stages: validated against the tables, not learnt";
  return info;
}

}  // namespace roofline::bench
