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
#include "roofline/serve/engine.hpp"

namespace roofline::cli {

struct ServeOptions {
  ModelOptions model;
  // The model cut to its first N decoder layers (the embedding and head kept): a one-layer run
  // is what the layer suite measures, plus the head (docs/serve.md).
  std::optional<std::int64_t> layers;
  ParallelismFlags parallelism;
  FormatFlags formats;
  DeploymentFlags deployment;
  // The workload: fixed lengths or distributions, or a trace; how many; how they arrive.
  std::optional<std::int64_t> prompt;
  std::optional<std::int64_t> output;
  std::optional<std::string> prompt_dist;
  std::optional<std::string> output_dist;
  std::optional<std::string> trace;
  std::optional<std::int64_t> requests;
  std::optional<std::string> rate;  // inf or requests/s
  std::optional<std::int64_t> concurrency;
  std::uint64_t seed = 0;
  // The engine (EngineConfig's defaults).
  EngineConfig engine;
  bool no_chunked_prefill = false;
  std::string policy = "max-utilization";
  double kv_memory_fraction = 0.9;
  double step_overhead_us = 0;
  std::string fp8_kernels = "measured";     // or like-16-bit: fp8_tables_as_16_bit
  std::optional<double> fit_step_overhead;  // a measured output tokens/s to learn the overhead from
  std::optional<std::string> slo;           // ttft=MS,tpot=MS
  std::optional<std::string> requests_csv;
  std::optional<std::string> timeline_svg;
  std::vector<std::string> what_if;
  // --- issue 18: expert parallelism, attention DP and speculation (as llm takes them), and
  // disaggregated prefill/decode: two pools, each gpu=G,tp=T,pp=P,ep=E,attention-dp=on|off,count=N.
  ExpertFlags experts;
  SpeculationFlags speculation;
  bool disaggregate = false;
  std::optional<std::string> prefill_pool;
  std::optional<std::string> decode_pool;
  std::optional<double> kv_link_gbps;        // GB/s of one request's transfer; default: scale-out x prefill TP
  std::optional<double> kv_link_latency_us;  // default: the scale-out link's
  CommonOptions common;
};

[[nodiscard]] Report run_serve(const ServeOptions& options, const HardwareRegistry& registry);

}  // namespace roofline::cli
