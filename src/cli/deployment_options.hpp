#pragma once

// The flags that describe one deployment of a model, shared by llm, plan and train (as
// model_options.hpp is for the model): the GPUs and how the model splits over them, the storage
// formats, memory reserve, links, efficiency and calibration. Each group adds its flags to a
// command and turns their values into the library's DeploymentConfig and TimeOptions.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "roofline/basis/calibration.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/llm/deployment.hpp"
#include "roofline/llm/llm.hpp"
#include "roofline/llm/speculative.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli {

// --gpu, --gpus, --tp, --pp: one GPU type and how many of it. `gpus_help` says what --gpus counts
// for the command (llm: a multiple of TP x PP, default TP x PP; train: the job, required).
struct ParallelismFlags {
  std::string gpu;
  int gpus = 0;  // 0: tp x pp (one replica), where the command allows it
  int tp = 1;
  int pp = 1;
};
void add_parallelism_flags(CLI::App& command, ParallelismFlags& flags, std::string_view gpus_help, bool gpus_required);
// Sets the config's TP, PP and replicas; InputError when --gpus is not a multiple of TP x PP.
// Returns the GPUs in all.
int apply_parallelism_flags(const ParallelismFlags& flags, DeploymentConfig& config);

// --ep, --attention-dp, --expert-imbalance: how a mixture of experts spreads over the TP group
// (roofline/llm/expert_parallel.hpp). The values are checked against the model by shard().
struct ExpertFlags {
  int ep = 1;
  bool attention_dp = false;
  std::optional<double> imbalance;
};
void add_expert_flags(CLI::App& command, ExpertFlags& flags);
void apply_expert_flags(const ExpertFlags& flags, DeploymentConfig& config);
// The report's "expert_layout" input block.
[[nodiscard]] nlohmann::json expert_flags_json(const ExpertFlags& flags);

// --speculate K, --acceptance A[,A...], --draft-model M: speculative decoding
// (roofline/llm/speculative.hpp); without --draft-model the model's MTP module drafts.
struct SpeculationFlags {
  int draft_tokens = 0;  // 0: no speculation
  std::string acceptance;
  std::optional<std::string> draft_model;
};
void add_speculation_flags(CLI::App& command, SpeculationFlags& flags);
// Unset without --speculate; InputError for bad values (check_speculation), for --acceptance or
// --draft-model without --speculate. `models`: where the draft model is looked up (--models-dir).
[[nodiscard]] std::optional<Speculation> resolve_speculation(const SpeculationFlags& flags,
                                                             const std::vector<std::string>& models_dirs);
// The report's "speculation" input block.
[[nodiscard]] nlohmann::json speculation_json(const Speculation& speculation);

// --weights, --kv, --embeddings: the storage formats; unset, the activation format (bf16, or
// fp16 on a GPU without bf16).
struct FormatFlags {
  std::optional<std::string> weights;
  std::optional<std::string> kv;
  std::optional<std::string> embeddings;
};
void add_format_flags(CLI::App& command, FormatFlags& flags);
// Sets the config's activation, weight, KV and embedding formats for `gpu` (InputError naming
// the flag of a format that is not a storage format).
void apply_format_flags(const FormatFlags& flags, const GpuSpec& gpu, DeploymentConfig& config);

// The deployment flags shared by llm and plan: memory reserve, links, efficiency, calibration.
struct DeploymentFlags {
  double reserve_gb = default_reserve_gb;
  double workspace_gb = default_workspace_gb;
  double scale_up_latency_us = default_scale_up_latency_us;
  double scale_out_gbps = default_scale_out_gbps;
  double scale_out_latency_us = default_scale_out_latency_us;
  int scale_up_domain = default_scale_up_domain;
  std::string efficiency = "compute=1,memory=1";
  // A calibration file (roofline calibrate), or "auto" (the bundled one of the GPU, measured or
  // transferred: docs/calibration.md): its efficiency tables set each op's expected time, and its
  // measured collective tables charge TP and PP communication on its GPU (docs/collectives.md).
  std::optional<std::string> calibration;
};

// --calibration FILE|auto, resolved for one GPU.
inline constexpr std::string_view auto_calibration_flag = "auto";
struct CalibrationChoice {
  std::string flag;  // what --calibration said
  std::string gpu;   // the GPU it was resolved for
  // "measured" or "transferred" (what the tables are), "none" (auto found none: roofline kept)
  std::string kind;
  std::optional<Calibration> calibration;
  std::string band;  // the error band the validation supports, or why there is none
  std::string note;  // where the tables come from, for the report's notes (and stderr for "none")
};
// A file is loaded as it is (InputError naming its key when bad); auto picks the bundled
// calibration measured on `gpu`, else transfers the nearest of its architecture, else none.
[[nodiscard]] CalibrationChoice choose_calibration(const std::string& flag, const GpuSpec& gpu,
                                                   const HardwareRegistry& registry);
// The report's "calibration" block: file, kind, GPU, source GPU, provenance, band, note.
[[nodiscard]] nlohmann::json calibration_block(const CalibrationChoice& choice);
void add_deployment_flags(CLI::App& command, DeploymentFlags& flags);
// Checks the values (InputError naming the flag), fills the config's memory and link fields, and
// resolves --calibration once for `gpu` (choose_calibration): the measured collectives of the
// calibration go into the config, and the choice is returned for its op tables (nullopt without
// the flag).
[[nodiscard]] std::optional<CalibrationChoice> apply_deployment_flags(const DeploymentFlags& flags,
                                                                      DeploymentConfig& config, const GpuSpec& gpu,
                                                                      const HardwareRegistry& registry);
// The report's note on --calibration's collectives: used on this GPU, or why not.
[[nodiscard]] std::string collectives_note(const DeploymentConfig& config, const GpuSpec& gpu, const std::string& file);
[[nodiscard]] nlohmann::json deployment_flags_json(const DeploymentFlags& flags);
// Sets the expected time: --efficiency, or the op tables of the calibration apply_deployment_flags
// loaded (InputError with both: both would set the expected time). `time` points into
// `calibration`, which must outlive it (a temporary is refused).
void apply_time_flags(const DeploymentFlags& flags, const std::optional<Calibration>& calibration, TimeOptions& time);
void apply_time_flags(const DeploymentFlags&, const std::optional<Calibration>&&, TimeOptions&) = delete;
// The report's note on a calibration: the file, where it was learnt (or whence transferred), and
// the error band.
[[nodiscard]] std::string calibration_note(const CalibrationChoice& choice);

}  // namespace roofline::cli
