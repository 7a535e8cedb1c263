// What plan --rps (plan_rps.cpp) and plan --pareto (plan_pareto.cpp) read alike from plan's flags,
// and the two modes' reports; plan.cpp holds the command and sends each run to its mode.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"
#include "roofline/llm/plan.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli::plan_detail {

// Each of --tp and --pp lists at most this many degrees: the search is their product with the
// GPUs and formats, and no deployment has more distinct useful degrees.
inline constexpr std::size_t max_list_entries = 64;

template <typename T>
std::vector<T> parse_list(const std::string& text, std::string_view flag,
                          T (*parse)(const std::string&, std::string_view)) {
  std::vector<T> out;
  for (const std::string& piece : split(text, ',')) {
    if (piece.empty()) throw InputError(fmt::format("{}: empty entry in '{}'", flag, text));
    const T value = parse(piece, flag);
    if (std::find(out.begin(), out.end(), value) == out.end()) out.push_back(value);
  }
  if (out.size() > max_list_entries) {
    throw InputError(
        fmt::format("{}: {} entries, more than the {} a search takes", flag, out.size(), max_list_entries));
  }
  return out;
}

// The rejection summary's columns, the same in both modes' reports.
inline constexpr std::array<ColumnOf<RejectionCount>, 3> reason_columns{{
    {{"reason", "rejected for", 0}, [](const RejectionCount& r) { return Cell{r.reason}; }},
    {{"count", "candidates", 0}, [](const RejectionCount& r) { return Cell{r.count}; }},
    {{"example", "example", 0}, [](const RejectionCount& r) { return Cell{r.example}; }},
}};

[[nodiscard]] int parse_degree(const std::string& text, std::string_view flag);
[[nodiscard]] DType parse_format_flag(const std::string& text, std::string_view flag);

// The report's "gpus" (their ids) and the part of its search or sweep block both modes share: the
// formats, the degrees, attention DP and each speculation setting.
[[nodiscard]] nlohmann::json gpu_ids_json(const std::vector<GpuSpec>& gpus);
[[nodiscard]] nlohmann::json space_json(const PlanSpace& space);
[[nodiscard]] nlohmann::json speculation_list_json(const std::vector<Speculation>& speculation);

// The report's calibration blocks, one per GPU --calibration was resolved for (empty without it).
[[nodiscard]] nlohmann::json calibrations_json(const std::vector<CalibrationChoice>& choices);

// The checkpoint's format is the one weight format tried unless --weights names others, and one
// sequence (prompt + output) must fit the model's context (issue 19); what was decided, as notes.
struct CheckpointNotes {
  std::string weights;
  std::string long_context;
  void add_to(Report& report) const {
    if (!weights.empty()) report.notes.push_back(weights);
    if (!long_context.empty()) report.notes.push_back(long_context);
  }
};

// The flags both modes read alike: the model, the GPUs and their prices, the formats and degrees
// searched, speculation, and the calibration (one file, or one per GPU with auto), with the time
// flags applied to the search's base deployment. space.calibration_by_gpu points into `choices`, so
// the inputs move but are never copied.
struct PlanInputs {
  PlanInputs() = default;
  PlanInputs(const PlanInputs&) = delete;
  PlanInputs& operator=(const PlanInputs&) = delete;
  PlanInputs(PlanInputs&&) = default;
  PlanInputs& operator=(PlanInputs&&) = default;
  ~PlanInputs() = default;

  ModelSpec model;
  PlanSpace space;
  CheckpointNotes checkpoint;
  std::string speculation_note;  // what was decided about speculation (empty: nothing to say)
  std::vector<CalibrationChoice> choices;
  // The one calibration every GPU shares (a file for one GPU); none with per-GPU auto or without
  // --calibration.
  [[nodiscard]] const std::optional<Calibration>& calibration() const;
  [[nodiscard]] bool calibrated() const { return calibration().has_value() || !space.calibration_by_gpu.empty(); }
};

// `prices_required`: plan --rps ranks by cost, so every GPU needs a price; plan --pareto adds a
// cost column only where --price is given.
[[nodiscard]] PlanInputs read_plan_inputs(const PlanOptions& options, const HardwareRegistry& registry,
                                          bool prices_required);

[[nodiscard]] Report rps_report(const PlanOptions& options, const HardwareRegistry& registry);     // plan_rps.cpp
[[nodiscard]] Report pareto_report(const PlanOptions& options, const HardwareRegistry& registry);  // plan_pareto.cpp

}  // namespace roofline::cli::plan_detail
