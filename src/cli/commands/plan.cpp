// roofline plan: the cheapest deployment that serves a workload within its latency targets.
#include "plan.hpp"
// plan.cpp: the command, its flags and the check of which mode takes which; the modes are
// plan_rps.cpp and plan_pareto.cpp, the flags they read alike plan_inputs.cpp.

#include <fmt/format.h>

#include <array>

#include "commands.hpp"
#include "plan_inputs.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"
#include "roofline/plot/report_figures.hpp"
#include "roofline/report/output_file.hpp"

namespace roofline::cli {
namespace {

// Flags of one mode given in the other: refused rather than ignored.
void check_mode_flags(const CLI::App& command, const PlanOptions& options) {
  const bool pareto = options.pareto;
  static constexpr std::array<std::string_view, 4> required_by_rps{"--rps", "--tpot-ms", "--ttft-ms", "--price"};
  static constexpr std::array<std::string_view, 7> rps_only{
      "--rps", "--top", "--closed-form", "--percentile", "--sim-requests", "--sim-candidates", "--max-batch"};
  static constexpr std::array<std::string_view, 4> pareto_only{"--batches", "--svg", "--pool-ratios",
                                                               "--max-pool-replicas"};
  if (pareto) {
    for (std::string_view flag : rps_only) {
      if (command.count(std::string(flag)) > 0) {
        throw InputError(fmt::format("{}: not used by plan --pareto (it sweeps batches, not a request rate)", flag));
      }
    }
    // The options' 0 means "not given" to the sweep: an explicit 0 must not turn the filter off.
    if (command.count("--tpot-ms") > 0 && !(options.tpot_ms > 0))
      throw InputError("--tpot-ms: must be a positive number");
    if (command.count("--ttft-ms") > 0 && !(options.ttft_ms > 0))
      throw InputError("--ttft-ms: must be a positive number");
    if (!options.disaggregate) {
      for (std::string_view flag : {"--pool-ratios", "--max-pool-replicas"}) {
        if (command.count(std::string(flag)) > 0) {
          throw InputError(fmt::format("{}: sizes disaggregated pools; give --disaggregate", flag));
        }
      }
    }
    if (command.count("--max-pool-replicas") > 0 && to_lower(options.pool_ratios) != "auto") {
      throw InputError("--max-pool-replicas: bounds --pool-ratios auto; the ratios given set the pools");
    }
    return;
  }
  for (std::string_view flag : pareto_only) {
    if (command.count(std::string(flag)) > 0) throw InputError(fmt::format("{}: only with plan --pareto", flag));
  }
  for (std::string_view flag : required_by_rps) {
    if (command.count(std::string(flag)) == 0) {
      throw InputError(fmt::format("{} is required (or --pareto for the front of the deployments)", flag));
    }
  }
}

}  // namespace

Report run_plan(const PlanOptions& options, const HardwareRegistry& registry) {
  try {
    // plan --pareto
    if (options.pareto) return plan_detail::pareto_report(options, registry);
    return plan_detail::rps_report(options, registry);
  } catch (const std::bad_alloc&) {
    // The search keeps only what it reports; a failure here is a space too large for this machine.
    throw InputError(
        "plan: out of memory: the search is too large for this machine; narrow --gpus, --tp, --pp, --weights or "
        "--kv");
  }
}

void setup_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* command = app.add_subcommand(
      "plan", "Capacity planning: cheapest GPU x TP x PP x format x batch that meets the TPOT/TTFT targets");
  add_model_options(*command, options->model);
  add_context_limit_option(*command, options->model);  // --- models (issue 19)
  command->add_option("--gpus", options->gpus, "Candidate GPUs: a comma-separated list, or 'all'")->required();
  // --rps, --tpot-ms, --ttft-ms and --price are required without --pareto (check_mode_flags).
  command->add_option("--rps", options->rps, "Requests per second to serve (required without --pareto)");
  // Renamed from --prompt/--output, which clashed with -o/--output (docs/reports.md).
  add_renamed_option(*command, "--prompt-tokens", "--prompt", options->prompt, "Prompt tokens per request")->required();
  add_renamed_option(*command, "--output-tokens", "--output", options->output, "Output tokens per request")->required();
  command->add_option("--tpot-ms", options->tpot_ms,
                      "Target time per output token, ms (required without --pareto; with it, a filter)");
  command->add_option("--ttft-ms", options->ttft_ms,
                      "Target time to first token, ms (required without --pareto; with it, a filter)");
  command->add_option("--price", options->prices,
                      "USD per GPU-hour: GPU=PRICE, repeatable or comma-separated; all=PRICE for every other GPU. "
                      "Required without --pareto (with it, the cost column): no prices ship with roofline");
  command
      ->add_option("--weights", options->weights, "Weight formats to try (default: the checkpoint's, if it states one)")
      ->capture_default_str()
      ->each([options](const std::string&) { options->weights_given = true; });  // --- models (issue 19)
  command->add_option("--kv", options->kv, "KV-cache formats to try")->capture_default_str();
  command->add_option("--tp", options->tp, "Tensor-parallel degrees to try")->capture_default_str();
  command->add_option("--pp", options->pp, "Pipeline degrees to try")->capture_default_str();
  command->add_option("--max-batch", options->max_batch, "Largest batch per replica to try")->capture_default_str();
  command->add_option("--top", options->top, "Runners-up to list after the chosen configuration")
      ->capture_default_str();
  command->add_flag(
      "--closed-form", options->closed_form,
      "Rank by the closed form alone (no simulation: the targets apply to its one-prefill TTFT and its TPOT)");
  command
      ->add_option("--percentile", options->percentile,
                   "The percentile of the simulated TTFT and TPOT the targets apply to")
      ->capture_default_str();
  command->add_option("--sim-requests", options->sim_requests, "Requests simulated per candidate")
      ->capture_default_str();
  command
      ->add_option("--sim-candidates", options->sim_candidates,
                   "Simulate at most this many candidates (cheapest first; it stops once --top + 1 meet the targets)")
      ->capture_default_str();
  // ---- plan --pareto
  command
      ->add_flag("--pareto", options->pareto,
                 "Sweep the deployments and report the Pareto front of tokens/s per GPU against tokens/s per user")
      ->group("Pareto front");
  command
      ->add_option("--ep", options->ep,
                   "Expert-parallel degrees to search, or auto: every divisor of the routed experts that divides TP")
      ->capture_default_str();
  command->add_flag("--no-attention-dp", options->no_attention_dp,
                    "Do not search data-parallel attention (tried by default where EP = TP on a MoE model)");
  command->add_option("--batches", options->batches, "Concurrent requests per replica to sweep")
      ->capture_default_str()
      ->group("Pareto front");
  command
      ->add_option("--speculate", options->speculate,
                   "Draft tokens K to try beside no speculation (comma-separated; MTP unless --draft-model), or "
                   "none; default: a model's MTP layers at the acceptance its file states")
      ->group("Speculation");
  command
      ->add_option("--acceptance", options->acceptance,
                   "Acceptance of each draft given the ones before it: one rate, or one per position up to the "
                   "largest K")
      ->group("Speculation");
  command->add_option("--draft-model", options->draft_model, "A draft model run K decode steps (default: MTP)")
      ->group("Speculation");
  command->add_option("--svg", options->svg, "Write the front's chart (SVG) to this file")->group("Pareto front");
  command
      ->add_option("--pool-ratios", options->pool_ratios,
                   "With --disaggregate: prefill:decode replica ratios to try (P:D,P:D...), or auto: the best whole "
                   "ratio around the balance of the pools' rates")
      ->capture_default_str()
      ->group("Pareto front");
  command
      ->add_option("--max-pool-replicas", options->max_pool_replicas,
                   "With --disaggregate and --pool-ratios auto: the most replicas of either pool")
      ->capture_default_str()
      ->group("Pareto front");
  // ---- end plan --pareto
  // --- disagg (issue 18)
  command->add_flag("--disaggregate", options->disaggregate,
                    "Also search disaggregated prefill/decode pools per GPU (the prefill:decode replica ratio that "
                    "meets the targets) and choose between the best aggregated and the best disaggregated deployment; "
                    "with --pareto, disaggregated points beside the aggregated ones");
  // --- end disagg
  add_deployment_flags(*command, options->deployment);
  add_what_if_option(*command, options->what_if);
  add_common_options(*command, options->common, false);
  command->callback([options, command] {
    check_mode_flags(*command, *options);
    const Report report = run_plan(*options, load_registry(options->common));
    // Drawn before anything is written, so that a failure leaves no half of the output.
    const std::optional<std::string> svg =
        options->svg ? std::optional<std::string>(plot::render_pareto_svg(report)) : std::nullopt;
    emit(report, options->common);
    if (svg) write_file_atomically(*options->svg, *svg, "--svg");
  });
}

}  // namespace roofline::cli