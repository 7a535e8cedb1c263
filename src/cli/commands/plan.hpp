#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../common.hpp"
#include "../deployment_options.hpp"
#include "../model_options.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli {

struct PlanOptions {
  ModelOptions model;
  std::string gpus;  // a list, or "all"
  double rps = 0;
  std::int64_t prompt = 0;
  std::int64_t output = 0;
  double tpot_ms = 0;
  double ttft_ms = 0;
  std::vector<std::string> prices;  // GPU=USD_PER_HOUR, repeatable or comma-separated; all=X for the rest
  std::string weights = "bf16,fp8,int4_g128,nvfp4";
  bool weights_given = false;  // --weights on the command line (else the checkpoint's format, if any)
  std::string kv = "bf16,fp8";
  std::string tp = "1,2,4,8";
  std::string pp = "1,2,4";
  std::int64_t max_batch = 1024;
  int top = 5;
  // The ranking: the closed form's feasible candidates simulated by serve's engine at their share
  // of --rps (roofline/serve/plan_simulation.hpp), targets on this percentile; --closed-form ranks
  // by the closed form alone.
  bool closed_form = false;
  double percentile = 90;
  std::int64_t sim_requests = 1000;
  int sim_candidates = 64;
  // --- disagg (issue 18): also search disaggregated prefill/decode pools per GPU, and choose.
  bool disaggregate = false;
  // --- end disagg
  DeploymentFlags deployment;
  std::vector<std::string> what_if;
  CommonOptions common;
};

[[nodiscard]] Report run_plan(const PlanOptions& options, const HardwareRegistry& registry);

}  // namespace roofline::cli
