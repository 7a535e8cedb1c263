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
  // ---- plan --pareto (roofline/llm/pareto.hpp): the front of tokens/s per GPU against tokens/s
  // per user over the swept deployments. --rps, --top, --max-batch and the simulation flags are
  // plan --rps's; --tpot-ms, --ttft-ms and --price are optional here (filters, and the cost column).
  bool pareto = false;
  std::string ep = "auto";  // a list, or auto: the divisors of the routed experts that divide TP
  bool no_attention_dp = false;
  std::string batches = "1,2,4,8,16,32,64,128,256,512,1024";
  std::string speculate;  // draft-token counts K tried beside no speculation; empty: none
  std::string acceptance;
  std::optional<std::string> draft_model;
  std::optional<std::string> svg;  // the front's chart, written beside the report
  // With --disaggregate: the prefill:decode replica ratios tried ("auto": the best whole ratio
  // around the balance of the pools' rates, each pool up to --max-pool-replicas), or P:D,P:D,...
  std::string pool_ratios = "auto";
  std::int64_t max_pool_replicas = 8;
  // ---- end plan --pareto
  // --- disagg (issue 18): also search disaggregated prefill/decode pools per GPU, and choose;
  // with --pareto, disaggregated points beside the aggregated ones.
  bool disaggregate = false;
  // --- end disagg
  DeploymentFlags deployment;
  std::vector<std::string> what_if;
  CommonOptions common;
};

[[nodiscard]] Report run_plan(const PlanOptions& options, const HardwareRegistry& registry);

}  // namespace roofline::cli
