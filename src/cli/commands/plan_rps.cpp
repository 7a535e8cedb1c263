// plan --rps: the cheapest deployment that serves a request rate within its latency targets,
// ranked by the closed form and then by serve's engine (roofline/llm/plan.hpp,
// roofline/serve/plan_simulation.hpp).
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "commands.hpp"
#include "plan_inputs.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"
#include "roofline/llm/plan.hpp"
#include "roofline/plot/report_figures.hpp"
#include "roofline/serve/plan_simulation.hpp"

namespace roofline::cli::plan_detail {
namespace {

struct RankedRow {
  std::int64_t rank = 0;
  PlanCandidate c;
};

constexpr std::array<ColumnOf<RankedRow>, 19> ranked_columns{{
    {{"rank", "#", 0}, [](const RankedRow& r) { return Cell{r.rank}; }},
    {{"gpu", "GPU", 0}, [](const RankedRow& r) { return Cell{r.c.gpu}; }},
    {{"tp", "TP", 0}, [](const RankedRow& r) { return Cell{std::int64_t{r.c.tp}}; }},
    {{"pp", "PP", 0}, [](const RankedRow& r) { return Cell{std::int64_t{r.c.pp}}; }},
    {{"ep", "EP", 0}, [](const RankedRow& r) { return Cell{std::int64_t{r.c.ep}}; }},
    {{"attention_dp", "attn DP", 0}, [](const RankedRow& r) { return Cell{r.c.attention_dp}; }},
    {{"weights", "weights", 0}, [](const RankedRow& r) { return Cell{std::string(name_of(r.c.weights))}; }},
    {{"kv", "KV", 0}, [](const RankedRow& r) { return Cell{std::string(name_of(r.c.kv))}; }},
    {{"draft_tokens", "spec K", 0}, [](const RankedRow& r) { return Cell{std::int64_t{r.c.draft_tokens}}; }},
    {{"batch", "batch", 0}, [](const RankedRow& r) { return Cell{r.c.batch}; }},
    {{"max_batch", "max batch", 0}, [](const RankedRow& r) { return Cell{r.c.max_batch}; }},
    {{"replicas", "replicas", 0}, [](const RankedRow& r) { return Cell{r.c.replicas}; }},
    {{"gpus_total", "GPUs", 0}, [](const RankedRow& r) { return Cell{r.c.gpus_total}; }},
    {{"tpot_ms", "TPOT [ms]", 2}, [](const RankedRow& r) { return Cell{r.c.tpot_s * 1e3}; }},
    {{"ttft_ms", "TTFT [ms]", 1}, [](const RankedRow& r) { return Cell{r.c.ttft_s * 1e3}; }},
    {{"utilization", "load", 2}, [](const RankedRow& r) { return Cell{r.c.utilization}; }},
    {{"usd_per_hour", "$/hour", 2}, [](const RankedRow& r) { return Cell{r.c.usd_per_hour}; }},
    {{"usd_per_million_output_tokens", "$/M tokens", 3},
     [](const RankedRow& r) { return Cell{r.c.usd_per_million_output_tokens}; }},
    {{"bottleneck", "decode bottleneck", 0}, [](const RankedRow& r) { return Cell{r.c.bottleneck}; }},
}};

struct SimulatedRow {
  std::int64_t rank = 0;
  const SimulatedCandidate* s = nullptr;
};

constexpr std::array<ColumnOf<SimulatedRow>, 17> simulated_columns{{
    {{"rank", "#", 0}, [](const SimulatedRow& r) { return Cell{r.rank}; }},
    {{"gpu", "GPU", 0}, [](const SimulatedRow& r) { return Cell{r.s->candidate.gpu}; }},
    {{"tp", "TP", 0}, [](const SimulatedRow& r) { return Cell{std::int64_t{r.s->candidate.tp}}; }},
    {{"pp", "PP", 0}, [](const SimulatedRow& r) { return Cell{std::int64_t{r.s->candidate.pp}}; }},
    {{"ep", "EP", 0}, [](const SimulatedRow& r) { return Cell{std::int64_t{r.s->candidate.ep}}; }},
    {{"attention_dp", "attn DP", 0}, [](const SimulatedRow& r) { return Cell{r.s->candidate.attention_dp}; }},
    {{"weights", "weights", 0},
     [](const SimulatedRow& r) { return Cell{std::string(name_of(r.s->candidate.weights))}; }},
    {{"kv", "KV", 0}, [](const SimulatedRow& r) { return Cell{std::string(name_of(r.s->candidate.kv))}; }},
    {{"draft_tokens", "spec K", 0},
     [](const SimulatedRow& r) { return Cell{std::int64_t{r.s->candidate.draft_tokens}}; }},
    {{"replicas", "replicas", 0}, [](const SimulatedRow& r) { return Cell{r.s->candidate.replicas}; }},
    {{"usd_per_million_output_tokens", "$/M tokens", 3},
     [](const SimulatedRow& r) { return Cell{r.s->candidate.usd_per_million_output_tokens}; }},
    {{"ttft_ms", "TTFT [ms]", 1}, [](const SimulatedRow& r) { return Cell{r.s->ttft_s * 1e3}; }},
    {{"tpot_ms", "TPOT [ms]", 2}, [](const SimulatedRow& r) { return Cell{r.s->tpot_s * 1e3}; }},
    {{"output_tokens_per_s_per_replica", "tok/s per replica", 0},
     [](const SimulatedRow& r) { return Cell{r.s->output_tokens_per_s}; }},
    {{"preemptions", "preemptions", 0}, [](const SimulatedRow& r) { return Cell{r.s->preemptions}; }},
    {{"meets", "meets", 0}, [](const SimulatedRow& r) { return Cell{std::string(r.s->meets ? "yes" : "no")}; }},
    {{"missed", "missed", 0}, [](const SimulatedRow& r) { return Cell{r.s->reason}; }},
}};

nlohmann::json latency_json(const LatencyStats& s) {
  return {
      {"mean", s.mean * 1e3}, {"p50", s.p50 * 1e3}, {"p90", s.p90 * 1e3}, {"p99", s.p99 * 1e3}, {"max", s.max * 1e3}};
}

// `calibrated`: the times are calibrated, so the roofline's are added beside them.
nlohmann::json candidate_json(const PlanCandidate& c, bool calibrated) {
  nlohmann::json j = {{"gpu", c.gpu},
                      {"tp", c.tp},
                      {"pp", c.pp},
                      {"ep", c.ep},
                      {"attention_dp", c.attention_dp},
                      {"weights", name_of(c.weights)},
                      {"kv", name_of(c.kv)},
                      {"draft_tokens", c.draft_tokens},
                      {"max_batch", c.max_batch},
                      {"weights_per_gpu_bytes", c.weight_bytes_per_gpu},
                      {"kv_per_request_per_gpu_bytes", c.kv_bytes_per_request_per_gpu}};
  if (c.rejection != Rejection::none) {
    j["reason_kind"] = name_of(c.rejection);
    j["reason"] = c.reason;
    j["ttft_ms"] = c.ttft_s > 0 ? nlohmann::json(c.ttft_s * 1e3) : nullptr;
    if (calibrated && c.ttft_s > 0) j["ttft_roofline_ms"] = c.ttft_roofline_s * 1e3;
    return j;
  }
  j["batch"] = c.batch;
  j["replicas"] = c.replicas;
  j["gpus_total"] = c.gpus_total;
  j["ttft_ms"] = c.ttft_s * 1e3;
  j["decode_step_ms"] = c.step_s * 1e3;
  j["tokens_per_step"] = c.tokens_per_step;
  j["tpot_ms"] = c.tpot_s * 1e3;
  j["requests_per_s_per_replica"] = c.requests_per_s_per_replica;
  j["utilization"] = c.utilization;
  j["usd_per_hour"] = c.usd_per_hour;
  j["usd_per_million_output_tokens"] = c.usd_per_million_output_tokens;
  j["bottleneck"] = c.bottleneck;
  if (calibrated) {
    j["ttft_roofline_ms"] = c.ttft_roofline_s * 1e3;
    j["decode_step_roofline_ms"] = c.step_roofline_s * 1e3;
    j["tpot_roofline_ms"] = c.tpot_roofline_s * 1e3;
  }
  return j;
}

// A simulated candidate: the closed form's figures and, under "simulated", the engine's.
nlohmann::json simulated_json(const SimulatedCandidate& s, bool calibrated, double percentile) {
  nlohmann::json j = candidate_json(s.candidate, calibrated);
  j["simulated"] = {{"percentile", percentile},
                    {"ttft_ms", s.ttft_s * 1e3},
                    {"tpot_ms", s.tpot_s * 1e3},
                    {"ttft_ms_stats", latency_json(s.ttft)},
                    {"tpot_ms_stats", latency_json(s.tpot)},
                    {"output_tokens_per_s_per_replica", s.output_tokens_per_s},
                    {"preemptions", s.preemptions},
                    {"meets", s.meets},
                    {"missed", s.reason}};
  return j;
}

// "h200-sxm TP 8 PP 1 EP 8 fp8_e4m3/fp8_e4m3 speculate 3 x 2 replica(s)".
std::string candidate_text(const PlanCandidate& c) {
  return fmt::format("{} TP {} PP {}{}{} {}/{}{} x {} replica(s)", c.gpu, c.tp, c.pp,
                     c.ep > 1 ? fmt::format(" EP {}", c.ep) : std::string(), c.attention_dp ? " attention-DP" : "",
                     name_of(c.weights), name_of(c.kv),
                     c.draft_tokens > 0 ? fmt::format(" speculate {}", c.draft_tokens) : std::string(), c.replicas);
}

// plan --rps with --speculate: which kind was chosen, and against the best of the other kind, why.
// The simulation (when it ranks) goes on until one of each kind meets the targets where both were
// feasible (simulate_candidates), so the comparison is between simulated deployments.
void add_speculation_choice(Report& report, const PlanSpace& space, const PlanResult& result,
                            const std::optional<PlanSimulation>& simulation, bool calibrated,
                            const PlanOptions& options) {
  const auto speculates = [](const PlanCandidate& c) { return c.draft_tokens > 0; };
  const PlanCandidate& chosen = simulation ? simulation->meeting.front().candidate : result.ranked.front();
  const bool chose_speculation = speculates(chosen);
  const auto figures = [&](const PlanCandidate& c, const SimulatedCandidate* s) {
    return fmt::format(
        "{}: ${:.3f} per million output tokens on {} GPUs, {} TPOT {:.2f} ms{}", candidate_text(c),
        c.usd_per_million_output_tokens, c.gpus_total,
        s ? fmt::format("p{:g}", options.percentile) : std::string("closed-form"), (s ? s->tpot_s : c.tpot_s) * 1e3,
        c.draft_tokens > 0 ? fmt::format(" ({:.2f} tokens per verify step)", c.tokens_per_step) : std::string());
  };
  // The best of the other kind: the cheapest that met the targets (simulated), or the closed form's.
  const PlanCandidate* other = nullptr;
  const SimulatedCandidate* other_simulated = nullptr;
  std::string other_missed;
  if (simulation) {
    for (const SimulatedCandidate& c : simulation->meeting) {
      if (speculates(c.candidate) != chose_speculation) {
        other = &c.candidate;
        other_simulated = &c;
        break;
      }
    }
    if (other == nullptr) {
      for (const SimulatedCandidate& c : simulation->missing) {
        if (speculates(c.candidate) != chose_speculation) {
          other_missed = fmt::format("the cheapest simulated, {}, missed: {}", candidate_text(c.candidate), c.reason);
          break;
        }
      }
    }
  } else {
    for (const PlanCandidate& c : result.ranked) {
      if (speculates(c) != chose_speculation) {
        other = &c;
        break;
      }
    }
  }
  const SimulatedCandidate* chosen_simulated = simulation ? &simulation->meeting.front() : nullptr;
  const std::string kind = chose_speculation ? "with speculation" : "without speculation";
  const std::string other_kind = chose_speculation ? "without speculation" : "with speculation";
  std::string why;
  if (other != nullptr) {
    // The ranking's order: cost, then GPUs, then the closed form's TPOT.
    const std::string verdict =
        other->usd_per_million_output_tokens > chosen.usd_per_million_output_tokens ? "costs more"
        : other->gpus_total > chosen.gpus_total
            ? "costs as much on more GPUs"
            : fmt::format(
                  "costs as much on as many GPUs, and the tie goes to the lower closed-form TPOT ({:.2f} "
                  "against {:.2f} ms)",
                  chosen.tpot_s * 1e3, other->tpot_s * 1e3);
    why = fmt::format("chosen {}: {}; the best {}, {}, {}", kind, figures(chosen, chosen_simulated), other_kind,
                      figures(*other, other_simulated), verdict);
  } else if (!other_missed.empty()) {
    why = fmt::format("chosen {}: {}; none {} met the targets ({})", kind, figures(chosen, chosen_simulated),
                      other_kind, other_missed);
  } else {
    why = fmt::format("chosen {}: {}; none {} was {}", kind, figures(chosen, chosen_simulated), other_kind,
                      simulation ? "simulated (--sim-candidates ran out) or feasible in the closed form"
                                 : "feasible in the closed form");
  }
  std::vector<int> draft_counts;
  for (const Speculation& s : space.speculation) draft_counts.push_back(s.draft_tokens);
  report.extra_results["speculation"] = {
      {"searched", speculation_list_json(space.speculation)},
      {"chosen_draft_tokens", chosen.draft_tokens},
      {"why", why},
      {"best_other", other == nullptr
                         ? nlohmann::json(nullptr)
                         : (other_simulated ? simulated_json(*other_simulated, calibrated, options.percentile)
                                            : candidate_json(*other, calibrated))}};
  report.notes.push_back(fmt::format(
      "speculation: candidates without it and with each --speculate K ({}) were ranked together, a speculating one "
      "timed by its verify cycle (verify step of K + 1 tokens per request + K draft passes) over the expected tokens "
      "per verify step, its drafter in memory{}; {}",
      fmt::join(draft_counts, ","), simulation ? ", and simulated as serve --speculate runs it" : "", why));
}

// --- disagg (issue 18): plan --rps --disaggregate: the best aggregated and the best disaggregated
// deployment, and which one is chosen (roofline/serve/plan_simulation.hpp).
nlohmann::json disaggregated_json(const DisaggregatedCandidate& d, double percentile) {
  return {{"gpu", d.replica.gpu},
          {"tp", d.replica.tp},
          {"pp", d.replica.pp},
          {"ep", d.replica.ep},
          {"attention_dp", d.replica.attention_dp},
          {"weights", name_of(d.replica.weights)},
          {"kv", name_of(d.replica.kv)},
          {"draft_tokens", d.replica.draft_tokens},
          {"prefill_replicas", d.prefill_replicas},
          {"decode_replicas", d.decode_replicas},
          {"gpus_total", d.gpus_total},
          {"usd_per_hour", d.usd_per_hour},
          {"usd_per_million_output_tokens", d.usd_per_million_output_tokens},
          {"percentile", percentile},
          {"ttft_ms", d.ttft_s * 1e3},
          {"tpot_ms", d.tpot_s * 1e3},
          {"ttft", latency_json(d.ttft)},
          {"tpot", latency_json(d.tpot)},
          {"transfer", latency_json(d.transfer)},
          {"output_tokens_per_s", d.output_tokens_per_s},
          {"prefill_utilisation", d.prefill_utilisation},
          {"decode_utilisation", d.decode_utilisation},
          {"simulations", d.simulations},
          {"meets", d.meets},
          {"reason", d.reason}};
}

struct DisaggregatedRow {
  DisaggregatedCandidate d;
};

constexpr std::array<ColumnOf<DisaggregatedRow>, 10> disaggregated_columns{{
    {{"gpu", "GPU", 0}, [](const DisaggregatedRow& r) { return Cell{r.d.replica.gpu}; }},
    {{"replica", "replica TP/PP", 0},
     [](const DisaggregatedRow& r) {
       const PlanCandidate& c = r.d.replica;
       return Cell{fmt::format("{}/{}{}{}", c.tp, c.pp, c.ep > 1 ? fmt::format(" EP {}", c.ep) : std::string(),
                               c.attention_dp ? " attn DP" : "")};
     }},
    {{"prefill_replicas", "prefill", 0}, [](const DisaggregatedRow& r) { return Cell{r.d.prefill_replicas}; }},
    {{"decode_replicas", "decode", 0}, [](const DisaggregatedRow& r) { return Cell{r.d.decode_replicas}; }},
    {{"gpus_total", "GPUs", 0}, [](const DisaggregatedRow& r) { return Cell{r.d.gpus_total}; }},
    {{"ttft_ms", "TTFT [ms]", 1}, [](const DisaggregatedRow& r) { return Cell{r.d.ttft_s * 1e3}; }},
    {{"tpot_ms", "TPOT [ms]", 2}, [](const DisaggregatedRow& r) { return Cell{r.d.tpot_s * 1e3}; }},
    {{"usd_per_million_output_tokens", "$/M tokens", 3},
     [](const DisaggregatedRow& r) { return Cell{r.d.usd_per_million_output_tokens}; }},
    {{"meets", "meets", 0}, [](const DisaggregatedRow& r) { return Cell{std::string(r.d.meets ? "yes" : "no")}; }},
    {{"reason", "missed", 0}, [](const DisaggregatedRow& r) { return Cell{r.d.reason}; }},
}};

void add_disaggregation(Report& report, const PlanOptions& options, const ModelSpec& model, const Workload& workload,
                        const PlanSpace& space, const PlanResult& result, const SimulatedCandidate& aggregated) {
  PlanSimulationOptions sim;
  sim.requests = options.sim_requests;
  sim.percentile = options.percentile;
  const std::vector<DisaggregatedCandidate> found =
      simulate_disaggregated_candidates(model, workload, space, result, sim);
  const DisaggregatedCandidate* best = nullptr;
  for (const DisaggregatedCandidate& d : found) {
    if (!d.meets) continue;
    if (!best || d.usd_per_hour < best->usd_per_hour - 1e-9 ||
        (std::abs(d.usd_per_hour - best->usd_per_hour) <= 1e-9 && d.gpus_total < best->gpus_total)) {
      best = &d;
    }
  }
  const PlanCandidate& a = aggregated.candidate;
  // Cost first (the prices), then GPUs; a tie keeps the aggregated deployment (one engine type).
  const bool disaggregate =
      best && (best->usd_per_hour < a.usd_per_hour - 1e-9 ||
               (std::abs(best->usd_per_hour - a.usd_per_hour) <= 1e-9 && best->gpus_total < a.gpus_total));
  const std::string aggregated_text = fmt::format("aggregated {} x {} (TP {}, PP {}, {} replica(s)) at ${:.2f}/hour",
                                                  a.gpus_total, a.gpu, a.tp, a.pp, a.replicas, a.usd_per_hour);
  std::string why;
  if (!best) {
    why = fmt::format("{}: no disaggregated deployment met p{:g} TTFT and TPOT within 64 replicas per pool",
                      aggregated_text, options.percentile);
  } else {
    const std::string disaggregated_text = fmt::format(
        "disaggregated {} x {} ({} prefill + {} decode replicas of TP {}, PP {}) at ${:.2f}/hour, p{:g} TTFT {:.1f} "
        "ms, TPOT {:.2f} ms, prefill pool {:.0f}% busy, decode pool {:.0f}%",
        best->gpus_total, best->replica.gpu, best->prefill_replicas, best->decode_replicas, best->replica.tp,
        best->replica.pp, best->usd_per_hour, options.percentile, best->ttft_s * 1e3, best->tpot_s * 1e3,
        100 * best->prefill_utilisation, 100 * best->decode_utilisation);
    why = disaggregate ? fmt::format("{} costs less than {}", disaggregated_text, aggregated_text)
                       : fmt::format("{} costs no less than {}", disaggregated_text, aggregated_text);
  }
  nlohmann::json all = nlohmann::json::array();
  std::vector<DisaggregatedRow> rows;
  for (const DisaggregatedCandidate& d : found) {
    all.push_back(disaggregated_json(d, options.percentile));
    rows.push_back({d});
  }
  report.extra_results["disaggregation"] = {
      {"chosen", disaggregate ? "disaggregated" : "aggregated"},
      {"why", why},
      {"aggregated", simulated_json(aggregated, !space.calibration_by_gpu.empty(), options.percentile)},
      {"disaggregated", best ? disaggregated_json(*best, options.percentile) : nlohmann::json(nullptr)},
      {"per_gpu", all}};
  report.tables.push_back(Table::from_rows<DisaggregatedRow>(
      "disaggregated",
      fmt::format("Disaggregated prefill/decode per GPU: the cheapest feasible replica in both pools, the fewest "
                  "prefill and decode replicas meeting p{:g} TTFT and TPOT",
                  options.percentile),
      disaggregated_columns, rows));
  report.notes.push_back(fmt::format(
      "--disaggregate: for each GPU the cheapest feasible candidate is the replica of a prefill and a decode pool; "
      "the whole load (Poisson at --rps, {} requests) runs through Np prefill and Nd decode replicas from 1 and 1, "
      "raising Np while TTFT misses and Nd while TPOT misses (serve --disaggregate's model: docs/serve.md section 7, "
      "KV over each prefill GPU's scale-out NIC); chosen: {} ({})",
      options.sim_requests, disaggregate ? "disaggregated" : "aggregated", why));
}
// --- end disagg

}  // namespace

Report rps_report(const PlanOptions& options, const HardwareRegistry& registry) {
  PlanInputs inputs = read_plan_inputs(options, registry, /*prices_required=*/true);
  const ModelSpec& model = inputs.model;
  PlanSpace& space = inputs.space;
  space.max_batch = options.max_batch;
  const std::vector<CalibrationChoice>& choices = inputs.choices;
  const std::optional<Calibration>& calibration = inputs.calibration();
  const bool calibrated = inputs.calibrated();
  const CheckpointNotes& checkpoint = inputs.checkpoint;
  const std::string& speculation_note = inputs.speculation_note;
  if (options.top < 0) throw InputError(fmt::format("--top {}: must be >= 0", options.top));
  if (!(options.tpot_ms > 0) || !(options.ttft_ms > 0)) {
    throw InputError("--tpot-ms and --ttft-ms: must be positive numbers of milliseconds");
  }
  const Workload workload{options.rps, options.prompt, options.output, options.tpot_ms / 1e3, options.ttft_ms / 1e3};

  if (options.sim_candidates < 1) {
    throw InputError(fmt::format("--sim-candidates {}: must be at least 1", options.sim_candidates));
  }
  const auto wanted = static_cast<std::size_t>(options.top) + 1;
  // Kept: what is reported, or simulated (memory bounded by that, not by the search).
  space.keep_ranked = std::max(wanted, static_cast<std::size_t>(options.sim_candidates));
  const PlanResult result = plan_deployment(model, workload, space);

  const std::vector<RejectionCount>& reasons = result.rejections;
  if (result.ranked.empty()) {
    std::vector<std::string> parts;
    for (const RejectionCount& r : reasons) parts.push_back(fmt::format("{} {}", r.count, r.reason));
    std::string example;
    std::int64_t most = 0;
    for (const RejectionCount& r : reasons) {
      if (r.count > most) {
        most = r.count;
        example = r.example;
      }
    }
    throw InputError(
        fmt::format("{}: no configuration fits and meets the targets ({} candidates rejected: {}); e.g. {}", model.id,
                    result.rejected_total, fmt::join(parts, ", "), example));
  }

  std::optional<PlanSimulation> simulation;
  if (!options.closed_form) {
    PlanSimulationOptions sim;
    sim.requests = options.sim_requests;
    sim.percentile = options.percentile;
    sim.wanted = wanted;
    sim.most = static_cast<std::size_t>(options.sim_candidates);
    simulation = simulate_candidates(model, workload, space, result, sim);
    if (simulation->meeting.empty()) {
      const SimulatedCandidate& first = simulation->missing.front();
      throw InputError(fmt::format(
          "{}: none of the {} cheapest feasible candidates meets p{:g} TTFT <= {:g} ms and TPOT <= {:g} ms when "
          "simulated at its share of --rps; the cheapest, {} TP {} PP {} {}/{} x {} replica(s): {} (--closed-form "
          "ranks by the closed form alone)",
          model.id, simulation->simulated, options.percentile, options.ttft_ms, options.tpot_ms, first.candidate.gpu,
          first.candidate.tp, first.candidate.pp, name_of(first.candidate.weights), name_of(first.candidate.kv),
          first.candidate.replicas, first.reason));
    }
  }
  // The ranking reported: those that meet the targets in simulation, or the closed form's.
  std::vector<PlanCandidate> order;
  if (simulation) {
    for (const SimulatedCandidate& c : simulation->meeting) order.push_back(c.candidate);
  } else {
    for (std::size_t i = 0; i < std::min(wanted, result.ranked.size()); ++i) order.push_back(result.ranked[i]);
  }
  const auto ranked_json = [&](std::size_t i) {
    return simulation ? simulated_json(simulation->meeting[i], calibrated, options.percentile)
                      : candidate_json(result.ranked[i], calibrated);
  };

  Report report;
  report.kind = "plan";
  nlohmann::json search = space_json(space);
  search["max_batch"] = space.max_batch;
  report.inputs = {{"model", model_summary(model)},
                   {"gpus", gpu_ids_json(space.gpus)},
                   {"workload",
                    {{"rps", options.rps},
                     {"prompt", options.prompt},
                     {"output", options.output},
                     {"tpot_ms", options.tpot_ms},
                     {"ttft_ms", options.ttft_ms}}},
                   {"usd_per_gpu_hour", space.usd_per_gpu_hour},
                   {"search", search},
                   {"ranking",
                    {{"simulated", simulation.has_value()},
                     {"percentile", options.percentile},
                     {"requests_per_candidate", options.sim_requests},
                     {"most_candidates", options.sim_candidates}}},
                   {"deployment", deployment_flags_json(options.deployment)},
                   {"top", options.top},
                   {"set", options.what_if}};
  add_hardware_origins(report, space.gpus);

  std::vector<RankedRow> ranked;
  const std::size_t shown = std::min(order.size(), wanted);
  for (std::size_t i = 0; i < shown; ++i) ranked.push_back({static_cast<std::int64_t>(i + 1), order[i]});
  report.tables.push_back(Table::from_rows<RankedRow>(
      "ranked",
      fmt::format("{} at {:g} requests/s ({} prompt + {} output tokens), TPOT <= {:g} ms, TTFT <= {:g} ms{}: cheapest "
                  "first",
                  model.id, options.rps, options.prompt, options.output, options.tpot_ms, options.ttft_ms,
                  simulation ? fmt::format(" (p{:g}, simulated)", options.percentile) : std::string(" (closed form)")),
      ranked_columns, ranked));
  if (simulation) {
    std::vector<SimulatedRow> rows;
    for (const auto* list : {&simulation->meeting, &simulation->missing}) {
      for (const SimulatedCandidate& c : *list) rows.push_back({static_cast<std::int64_t>(rows.size() + 1), &c});
    }
    report.tables.push_back(Table::from_rows<SimulatedRow>(
        "simulated",
        fmt::format("The {} cheapest feasible candidates simulated ({} requests each, Poisson at --rps / replicas): "
                    "p{:g} TTFT and TPOT against the targets; those that meet them first, cheapest first",
                    simulation->simulated, options.sim_requests, options.percentile),
        simulated_columns, rows));
  }
  report.tables.push_back(Table::from_rows<RejectionCount>(
      "rejection_summary",
      fmt::format("{} of {} configurations rejected", result.rejected_total, result.configurations), reason_columns,
      reasons));

  nlohmann::json runners_up = nlohmann::json::array();
  for (std::size_t i = 1; i < shown; ++i) runners_up.push_back(ranked_json(i));
  nlohmann::json rejected = nlohmann::json::array();
  for (const PlanCandidate& c : result.rejected) rejected.push_back(candidate_json(c, calibrated));
  report.extra_results = {{"chosen", ranked_json(0)},
                          {"runners_up", runners_up},
                          {"rejected", rejected},
                          {"counts",
                           {{"configurations", result.configurations},
                            {"feasible", result.feasible},
                            {"rejected", result.rejected_total},
                            {"rejected_listed", result.rejected.size()},
                            {"decode_evaluations", result.decode_evaluations}}}};
  if (simulation) {
    nlohmann::json missed = nlohmann::json::array();
    for (const SimulatedCandidate& c : simulation->missing) {
      missed.push_back(simulated_json(c, calibrated, options.percentile));
    }
    report.extra_results["simulation"] = {{"percentile", options.percentile},
                                          {"requests_per_candidate", options.sim_requests},
                                          {"simulated", simulation->simulated},
                                          {"meeting", simulation->meeting.size()},
                                          {"stopped_at_most", simulation->stopped_at_most},
                                          {"missed", missed}};
  }
  if (!choices.empty()) report.extra_results["calibration"] = calibrations_json(choices);

  const PlanCandidate& best = order.front();
  report.notes.push_back(fmt::format(
      "chosen: {} x {} (TP {}, PP {}, {} replica(s)), {} weights, {} KV cache, batch {}: ${:.3f} per million output "
      "tokens at ${:.2f}/hour",
      best.gpus_total, best.gpu, best.tp, best.pp, best.replicas, name_of(best.weights), name_of(best.kv), best.batch,
      best.usd_per_million_output_tokens, best.usd_per_hour));
  report.notes.push_back(
      "closed form (it prunes, and sizes the replicas): a replica at batch B serves B / (output x step + B x TTFT) "
      "requests/s; TPOT = step + B x TTFT / output (the prefills interleaved with decode); the step is timed at the "
      "last token (prompt + output cached); queueing is not modelled");
  if (simulation) {
    report.notes.push_back(fmt::format(
        "ranked by simulation: the feasible candidates in the closed form's order of cost, each one replica under "
        "Poisson arrivals at --rps / replicas ({} requests, seed 0) through serve's engine (defaults of docs/serve.md, "
        "--max-batch capped at the search's), until {} meet p{:g} TTFT and TPOT{}; {} of {} simulated met them",
        options.sim_requests, wanted, options.percentile,
        simulation->stopped_at_most ? fmt::format(" (stopped at --sim-candidates {})", options.sim_candidates) : "",
        simulation->meeting.size(), simulation->simulated));
  }
  if (result.rejected.size() < static_cast<std::size_t>(result.rejected_total)) {
    report.notes.push_back(
        fmt::format("the JSON lists the first {} of the {} rejected candidates; the summary counts "
                    "them all",
                    result.rejected.size(), result.rejected_total));
  }
  report.notes.push_back("prices are the --price flags (USD per GPU-hour); roofline ships none");
  checkpoint.add_to(report);
  if (!speculation_note.empty()) report.notes.push_back(speculation_note);
  if (space.base.collectives && space.calibration_by_gpu.empty()) {
    report.notes.push_back(fmt::format(
        "--calibration {}: candidates on {} charge TP/PP communication from its measured collectives where they cover "
        "the op and GPU count; other GPUs and group sizes use the ring model",
        *options.deployment.calibration, space.base.collectives_gpu));
  }
  for (const CalibrationChoice& choice : choices) report.notes.push_back(calibration_note(choice));
  if (calibrated) {
    std::vector<std::string> others;
    std::string calibrated_gpus;
    for (const GpuSpec& gpu : space.gpus) {
      const bool covered = space.calibration_by_gpu.empty() ? calibration && gpu.id == calibration->gpu_id
                                                            : space.calibration_by_gpu.contains(gpu.id);
      if (covered) {
        calibrated_gpus += calibrated_gpus.empty() ? gpu.id : ", " + gpu.id;
      } else {
        others.push_back(gpu.id);
      }
    }
    report.notes.push_back(
        others.empty()
            ? fmt::format("candidates are timed and ranked with calibrated times; the JSON keeps the roofline times "
                          "beside them (*_roofline_ms) and lists every rejected candidate; TPOT {:.2f} ms and TTFT "
                          "{:.1f} ms at the roofline for the "
                          "chosen one",
                          best.tpot_roofline_s * 1e3, best.ttft_roofline_s * 1e3)
            : fmt::format("calibrated: {}; {} keep roofline times, which measured kernels do not reach, so the "
                          "ranking favours them over the calibrated ones; the JSON lists every rejected candidate",
                          calibrated_gpus, fmt::join(others, ", ")));
  } else {
    report.notes.push_back("times are roofline bounds (see roofline llm); the JSON lists every rejected candidate");
  }
  if (!space.speculation.empty()) add_speculation_choice(report, space, result, simulation, calibrated, options);
  // --- disagg (issue 18)
  if (options.disaggregate) {
    if (!simulation) throw InputError("--disaggregate: needs the simulated ranking (leave out --closed-form)");
    add_disaggregation(report, options, model, workload, space, result, simulation->meeting.front());
  }
  // --- end disagg
  if (draws_figures(options.common)) report.figures = plot::plan_figures(report);
  return report;
}

}  // namespace roofline::cli::plan_detail
