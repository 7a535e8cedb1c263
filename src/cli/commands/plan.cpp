// roofline plan: the cheapest deployment that serves a workload within its latency targets.
#include "plan.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "commands.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"
#include "roofline/llm/pareto.hpp"
#include "roofline/llm/plan.hpp"
#include "roofline/plot/report_figures.hpp"
#include "roofline/report/output_file.hpp"
#include "roofline/serve/plan_simulation.hpp"

namespace roofline::cli {
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

constexpr std::array<ColumnOf<RejectionCount>, 3> reason_columns{{
    {{"reason", "rejected for", 0}, [](const RejectionCount& r) { return Cell{r.reason}; }},
    {{"count", "candidates", 0}, [](const RejectionCount& r) { return Cell{r.count}; }},
    {{"example", "example", 0}, [](const RejectionCount& r) { return Cell{r.example}; }},
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

// Each of --tp and --pp lists at most this many degrees: the search is their product with the
// GPUs and formats, and no deployment has more distinct useful degrees.
constexpr std::size_t max_list_entries = 64;

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

int parse_degree(const std::string& text, std::string_view flag) {
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < 1) throw InputError(fmt::format("{}: '{}' is not a positive integer", flag, text));
  return value;
}

DType parse_format_flag(const std::string& text, std::string_view flag) {
  return parse_storage_dtype(text, flag);
}

// --speculate K,K,... with one --acceptance (a rate, or one per position up to the largest K: a
// smaller K takes the first K rates, the acceptance of a position not depending on how many follow).
// Without --speculate, a model whose checkpoint ships MTP layers is tried with K = its layers, at
// --acceptance or else at the rates its model file states with their source; a model that states
// none gets a note naming the flags. --speculate none tries no speculation. `note` says what was done.
std::vector<Speculation> parse_speculation(const PlanOptions& options, const ModelSpec& model, std::string& note) {
  if (to_lower(options.speculate) == "none") {
    if (!options.acceptance.empty() || options.draft_model) {
      throw InputError("--speculate none: leave out --acceptance and --draft-model");
    }
    return {};
  }
  if (options.speculate.empty()) {
    if (options.draft_model) throw InputError("--draft-model needs --speculate K[,K...]");
    if (!model.mtp) {
      if (!options.acceptance.empty()) throw InputError("--acceptance and --draft-model need --speculate K[,K...]");
      return {};
    }
    const int k = static_cast<int>(model.mtp->layers);
    if (!options.acceptance.empty()) {
      SpeculationFlags flags;
      flags.draft_tokens = k;
      flags.acceptance = options.acceptance;
      note = fmt::format(
          "speculation: {} ships {} MTP layer(s): tried with --speculate {} (MTP) at --acceptance {} beside none "
          "(--speculate none leaves it out)",
          model.id, k, k, options.acceptance);
      return {*resolve_speculation(flags, options.model.models_dirs)};
    }
    if (model.mtp->acceptance.empty()) {
      note = fmt::format(
          "speculation: {} ships {} MTP layer(s) but states no acceptance rate; --speculate {} --acceptance A tries "
          "them",
          model.id, k, k);
      return {};
    }
    Speculation s{k, model.mtp->acceptance, std::nullopt};
    check_speculation(s);
    note = fmt::format(
        "speculation: {} ships {} MTP layer(s): tried with --speculate {} at acceptance {} beside none, the rate its "
        "model file states ({}); --speculate none leaves it out, --speculate K --acceptance A sets another",
        model.id, k, k, fmt::join(s.acceptance, ","), model.mtp->acceptance_source);
    return {s};
  }
  const std::vector<int> drafts = parse_list<int>(options.speculate, "--speculate", parse_degree);
  SpeculationFlags flags;
  flags.draft_tokens = *std::max_element(drafts.begin(), drafts.end());
  flags.acceptance = options.acceptance;
  flags.draft_model = options.draft_model;
  const std::optional<Speculation> longest = resolve_speculation(flags, options.model.models_dirs);
  std::vector<Speculation> out;
  for (int k : drafts) {
    Speculation s = *longest;
    s.draft_tokens = k;
    if (s.acceptance.size() > 1) s.acceptance.resize(static_cast<std::size_t>(k));
    check_speculation(s);
    out.push_back(std::move(s));
  }
  return out;
}

constexpr double max_price_usd_per_hour = 1e6;

std::map<std::string, double> parse_prices(const std::vector<std::string>& entries, const std::vector<GpuSpec>& gpus,
                                           const HardwareRegistry& registry) {
  std::map<std::string, double> prices;
  std::optional<double> fallback;
  for (const std::string& entry : entries) {
    for (const std::string& item : split(entry, ',')) {
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw InputError(fmt::format("--price '{}': expected GPU=USD_PER_HOUR, e.g. --price h100=2.5", item));
      }
      const std::string name = item.substr(0, eq);
      const std::vector<double> value = parse_positive_numbers("--price " + name, item.substr(eq + 1));
      // No GPU rents for a million dollars an hour; beyond that, costs of large fleets overflow
      // to inf.
      if (value.front() > max_price_usd_per_hour) {
        throw InputError(fmt::format("--price {}: {} USD per GPU-hour is beyond any offer (at most {:g})", name,
                                     item.substr(eq + 1), max_price_usd_per_hour));
      }
      // Two prices for one GPU (by id or alias): the last would win without a word.
      const bool repeated = to_lower(name) == "all" ? fallback.has_value()
                                                    : !prices.emplace(registry.find(name).id, value.front()).second;
      if (repeated) throw InputError(fmt::format("--price {}: given twice", name));
      if (to_lower(name) == "all") fallback = value.front();
    }
  }
  std::vector<std::string> missing;
  for (const GpuSpec& gpu : gpus) {
    if (prices.count(gpu.id) > 0) continue;
    if (fallback) {
      prices[gpu.id] = *fallback;
    } else {
      missing.push_back(gpu.id);
    }
  }
  if (!missing.empty()) {
    throw InputError(
        fmt::format("--price: no price for {}; give --price GPU=USD_PER_HOUR for each GPU (or --price "
                    "all=USD_PER_HOUR): roofline ships no prices, they depend on the provider and the date",
                    fmt::join(missing, ", ")));
  }
  return prices;
}

// The report's calibration blocks, one per GPU --calibration was resolved for (empty without it).
nlohmann::json calibrations_json(const std::vector<CalibrationChoice>& choices) {
  nlohmann::json out = nlohmann::json::array();
  for (const CalibrationChoice& choice : choices) out.push_back(calibration_block(choice));
  return out;
}

}  // namespace

namespace {

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

CheckpointNotes apply_checkpoint(const ModelSpec& model, const PlanOptions& options, PlanSpace& space) {
  CheckpointNotes notes;
  if (model.checkpoint && options.weights_given) {
    notes.weights = fmt::format("weights: --weights {}, tried as given; the checkpoint stores {}", options.weights,
                                model.checkpoint->description);
  } else if (model.checkpoint) {
    notes.weights = apply_checkpoint_format(model, false, space.base);
    space.weights = {space.base.weights};
  }
  notes.long_context =
      check_context(model, options.prompt + options.output, options.model, "--prompt-tokens + --output-tokens");
  return notes;
}

nlohmann::json speculation_list_json(const std::vector<Speculation>& speculation) {
  nlohmann::json out = nlohmann::json::array();
  for (const Speculation& s : speculation) out.push_back(speculation_json(s));
  return out;
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

Report plan_report(const PlanOptions& options, const HardwareRegistry& registry) {
  const ModelSpec model = resolve_model(options.model);
  PlanSpace space;
  space.gpus = selected_gpus(registry, options.gpus, options.what_if);
  space.usd_per_gpu_hour = parse_prices(options.prices, space.gpus, registry);
  space.weights = parse_list<DType>(options.weights, "--weights", parse_format_flag);
  const CheckpointNotes checkpoint = apply_checkpoint(model, options, space);
  space.kv = parse_list<DType>(options.kv, "--kv", parse_format_flag);
  space.tp = parse_list<int>(options.tp, "--tp", parse_degree);
  space.pp = parse_list<int>(options.pp, "--pp", parse_degree);
  if (to_lower(options.ep) != "auto") space.ep = parse_list<int>(options.ep, "--ep", parse_degree);
  space.attention_dp = !options.no_attention_dp;
  std::string speculation_note;
  space.speculation = parse_speculation(options, model, speculation_note);
  space.max_batch = options.max_batch;
  // A file holds one GPU's tables; auto resolves one calibration per candidate GPU.
  std::vector<CalibrationChoice> choices;
  if (std::optional<CalibrationChoice> first =
          apply_deployment_flags(options.deployment, space.base, space.gpus.front(), registry)) {
    choices.push_back(std::move(*first));
    const bool per_gpu = *options.deployment.calibration == auto_calibration_flag;
    for (std::size_t i = 1; per_gpu && i < space.gpus.size(); ++i) {
      choices.push_back(choose_calibration(*options.deployment.calibration, space.gpus[i], registry));
    }
    if (per_gpu) {
      for (const CalibrationChoice& choice : choices) {
        if (choice.calibration) space.calibration_by_gpu[choice.gpu] = &*choice.calibration;
      }
    }
  }
  const std::optional<Calibration> no_calibration;
  const std::optional<Calibration>& calibration =
      choices.empty() || space.calibration_by_gpu.size() > 0 ? no_calibration : choices.front().calibration;
  apply_time_flags(options.deployment, calibration, space.time);
  const bool calibrated = calibration.has_value() || !space.calibration_by_gpu.empty();
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
  nlohmann::json gpu_ids = nlohmann::json::array();
  for (const GpuSpec& gpu : space.gpus) gpu_ids.push_back(gpu.id);
  nlohmann::json formats_w = nlohmann::json::array();
  for (DType t : space.weights) formats_w.push_back(name_of(t));
  nlohmann::json formats_kv = nlohmann::json::array();
  for (DType t : space.kv) formats_kv.push_back(name_of(t));
  report.inputs = {{"model", model_summary(model)},
                   {"gpus", gpu_ids},
                   {"workload",
                    {{"rps", options.rps},
                     {"prompt", options.prompt},
                     {"output", options.output},
                     {"tpot_ms", options.tpot_ms},
                     {"ttft_ms", options.ttft_ms}}},
                   {"usd_per_gpu_hour", space.usd_per_gpu_hour},
                   {"search",
                    {{"weights", formats_w},
                     {"kv", formats_kv},
                     {"tp", space.tp},
                     {"pp", space.pp},
                     {"ep", space.ep.empty() ? nlohmann::json("auto") : nlohmann::json(space.ep)},
                     {"attention_dp", space.attention_dp},
                     {"max_batch", space.max_batch},
                     {"speculation", speculation_list_json(space.speculation)}}},
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

}  // namespace

// ---- plan --pareto: the front of tokens/s per GPU against tokens/s per user (roofline/llm/pareto.hpp)
namespace {

struct PointRow {
  std::int64_t rank = 0;
  const ParetoPoint* p = nullptr;
  bool chosen = false;
};

// A disaggregated point's prefill replicas, "TP 8 PP 1 EP 8 attn DP".
std::string prefill_layout_text(const ReplicaLayout& p) {
  return fmt::format("TP {} PP {} EP {}{}", p.tp, p.pp, p.ep, p.attention_dp ? " attn DP" : "");
}

// One list of columns for the front and the dominated sample (never chosen). A disaggregated
// point's TP, PP, EP, attention DP, batch and speculation are its decode pool's.
constexpr std::array<ColumnOf<PointRow>, 25> point_columns{{
    {{"rank", "#", 0}, [](const PointRow& r) { return Cell{r.rank}; }},
    {{"mode", "mode", 0},
     [](const PointRow& r) { return Cell{std::string(r.p->deployment.pools ? "disaggregated" : "aggregated")}; }},
    {{"gpu", "GPU", 0}, [](const PointRow& r) { return Cell{r.p->deployment.gpu}; }},
    {{"tp", "TP", 0}, [](const PointRow& r) { return Cell{std::int64_t{r.p->deployment.tp}}; }},
    {{"pp", "PP", 0}, [](const PointRow& r) { return Cell{std::int64_t{r.p->deployment.pp}}; }},
    {{"ep", "EP", 0}, [](const PointRow& r) { return Cell{std::int64_t{r.p->deployment.ep}}; }},
    {{"attention_dp", "attn DP", 0}, [](const PointRow& r) { return Cell{r.p->deployment.attention_dp}; }},
    {{"weights", "weights", 0}, [](const PointRow& r) { return Cell{std::string(name_of(r.p->deployment.weights))}; }},
    {{"kv", "KV", 0}, [](const PointRow& r) { return Cell{std::string(name_of(r.p->deployment.kv))}; }},
    {{"draft_tokens", "spec K", 0}, [](const PointRow& r) { return Cell{std::int64_t{r.p->deployment.draft_tokens}}; }},
    {{"batch", "batch", 0}, [](const PointRow& r) { return Cell{r.p->deployment.batch}; }},
    {{"max_batch", "max batch", 0}, [](const PointRow& r) { return Cell{r.p->max_batch}; }},
    {{"prefill_pool", "prefill pool", 0},
     [](const PointRow& r) {
       const auto& pools = r.p->deployment.pools;
       return pools ? Cell{prefill_layout_text(pools->prefill)} : Cell{};
     }},
    {{"prefill_replicas", "P", 0},
     [](const PointRow& r) {
       const auto& pools = r.p->deployment.pools;
       return pools ? Cell{pools->ratio.prefill} : Cell{};
     }},
    {{"decode_replicas", "D", 0},
     [](const PointRow& r) {
       const auto& pools = r.p->deployment.pools;
       return pools ? Cell{pools->ratio.decode} : Cell{};
     }},
    {{"gpus", "GPUs", 0}, [](const PointRow& r) { return Cell{r.p->deployment.deployment_gpus()}; }},
    {{"ttft_ms", "TTFT [ms]", 1}, [](const PointRow& r) { return Cell{r.p->ttft_s * 1e3}; }},
    {{"kv_transfer_ms", "KV transfer [ms]", 2},
     [](const PointRow& r) { return r.p->deployment.pools ? Cell{r.p->kv_transfer_s * 1e3} : Cell{}; }},
    {{"tpot_ms", "TPOT [ms]", 2}, [](const PointRow& r) { return Cell{r.p->tpot_s * 1e3}; }},
    {{"tokens_per_step", "tokens/step", 2}, [](const PointRow& r) { return Cell{r.p->tokens_per_step}; }},
    {{"tokens_per_s_per_user", "tok/s per user", 1},
     [](const PointRow& r) { return Cell{r.p->tokens_per_s_per_user}; }},
    {{"tokens_per_s_per_gpu", "tok/s per GPU", 1}, [](const PointRow& r) { return Cell{r.p->tokens_per_s_per_gpu}; }},
    {{"usd_per_million_output_tokens", "$/M tokens", 3},
     [](const PointRow& r) { return optional_cell(r.p->usd_per_million_output_tokens); }},
    {{"bottleneck", "step bottleneck", 0}, [](const PointRow& r) { return Cell{std::string(r.p->bottleneck)}; }},
    {{"chosen", "chosen", 0}, [](const PointRow& r) { return Cell{r.chosen}; }},
}};

std::vector<PointRow> point_rows(const std::vector<ParetoPoint>& points, std::optional<std::size_t> chosen) {
  std::vector<PointRow> rows;
  rows.reserve(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    rows.push_back({static_cast<std::int64_t>(i + 1), &points[i], chosen == i});
  }
  return rows;
}

// A disaggregated point's two pools (null for an aggregated one).
nlohmann::json pools_json(const ParetoPoint& p) {
  const ParetoDeployment& d = p.deployment;
  if (!d.pools) return nullptr;
  const ReplicaLayout& prefill = d.pools->prefill;
  return {{"prefill",
           {{"tp", prefill.tp},
            {"pp", prefill.pp},
            {"ep", prefill.ep},
            {"attention_dp", prefill.attention_dp},
            {"replicas", d.pools->ratio.prefill},
            {"gpus_per_replica", prefill.gpus()},
            {"prefill_ms", p.prefill_s * 1e3}}},
          {"decode",
           {{"tp", d.tp},
            {"pp", d.pp},
            {"ep", d.ep},
            {"attention_dp", d.attention_dp},
            {"replicas", d.pools->ratio.decode},
            {"gpus_per_replica", d.gpus()},
            {"first_step_ms", p.step_s * 1e3}}},
          {"kv_transfer_ms", p.kv_transfer_s * 1e3},
          {"balance_prefill_per_decode", p.pool_balance}};
}

nlohmann::json point_json(const ParetoPoint& p) {
  const ParetoDeployment& d = p.deployment;
  return {{"gpu", d.gpu},
          {"tp", d.tp},
          {"pp", d.pp},
          {"ep", d.ep},
          {"attention_dp", d.attention_dp},
          {"weights", name_of(d.weights)},
          {"kv", name_of(d.kv)},
          {"draft_tokens", d.draft_tokens},
          {"batch", d.batch},
          {"gpus_per_replica", d.gpus()},
          {"max_batch", p.max_batch},
          {"ttft_ms", p.ttft_s * 1e3},
          {"step_ms", p.step_s * 1e3},
          {"tokens_per_step", p.tokens_per_step},
          {"tpot_ms", p.tpot_s * 1e3},
          {"tokens_per_s_per_user", p.tokens_per_s_per_user},
          {"tokens_per_s_per_gpu", p.tokens_per_s_per_gpu},
          {"usd_per_million_output_tokens",
           p.usd_per_million_output_tokens ? nlohmann::json(*p.usd_per_million_output_tokens) : nullptr},
          {"bottleneck", p.bottleneck},
          {"description", describe(d)},
          {"mode", d.pools ? "disaggregated" : "aggregated"},
          {"gpus", d.deployment_gpus()},
          {"pools", pools_json(p)}};
}

// --pool-ratios auto|P:D[,P:D...]: prefill and decode replicas of a disaggregated point.
std::vector<PoolRatio> parse_pool_ratios(const std::string& text) {
  if (to_lower(text) == "auto") return {};
  std::vector<PoolRatio> out;
  for (const std::string& piece : split(text, ',')) {
    const std::vector<std::string> counts = split(piece, ':');
    if (counts.size() != 2) {
      throw InputError(fmt::format("--pool-ratios '{}': expected PREFILL:DECODE replicas (e.g. 1:2), or auto", piece));
    }
    // Whole numbers here; their range (1 to 64 replicas a pool) is the sweep's to check.
    const auto count = [&](const std::string& t) -> std::int64_t {
      std::size_t used = 0;
      std::int64_t value = -1;
      try {
        value = std::stoll(t, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != t.size()) {
        throw InputError(fmt::format("--pool-ratios '{}': '{}' is not a whole number of replicas", piece, t));
      }
      return value;
    };
    const PoolRatio ratio{count(counts[0]), count(counts[1])};
    if (std::find(out.begin(), out.end(), ratio) == out.end()) out.push_back(ratio);
  }
  if (out.size() > max_list_entries) {
    throw InputError(
        fmt::format("--pool-ratios: {} entries, more than the {} a search takes", out.size(), max_list_entries));
  }
  return out;
}

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

nlohmann::json pool_ratios_json(const ParetoSpace& space) {
  if (space.pool_ratios.empty()) return "auto";
  nlohmann::json out = nlohmann::json::array();
  for (const PoolRatio& r : space.pool_ratios) out.push_back(fmt::format("{}:{}", r.prefill, r.decode));
  return out;
}

constexpr std::string_view chosen_rule_with_target =
    "the highest tokens/s per GPU among the points that meet --tpot-ms (the front's first point: the targets filter "
    "the sweep)";
constexpr std::string_view chosen_rule_knee =
    "the knee: with both axes on a log scale normalised to [0, 1] over the front, the point farthest above the chord "
    "between its two ends";

Report pareto_report(const PlanOptions& options, const HardwareRegistry& registry) {
  const ModelSpec model = resolve_model(options.model);
  ParetoSpace space;
  PlanSpace& plan = space.plan;
  plan.gpus = selected_gpus(registry, options.gpus, options.what_if);
  if (!options.prices.empty()) plan.usd_per_gpu_hour = parse_prices(options.prices, plan.gpus, registry);
  plan.weights = parse_list<DType>(options.weights, "--weights", parse_format_flag);
  const CheckpointNotes checkpoint = apply_checkpoint(model, options, plan);
  plan.kv = parse_list<DType>(options.kv, "--kv", parse_format_flag);
  plan.tp = parse_list<int>(options.tp, "--tp", parse_degree);
  plan.pp = parse_list<int>(options.pp, "--pp", parse_degree);
  if (to_lower(options.ep) != "auto") plan.ep = parse_list<int>(options.ep, "--ep", parse_degree);
  plan.attention_dp = !options.no_attention_dp;
  space.batches = parse_list<std::int64_t>(options.batches, "--batches", parse_batch);
  std::string speculation_note;
  plan.speculation = parse_speculation(options, model, speculation_note);
  space.disaggregate = options.disaggregate;
  space.pool_ratios = parse_pool_ratios(options.pool_ratios);
  space.max_pool_replicas = options.max_pool_replicas;
  std::vector<CalibrationChoice> choices;
  if (std::optional<CalibrationChoice> first =
          apply_deployment_flags(options.deployment, plan.base, plan.gpus.front(), registry)) {
    choices.push_back(std::move(*first));
    const bool per_gpu = *options.deployment.calibration == auto_calibration_flag;
    for (std::size_t i = 1; per_gpu && i < plan.gpus.size(); ++i) {
      choices.push_back(choose_calibration(*options.deployment.calibration, plan.gpus[i], registry));
    }
    if (per_gpu) {
      for (const CalibrationChoice& choice : choices) {
        if (choice.calibration) plan.calibration_by_gpu[choice.gpu] = &*choice.calibration;
      }
    }
  }
  const std::optional<Calibration> no_calibration;
  const std::optional<Calibration>& calibration =
      choices.empty() || !plan.calibration_by_gpu.empty() ? no_calibration : choices.front().calibration;
  apply_time_flags(options.deployment, calibration, plan.time);
  // 0 is the struct's "not given" (the command refuses an explicit non-positive value).
  if (options.tpot_ms != 0) space.tpot_s = options.tpot_ms / 1e3;
  if (options.ttft_ms != 0) space.ttft_s = options.ttft_ms / 1e3;

  const ParetoResult result = sweep_pareto(model, options.prompt, options.output, space);
  const ParetoPoint& chosen = result.front[result.chosen];

  Report report;
  report.kind = "plan-pareto";
  nlohmann::json gpu_ids = nlohmann::json::array();
  for (const GpuSpec& gpu : plan.gpus) gpu_ids.push_back(gpu.id);
  nlohmann::json formats_w = nlohmann::json::array();
  for (DType t : plan.weights) formats_w.push_back(name_of(t));
  nlohmann::json formats_kv = nlohmann::json::array();
  for (DType t : plan.kv) formats_kv.push_back(name_of(t));
  nlohmann::json speculation = nlohmann::json::array();
  for (const Speculation& s : plan.speculation) speculation.push_back(speculation_json(s));
  report.inputs = {{"model", model_summary(model)},
                   {"gpus", gpu_ids},
                   {"workload",
                    {{"prompt", options.prompt},
                     {"output", options.output},
                     {"tpot_ms", space.tpot_s ? nlohmann::json(options.tpot_ms) : nullptr},
                     {"ttft_ms", space.ttft_s ? nlohmann::json(options.ttft_ms) : nullptr}}},
                   {"usd_per_gpu_hour", plan.usd_per_gpu_hour},
                   {"sweep",
                    {{"weights", formats_w},
                     {"kv", formats_kv},
                     {"tp", plan.tp},
                     {"pp", plan.pp},
                     {"ep", plan.ep.empty() ? nlohmann::json("auto") : nlohmann::json(plan.ep)},
                     {"attention_dp", plan.attention_dp},
                     {"batches", space.batches},
                     {"speculation", speculation},
                     {"disaggregated", space.disaggregate},
                     {"pool_ratios", pool_ratios_json(space)},
                     {"max_pool_replicas", space.max_pool_replicas}}},
                   {"deployment", deployment_flags_json(options.deployment)},
                   {"set", options.what_if}};
  add_hardware_origins(report, plan.gpus);

  report.tables.push_back(Table::from_rows<PointRow>(
      "front",
      fmt::format("{}, {} prompt + {} output tokens: the Pareto front of tokens/s per GPU against tokens/s per user, "
                  "slowest per user first ({} of {} feasible points)",
                  model.id, options.prompt, options.output, result.front.size(), result.feasible),
      point_columns, point_rows(result.front, result.chosen)));
  report.tables.push_back(Table::from_rows<PointRow>(
      "dominated_sample",
      fmt::format("{} of the {} dominated points, an even stride in sweep order (the chart's grey points)",
                  result.dominated.size(), result.feasible - static_cast<std::int64_t>(result.front.size())),
      point_columns, point_rows(result.dominated, std::nullopt)));
  report.tables.push_back(Table::from_rows<RejectionCount>(
      "rejection_summary", fmt::format("{} of {} points infeasible", result.swept - result.feasible, result.swept),
      reason_columns, result.rejections));

  const bool target = space.tpot_s.has_value();
  report.extra_results = {{"chosen", point_json(chosen)},
                          {"chosen_index", result.chosen},
                          {"chosen_rule", target ? chosen_rule_with_target : chosen_rule_knee},
                          {"counts",
                           {{"configurations", result.configurations},
                            {"swept", result.swept},
                            {"feasible", result.feasible},
                            {"infeasible", result.swept - result.feasible},
                            {"on_front", result.front.size()},
                            {"dominated_listed", result.dominated.size()},
                            {"decode_evaluations", result.decode_evaluations},
                            {"modes", result.modes},
                            {"prefill_pools", result.prefill_pools},
                            {"prefill_pools_kept", result.prefill_pools_kept},
                            {"pool_pairings", result.pool_pairings}}}};
  if (!choices.empty()) report.extra_results["calibration"] = calibrations_json(choices);

  report.notes.push_back(
      fmt::format("chosen ({}): {}: {:.1f} tokens/s per user, {:.1f} tokens/s per GPU{}",
                  target ? "highest tokens/s per GPU within --tpot-ms" : "the knee of the front",
                  describe(chosen.deployment), chosen.tokens_per_s_per_user, chosen.tokens_per_s_per_gpu,
                  chosen.usd_per_million_output_tokens
                      ? fmt::format(", ${:.3f} per million output tokens", *chosen.usd_per_million_output_tokens)
                      : std::string()));
  report.notes.push_back(fmt::format(
      "{} configurations x {} batches{} = {} points swept, {} feasible, {} on the front; {} steps timed",
      result.configurations, space.batches.size(), space.disaggregate ? " x 2 modes (aggregated, disaggregated)" : "",
      result.swept, result.feasible, result.front.size(), result.decode_evaluations));
  report.notes.push_back(
      "each aggregated point is one replica of TP x PP GPUs at a fixed batch, plan's closed form: TPOT = step per "
      "token + batch x TTFT / output (the prefills interleaved with decode; with speculation the step per token is "
      "the verify cycle over the expected tokens per verify step); tokens/s per user = 1 / TPOT, per GPU = batch / "
      "TPOT / GPUs; no queueing");
  if (space.disaggregate) {
    report.notes.push_back(fmt::format(
        "each disaggregated point is a decode pool of its TP/PP/EP/attention DP at its batch (TPOT = its step per "
        "token: it never prefills) fed by a prefill pool of its own layout on the same GPU and formats, one prompt at "
        "a time (1 / prefill requests/s per replica); TTFT = prefill + KV transfer (the model's KV bytes x prompt over "
        "the scale-out link x the prefill replica's GPUs, + its latency: serve --disaggregate's default) + the decode "
        "pool's first step; P:D replicas {}, the pool with capacity to spare idling; tokens/s per GPU count both "
        "pools' GPUs. Of the prefill layouts, one slower with as many GPUs and no faster transfer than another is "
        "pruned ({} of {} kept); each decode point keeps its best pool and ratio ({} pairings priced)",
        space.pool_ratios.empty()
            ? fmt::format("the best whole ratio with at most {} per pool (for each D, the P either side of the "
                          "balance P/D = decode requests/s / prefill requests/s per replica)",
                          space.max_pool_replicas)
            : fmt::format("the best of {}", pool_ratios_json(space).dump()),
        result.prefill_pools_kept, result.prefill_pools, result.pool_pairings));
  }
  for (const CalibrationChoice& choice : choices) report.notes.push_back(calibration_note(choice));
  checkpoint.add_to(report);
  if (!speculation_note.empty()) report.notes.push_back(speculation_note);
  if (choices.empty()) report.notes.push_back("times are roofline bounds (see roofline llm)");
  if (draws_figures(options.common)) report.figures = plot::pareto_figures(report);
  return report;
}

}  // namespace
// ---- end plan --pareto

Report run_plan(const PlanOptions& options, const HardwareRegistry& registry) {
  try {
    // plan --pareto
    if (options.pareto) return pareto_report(options, registry);
    return plan_report(options, registry);
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
