#include "deployment_options.hpp"

#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <memory>

#include "model_options.hpp"
#include "roofline/basis/calibration_transfer.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"

namespace roofline::cli {

void add_parallelism_flags(CLI::App& command, ParallelismFlags& flags, std::string_view gpus_help, bool gpus_required) {
  command.add_option("--gpu", flags.gpu, "GPU id or alias")->required();
  // At least 1 each: flags.gpus == 0 means "not given", so --gpus 0 must not reach it.
  const CLI::Range at_least_one(1, std::numeric_limits<int>::max());
  CLI::Option* gpus = command.add_option("--gpus", flags.gpus, std::string(gpus_help))->check(at_least_one);
  if (gpus_required) gpus->required();
  command.add_option("--tp", flags.tp, "Tensor-parallel GPUs per layer")->capture_default_str()->check(at_least_one);
  command.add_option("--pp", flags.pp, "Pipeline stages")->capture_default_str()->check(at_least_one);
}

int apply_parallelism_flags(const ParallelismFlags& flags, DeploymentConfig& config) {
  config.tp = flags.tp;
  config.pp = flags.pp;
  const int group = flags.tp * flags.pp;
  const int gpus = flags.gpus == 0 ? group : flags.gpus;
  if (gpus < 1 || gpus % group != 0) {
    throw InputError(fmt::format("--gpus {} is not a multiple of --tp {} x --pp {}", gpus, flags.tp, flags.pp));
  }
  config.replicas = gpus / group;
  return gpus;
}

void add_expert_flags(CLI::App& command, ExpertFlags& flags) {
  command
      .add_option("--ep", flags.ep,
                  "Expert-parallel GPUs: the routed experts spread over EP of the TP GPUs, each expert's width split "
                  "over TP / EP (TensorRT-LLM's moe_ep_size)")
      ->capture_default_str()
      ->group("Experts");
  command
      .add_flag("--attention-dp", flags.attention_dp,
                "Data-parallel attention (needs --ep = --tp): attention, dense layers and the head whole on every GPU "
                "over its own requests (the MLA cache no longer replicated); tokens reach their experts by all-to-all")
      ->group("Experts");
  command
      .add_option("--expert-imbalance", flags.imbalance,
                  "The busiest EP GPU's token-expert pairs over the mean, from 1 to EP (default: the expectation "
                  "under uniform routing)")
      ->group("Experts");
}

void apply_expert_flags(const ExpertFlags& flags, DeploymentConfig& config) {
  config.experts = {flags.ep, flags.attention_dp, flags.imbalance};
}

nlohmann::json expert_flags_json(const ExpertFlags& flags) {
  return {{"ep", flags.ep},
          {"attention_dp", flags.attention_dp},
          {"expert_imbalance", flags.imbalance ? nlohmann::json(*flags.imbalance) : nullptr}};
}

void add_speculation_flags(CLI::App& command, SpeculationFlags& flags) {
  command
      .add_option("--speculate", flags.draft_tokens,
                  "Speculative decoding: K draft tokens per step, verified in one step of K + 1 tokens per sequence")
      ->group("Speculation");
  command
      .add_option("--acceptance", flags.acceptance,
                  "Acceptance of each draft given the ones before it: one rate in [0, 1], or one per position "
                  "(0.9,0.8,0.7)")
      ->group("Speculation");
  command
      .add_option("--draft-model", flags.draft_model,
                  "A draft model (preset or --models-dir file) run K decode steps; default: the model's MTP module")
      ->group("Speculation");
}

std::optional<Speculation> resolve_speculation(const SpeculationFlags& flags,
                                               const std::vector<std::string>& models_dirs) {
  if (flags.draft_tokens == 0) {
    if (!flags.acceptance.empty() || flags.draft_model) {
      throw InputError("--acceptance and --draft-model need --speculate K");
    }
    return std::nullopt;
  }
  Speculation s;
  s.draft_tokens = flags.draft_tokens;
  if (!flags.acceptance.empty()) {
    for (const std::string& piece : split(flags.acceptance, ',')) {
      std::size_t used = 0;
      double value = -1;
      try {
        value = std::stod(piece, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != piece.size()) {
        throw InputError(
            fmt::format("--acceptance '{}': expected rates in [0, 1] separated by commas", flags.acceptance));
      }
      s.acceptance.push_back(value);
    }
  }
  check_speculation(s);
  if (flags.draft_model) {
    ModelOptions draft;
    draft.model = *flags.draft_model;
    draft.models_dirs = models_dirs;
    s.draft_model = resolve_model(draft);
  }
  return s;
}

nlohmann::json speculation_json(const Speculation& s) {
  return {{"draft_tokens", s.draft_tokens},
          {"acceptance", s.acceptance},
          {"drafter", s.draft_model ? s.draft_model->id : std::string("mtp")}};
}

void add_format_flags(CLI::App& command, FormatFlags& flags) {
  command.add_option("--weights", flags.weights,
                     "Format of the linear layers' weights: bf16, fp8, int8, int4_g128, nvfp4, ... (default: bf16, "
                     "fp16 on a GPU without bf16)");
  command.add_option("--kv", flags.kv, "Format of the KV cache (default: as for --weights)");
  command.add_option("--embeddings", flags.embeddings,
                     "Format of the embedding table and output head (default: as for --weights)");
}

void apply_format_flags(const FormatFlags& flags, const GpuSpec& gpu, DeploymentConfig& config) {
  config.activations = default_activation_dtype(gpu);
  const auto format = [&](const std::optional<std::string>& flag, std::string_view name) {
    return flag ? parse_storage_dtype(*flag, name) : config.activations;
  };
  config.weights = format(flags.weights, "--weights");
  config.kv = format(flags.kv, "--kv");
  config.embeddings = format(flags.embeddings, "--embeddings");
}

void add_deployment_flags(CLI::App& command, DeploymentFlags& flags) {
  command
      .add_option("--reserve-gb", flags.reserve_gb,
                  "GB per GPU for the CUDA context, NCCL buffers, cuBLAS workspace and allocator slack")
      ->capture_default_str()
      ->group("Memory");
  command
      .add_option("--workspace-gb", flags.workspace_gb,
                  "GB per GPU for activations of the step in flight (prefill chunk, logits, CUDA graphs)")
      ->capture_default_str()
      ->group("Memory");
  command
      .add_option("--scale-up-latency-us", flags.scale_up_latency_us,
                  "Latency per collective step on the scale-up link (an assumption; calibrate with NCCL tests)")
      ->capture_default_str()
      ->group("Links");
  command
      .add_option("--scale-out-gbps", flags.scale_out_gbps,
                  "Scale-out network per GPU and direction in GB/s (50 = one 400 Gb/s NIC per GPU)")
      ->capture_default_str()
      ->group("Links");
  command
      .add_option("--scale-out-latency-us", flags.scale_out_latency_us,
                  "Latency per collective step on the scale-out network (assumption)")
      ->capture_default_str()
      ->group("Links");
  command
      .add_option("--scale-up-domain", flags.scale_up_domain,
                  "GPUs on one scale-up link (8 for HGX/DGX, 72 for NVL72); larger groups use the scale-out network")
      ->capture_default_str()
      ->group("Links");
  command
      .add_option("--efficiency", flags.efficiency,
                  "Fractions of the peak FLOP/s and bandwidth kernels reach, e.g. compute=0.7,memory=0.8")
      ->capture_default_str()
      ->group("Model");
  command
      .add_option("--calibration", flags.calibration,
                  "A calibration file (roofline calibrate), or 'auto': the bundled calibration measured on the GPU, "
                  "else one transferred from the nearest measured GPU of its architecture, else the roofline (with a "
                  "note). Each op's expected time from the efficiency its best measured implementation reached at "
                  "that size, and its measured collectives (bench --suite collectives) for TP all-reduces and PP "
                  "transfers; the roofline times stay beside them")
      ->group("Model");
}

CalibrationChoice choose_calibration(const std::string& flag, const GpuSpec& gpu, const HardwareRegistry& registry) {
  CalibrationChoice choice;
  choice.flag = flag;
  choice.gpu = gpu.id;
  if (flag != auto_calibration_flag) {
    choice.calibration = load_calibration(flag);
    const Calibration& c = *choice.calibration;
    choice.kind = c.transfer ? "transferred" : "measured";
    choice.band = c.validation ? c.validation->summary
                               : std::string("no error band recorded in the file (calibrate --layer-check)");
    choice.note = origin_text(c);
    return choice;
  }
  AutoCalibration picked = auto_calibration(gpu, registry);
  // Falling back to the roofline is never silent, whatever the report's format.
  if (picked.kind == AutoCalibration::Kind::none) std::cerr << "roofline: note: " << picked.note << '\n';
  choice.kind = name_of(picked.kind);
  choice.calibration = std::move(picked.calibration);
  choice.band = std::move(picked.band);
  choice.note = std::move(picked.note);
  return choice;
}

nlohmann::json calibration_block(const CalibrationChoice& choice) {
  nlohmann::json block = {
      {"flag", choice.flag}, {"kind", choice.kind}, {"gpu", choice.gpu}, {"band", choice.band}, {"note", choice.note}};
  if (!choice.calibration) {
    block["file"] = nullptr;
    block["from_gpu"] = nullptr;
    return block;
  }
  const Calibration& c = *choice.calibration;
  block["file"] = c.file;
  block["from_gpu"] = c.transfer ? nlohmann::json(c.transfer->from_gpu) : nlohmann::json(c.gpu_id);
  nlohmann::json provenance = nlohmann::json::array();
  for (const CalibrationSource& s : c.sources) {
    provenance.push_back(
        {{"file", s.file},
         {"started_utc", s.started_utc},
         {"provenance", s.provenance ? nlohmann::json(provenance_text(*s.provenance)) : nlohmann::json(not_recorded)}});
  }
  block["sources"] = std::move(provenance);
  if (c.transfer) {
    block["transfer"] = {{"points", c.transfer->points},
                         {"points_dropped", c.transfer->points_dropped},
                         {"collectives", c.transfer->collectives}};
  }
  return block;
}

std::optional<CalibrationChoice> apply_deployment_flags(const DeploymentFlags& flags, DeploymentConfig& config,
                                                        const GpuSpec& gpu, const HardwareRegistry& registry) {
  const auto non_negative = [](double v, std::string_view flag) {
    if (!(v >= 0) || !std::isfinite(v)) throw InputError(fmt::format("{} {}: must be a number >= 0", flag, v));
    return v;
  };
  config.reserve_bytes = non_negative(flags.reserve_gb, "--reserve-gb") * 1e9;
  config.workspace_bytes = non_negative(flags.workspace_gb, "--workspace-gb") * 1e9;
  config.scale_up_latency_s = non_negative(flags.scale_up_latency_us, "--scale-up-latency-us") * 1e-6;
  if (!(flags.scale_out_gbps > 0) || !std::isfinite(flags.scale_out_gbps)) {
    throw InputError(fmt::format("--scale-out-gbps {}: must be a positive number", flags.scale_out_gbps));
  }
  config.scale_out = {fmt::format("scale-out {:g} GB/s", flags.scale_out_gbps), flags.scale_out_gbps * 1e9,
                      non_negative(flags.scale_out_latency_us, "--scale-out-latency-us") * 1e-6};
  if (flags.scale_up_domain < 1) {
    throw InputError(fmt::format("--scale-up-domain {}: must be at least 1", flags.scale_up_domain));
  }
  config.scale_up_domain = flags.scale_up_domain;
  if (!flags.calibration) return std::nullopt;
  // Refused before resolving, so that bad input gets its one line and nothing else.
  if (flags.efficiency != DeploymentFlags{}.efficiency) {
    throw InputError("--efficiency and --calibration both set the expected time: give one of them");
  }
  CalibrationChoice choice = choose_calibration(*flags.calibration, gpu, registry);
  if (choice.calibration) {
    config.collectives = std::make_shared<const CollectiveTables>(choice.calibration->collectives);
    config.collectives_gpu = choice.calibration->gpu_id;
  }
  return choice;
}

std::string collectives_note(const DeploymentConfig& config, const GpuSpec& gpu, const std::string& file) {
  if (config.collectives_gpu != gpu.id) {
    return fmt::format("--calibration {} is for {}, not {}: its measured collectives are not used (ring model)", file,
                       config.collectives_gpu, gpu.id);
  }
  if (config.collectives->empty()) return fmt::format("--calibration {} holds no measured collectives", file);
  std::vector<std::string> tables;
  for (const CollectiveTable& t : config.collectives->tables)
    tables.push_back(fmt::format("{} x{}", name_of(t.op), t.ranks));
  return fmt::format(
      "TP all-reduces, the logits all-gather and PP transfers within the scale-up domain are charged from the measured "
      "collectives of {} ({}) where they cover the op and GPU count, the ring model elsewhere",
      file, fmt::join(tables, ", "));
}

nlohmann::json deployment_flags_json(const DeploymentFlags& flags) {
  return {{"reserve_gb", flags.reserve_gb},
          {"workspace_gb", flags.workspace_gb},
          {"scale_up_latency_us", flags.scale_up_latency_us},
          {"scale_out_gbps", flags.scale_out_gbps},
          {"scale_out_latency_us", flags.scale_out_latency_us},
          {"scale_up_domain", flags.scale_up_domain},
          {"efficiency", flags.efficiency},
          {"calibration", flags.calibration ? nlohmann::json(*flags.calibration) : nullptr}};
}

void apply_time_flags(const DeploymentFlags& flags, const std::optional<Calibration>& calibration, TimeOptions& time) {
  time.efficiency = parse_efficiency(flags.efficiency, "--efficiency");
  if (!flags.calibration) return;
  if (flags.efficiency != DeploymentFlags{}.efficiency) {
    throw InputError("--efficiency and --calibration both set the expected time: give one of them");
  }
  if (calibration) time.calibration = &*calibration;
}

std::string calibration_note(const CalibrationChoice& choice) {
  if (!choice.calibration) return choice.note;
  return fmt::format(
      "expected times calibrated with {} ({}); error band: {}: each op's roofline time divided by the efficiency the "
      "best measured implementation of its table reached at that size (interpolated in log(size), clamped at the "
      "ends or, where a table says so, carried past a series' own sizes by its neighbours' trend, and no faster than "
      "its fastest measured problem where it keeps that floor), the lookup of op --calibration; ops no table covers "
      "keep the roofline (see each op's calibration note)",
      choice.calibration->file, choice.note, choice.band);
}

}  // namespace roofline::cli
