// plan --pareto: the front of tokens/s per GPU against tokens/s per user over the swept
// deployments (roofline/llm/pareto.hpp).
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "commands.hpp"
#include "plan_inputs.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"
#include "roofline/llm/pareto.hpp"
#include "roofline/plot/report_figures.hpp"

namespace roofline::cli::plan_detail {
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

}  // namespace

Report pareto_report(const PlanOptions& options, const HardwareRegistry& registry) {
  PlanInputs inputs = read_plan_inputs(options, registry, /*prices_required=*/false);
  const ModelSpec& model = inputs.model;
  ParetoSpace space;
  space.plan = std::move(inputs.space);
  PlanSpace& plan = space.plan;
  const std::vector<CalibrationChoice>& choices = inputs.choices;
  const CheckpointNotes& checkpoint = inputs.checkpoint;
  const std::string& speculation_note = inputs.speculation_note;
  space.batches = parse_list<std::int64_t>(options.batches, "--batches", parse_batch);
  space.disaggregate = options.disaggregate;
  space.pool_ratios = parse_pool_ratios(options.pool_ratios);
  space.max_pool_replicas = options.max_pool_replicas;
  // 0 is the struct's "not given" (the command refuses an explicit non-positive value).
  if (options.tpot_ms != 0) space.tpot_s = options.tpot_ms / 1e3;
  if (options.ttft_ms != 0) space.ttft_s = options.ttft_ms / 1e3;

  const ParetoResult result = sweep_pareto(model, options.prompt, options.output, space);
  const ParetoPoint& chosen = result.front[result.chosen];

  Report report;
  report.kind = "plan-pareto";
  nlohmann::json sweep = space_json(plan);
  sweep["batches"] = space.batches;
  sweep["disaggregated"] = space.disaggregate;
  sweep["pool_ratios"] = pool_ratios_json(space);
  sweep["max_pool_replicas"] = space.max_pool_replicas;
  report.inputs = {{"model", model_summary(model)},
                   {"gpus", gpu_ids_json(plan.gpus)},
                   {"workload",
                    {{"prompt", options.prompt},
                     {"output", options.output},
                     {"tpot_ms", space.tpot_s ? nlohmann::json(options.tpot_ms) : nullptr},
                     {"ttft_ms", space.ttft_s ? nlohmann::json(options.ttft_ms) : nullptr}}},
                   {"usd_per_gpu_hour", plan.usd_per_gpu_hour},
                   {"sweep", sweep},
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

}  // namespace roofline::cli::plan_detail
