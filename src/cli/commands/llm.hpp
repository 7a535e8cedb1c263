#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../common.hpp"
#include "../deployment_options.hpp"
#include "../model_options.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli {

struct LlmOptions {
  ModelOptions model;
  ParallelismFlags parallelism;
  ExpertFlags experts;
  SpeculationFlags speculation;
  FormatFlags formats;
  std::int64_t context = 0;
  std::optional<std::int64_t> prompt;  // default: the context
  std::string batch = "max";
  bool levers = true;  // the table of weight/KV formats at the same deployment
  DeploymentFlags deployment;
  std::vector<std::string> what_if;
  CommonOptions common;
};

[[nodiscard]] Report run_llm(const LlmOptions& options, const HardwareRegistry& registry);

}  // namespace roofline::cli
