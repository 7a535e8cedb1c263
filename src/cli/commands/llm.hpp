#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../common.hpp"
#include "../model_options.hpp"
#include "roofline/calibration.hpp"
#include "roofline/hardware.hpp"
#include "roofline/llm.hpp"
#include "roofline/report.hpp"

namespace roofline::cli {

// The deployment flags shared by llm and plan: memory reserve, links, efficiency, calibration.
struct DeploymentFlags {
  double reserve_gb = default_reserve_gb;
  double workspace_gb = default_workspace_gb;
  double scale_up_latency_us = default_scale_up_latency_us;
  double scale_out_gbps = default_scale_out_gbps;
  double scale_out_latency_us = default_scale_out_latency_us;
  int scale_up_domain = default_scale_up_domain;
  std::string efficiency = "compute=1,memory=1";
  // A calibration file (roofline calibrate): its efficiency tables set each op's expected time, and
  // its measured collective tables charge TP and PP communication on its GPU (docs/collectives.md).
  std::optional<std::string> calibration;
};
void add_deployment_flags(CLI::App& command, DeploymentFlags& flags);
// Checks the values (InputError naming the flag), fills the config's memory and link fields, and
// loads the calibration --calibration names, once (InputError naming the key of a bad file): its
// measured collectives go into the config, and it is returned for its op tables (nullopt without
// the flag).
[[nodiscard]] std::optional<Calibration> apply_deployment_flags(const DeploymentFlags& flags, DeploymentConfig& config);
// The report's note on --calibration's collectives: used on this GPU, or why not.
[[nodiscard]] std::string collectives_note(const DeploymentConfig& config, const GpuSpec& gpu, const std::string& file);
[[nodiscard]] nlohmann::json deployment_flags_json(const DeploymentFlags& flags);
// Sets the expected time: --efficiency, or the op tables of the calibration apply_deployment_flags
// loaded (InputError with both: both would set the expected time). `time` points into
// `calibration`, which must outlive it (a temporary is refused).
void apply_time_flags(const DeploymentFlags& flags, const std::optional<Calibration>& calibration, TimeOptions& time);
void apply_time_flags(const DeploymentFlags&, const std::optional<Calibration>&&, TimeOptions&) = delete;
// The report's note on a calibration: the file, where it was learnt, and how many ops of each
// step a table covered.
[[nodiscard]] std::string calibration_note(const Calibration& calibration);

struct LlmOptions {
  ModelOptions model;
  std::string gpu;
  int gpus = 0;  // 0: tp x pp (one replica)
  int tp = 1;
  int pp = 1;
  // Unset: the activation format (bf16, or fp16 on a GPU without bf16).
  std::optional<std::string> weights;
  std::optional<std::string> kv;
  std::optional<std::string> embeddings;
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
