// roofline serve: a serving engine simulated step by step under a workload: throughput, latency
// percentiles, preemptions, KV use and a timeline (docs/serve.md).
#include "serve.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <ostream>

#include "commands.hpp"
#include "roofline/basis/calibration.hpp"
#include "roofline/core/error.hpp"
#include "roofline/plot/report_figures.hpp"
#include "roofline/plot/timeline.hpp"
#include "roofline/report/output_file.hpp"
#include "roofline/serve/fit.hpp"
#include "roofline/serve/metrics.hpp"
#include "summary_table.hpp"

namespace roofline::cli {
namespace {

struct LatencyRow {
  std::string metric;
  std::string definition;
  std::int64_t samples = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;  // ms
};

constexpr std::array<ColumnOf<LatencyRow>, 8> latency_columns{{
    {{"metric", "metric", 0}, [](const LatencyRow& r) { return Cell{r.metric}; }},
    {{"samples", "samples", 0}, [](const LatencyRow& r) { return Cell{r.samples}; }},
    {{"mean_ms", "mean [ms]", 2}, [](const LatencyRow& r) { return Cell{r.mean}; }},
    {{"p50_ms", "p50 [ms]", 2}, [](const LatencyRow& r) { return Cell{r.p50}; }},
    {{"p90_ms", "p90 [ms]", 2}, [](const LatencyRow& r) { return Cell{r.p90}; }},
    {{"p99_ms", "p99 [ms]", 2}, [](const LatencyRow& r) { return Cell{r.p99}; }},
    {{"max_ms", "max [ms]", 2}, [](const LatencyRow& r) { return Cell{r.max}; }},
    {{"definition", "definition", 0}, [](const LatencyRow& r) { return Cell{r.definition}; }},
}};

struct TimelineRow {
  TimelinePoint point;
  std::int64_t kv_blocks = 0;  // in the cache
};

constexpr std::array<ColumnOf<TimelineRow>, 8> timeline_columns{{
    {{"time_s", "time [s]", 3}, [](const TimelineRow& r) { return Cell{r.point.time_s}; }},
    {{"steps", "steps", 0}, [](const TimelineRow& r) { return Cell{r.point.steps}; }},
    {{"running", "running", 1}, [](const TimelineRow& r) { return Cell{r.point.running}; }},
    {{"waiting", "waiting", 1}, [](const TimelineRow& r) { return Cell{r.point.waiting}; }},
    {{"kv_blocks", "KV blocks", 0}, [](const TimelineRow& r) { return Cell{r.point.kv_blocks}; }},
    {{"kv_use", "KV use", 3},
     [](const TimelineRow& r) {
       return Cell{r.kv_blocks > 0 ? r.point.kv_blocks / static_cast<double>(r.kv_blocks) : 0.0};
     }},
    {{"output_tokens_per_s", "output tok/s", 0},
     [](const TimelineRow& r) {
       return Cell{r.point.span_s > 0 ? static_cast<double>(r.point.output_tokens) / r.point.span_s : 0.0};
     }},
    {{"prefill_tokens_per_s", "prefill tok/s", 0},
     [](const TimelineRow& r) {
       return Cell{r.point.span_s > 0 ? static_cast<double>(r.point.prefill_tokens) / r.point.span_s : 0.0};
     }},
}};

double parse_rate(const std::string& text) {
  if (text == "inf") return std::numeric_limits<double>::infinity();
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value) || value <= 0) {
    throw InputError(fmt::format("--rate '{}': expected 'inf' or a number of requests per second > 0", text));
  }
  return value;
}

Slo parse_slo(const std::string& text) {
  Slo slo;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    const std::size_t eq = item.find('=');
    double value = 0;
    const char* first = item.data() + (eq == std::string::npos ? 0 : eq + 1);
    const auto [stop, error] = std::from_chars(first, item.data() + item.size(), value);
    const std::string key = item.substr(0, eq);
    if (eq == std::string::npos || error != std::errc{} || stop != item.data() + item.size() || !std::isfinite(value) ||
        value <= 0 || (key != "ttft" && key != "tpot")) {
      throw InputError(fmt::format("--slo '{}': expected ttft=MS,tpot=MS (either or both, each > 0)", text));
    }
    (key == "ttft" ? slo.ttft_s : slo.tpot_s) = value * 1e-3;
  }
  return slo;
}

LengthDistribution lengths(const std::optional<std::int64_t>& fixed, const std::optional<std::string>& dist,
                           std::string_view flag) {
  if (fixed && dist) throw InputError(fmt::format("--{}-tokens and --{}-dist: give one of them", flag, flag));
  if (dist) return parse_length_distribution(*dist, fmt::format("--{}-dist", flag));
  if (!fixed) throw InputError(fmt::format("--{}-tokens or --{}-dist (or --trace) is required", flag, flag));
  require_positive(*fixed, fmt::format("--{}-tokens", flag));
  LengthDistribution d;
  d.a = static_cast<double>(*fixed);
  return d;
}

// The requests the flags describe, as a stream: a trace (its times, or replaced by --rate) or
// synthetic ones.
std::unique_ptr<RequestSource> workload(const ServeOptions& o, const std::optional<double>& rate) {
  if (o.requests) require_positive(*o.requests, "--requests", max_batch * 1024);
  Arrivals arrivals;
  if (rate && std::isfinite(*rate)) arrivals = {Arrivals::Kind::poisson, *rate};
  if (o.trace) {
    if (o.prompt || o.output || o.prompt_dist || o.output_dist) {
      throw InputError(
          "--trace: the trace states the lengths; leave out --prompt-tokens, --output-tokens and the -dist flags");
    }
    // --rate replaces the trace's times: all at once, or Poisson from the seed.
    return std::make_unique<TraceSource>(*o.trace, o.requests, rate ? std::optional<Arrivals>(arrivals) : std::nullopt,
                                         o.seed);
  }
  if (!o.requests) throw InputError("--requests is required (or --trace)");
  SyntheticWorkload w;
  w.requests = *o.requests;
  w.prompt = lengths(o.prompt, o.prompt_dist, "prompt");
  w.output = lengths(o.output, o.output_dist, "output");
  w.arrivals = arrivals;
  w.seed = o.seed;
  return std::make_unique<SyntheticSource>(w);
}

LatencyRow latency_row(std::string metric, std::string definition, const LatencyStats& s) {
  return {std::move(metric), std::move(definition), s.samples,   s.mean * 1e3,
          s.p50 * 1e3,       s.p90 * 1e3,           s.p99 * 1e3, s.max * 1e3};
}

nlohmann::json latency_json(const LatencyRow& r) {
  return {{"mean", r.mean}, {"p50", r.p50}, {"p90", r.p90}, {"p99", r.p99}, {"max", r.max}};
}

std::string arrivals_text(const ServeOptions& o, const std::optional<double>& rate) {
  if (o.concurrency) return fmt::format("closed loop, {} in flight", *o.concurrency);
  if (rate) return std::isfinite(*rate) ? fmt::format("Poisson, {:g} requests/s", *rate) : "all at time 0 (--rate inf)";
  // Without --rate: a trace keeps its times, synthetic requests all arrive at once.
  return o.trace ? "the trace's times" : "all at time 0 (--rate inf)";
}

// The records of --requests-csv, kept as the requests finish and written in the workload's order.
using IndexedRecords = std::vector<std::pair<std::size_t, RequestRecord>>;

void write_requests_csv(const std::string& path, IndexedRecords& records) {
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  write_file_atomically(
      path,
      [&](std::ostream& out) {
        out << "request,arrival_s,prompt,output,queue_ms,ttft_ms,tpot_ms,e2e_ms,finish_s,preemptions\n";
        for (const auto& [i, r] : records) {
          const std::optional<double> tpot = r.tpot_s();
          out << fmt::format("{},{},{},{},{},{},{},{},{},{}\n", i, r.spec.arrival_s, r.spec.prompt, r.spec.output,
                             r.queue_s() * 1e3, r.ttft_s() * 1e3, tpot ? fmt::format("{}", *tpot * 1e3) : "",
                             r.e2e_s() * 1e3, r.finish_s, r.preemptions);
        }
      },
      "--requests-csv");
}

// The timeline as a chart: requests, KV cache use, tokens/s over time.
void write_timeline_svg(const std::string& path, const EngineRun& sim, std::int64_t kv_blocks, std::string title) {
  plot::TimelineChart chart;
  chart.title = std::move(title);
  plot::TimelineLine running{"running", {}}, waiting{"waiting", {}}, kv{"KV blocks in use", {}}, output{"output", {}},
      prefill{"prefill", {}};
  for (const TimelinePoint& p : sim.timeline) {
    chart.time_s.push_back(p.time_s);
    running.values.push_back(p.running);
    waiting.values.push_back(p.waiting);
    kv.values.push_back(100.0 * p.kv_blocks / static_cast<double>(kv_blocks));
    output.values.push_back(p.span_s > 0 ? static_cast<double>(p.output_tokens) / p.span_s : 0.0);
    prefill.values.push_back(p.span_s > 0 ? static_cast<double>(p.prefill_tokens) / p.span_s : 0.0);
  }
  chart.panels = {{"requests", {std::move(running), std::move(waiting)}},
                  {"KV cache in use [%]", {std::move(kv)}},
                  {"tokens/s", {std::move(output), std::move(prefill)}}};
  write_file_atomically(path, plot::render_timeline_svg(chart), "--timeline-svg");
}

// The engine flags checked (InputError naming the flag) and turned into the library's settings.
EngineConfig engine_config(const ServeOptions& o) {
  EngineConfig engine = o.engine;
  require_positive(engine.max_batch, "--max-batch", max_batch);
  require_positive(engine.max_num_tokens, "--max-num-tokens");
  require_positive(engine.block_size, "--block-size", 1 << 16);
  if (!(o.kv_memory_fraction > 0 && o.kv_memory_fraction <= 1)) {
    throw InputError(fmt::format("--kv-memory-fraction {}: must be in (0, 1]", o.kv_memory_fraction));
  }
  if (!(o.step_overhead_us >= 0) || !std::isfinite(o.step_overhead_us)) {
    throw InputError(fmt::format("--step-overhead-us {}: must be a number >= 0", o.step_overhead_us));
  }
  engine.chunked_prefill = !o.no_chunked_prefill;
  if (o.policy == "guaranteed-no-evict") {
    engine.policy = CapacityPolicy::guaranteed_no_evict;
  } else if (o.policy != "max-utilization") {
    throw InputError(fmt::format("--capacity-policy '{}': expected max-utilization or guaranteed-no-evict", o.policy));
  }
  engine.step_overhead_s = o.step_overhead_us * 1e-6;
  engine.concurrency = o.concurrency;
  return engine;
}

std::string policy_name(CapacityPolicy policy) {
  return policy == CapacityPolicy::guaranteed_no_evict ? "guaranteed-no-evict" : "max-utilization";
}

// What run_serve resolved from the flags, for the rendering.
struct ServeRun {
  const ServeOptions& o;
  const ModelSpec& model;
  const GpuSpec& gpu;
  const DeploymentConfig& config;
  const std::optional<Calibration>& calibration;
  const std::optional<CalibrationChoice>& choice;  // what --calibration resolved to (set with the flag)
  int gpus = 1;
  const std::optional<double>& rate;
  const Slo& slo;
  const EngineConfig& engine;
  const KvCache& kv;
};

// The report: the latency table, the throughput and engine figures with how each was reached, the
// timeline, the JSON figures the issue names, and the notes on how the run was modelled.
Report render_serve(const ServeRun& run, const EngineRun& sim, const ServeMetrics& m) {
  const ServeOptions& o = run.o;
  const ModelSpec& model = run.model;
  const GpuSpec& gpu = run.gpu;
  const DeploymentConfig& config = run.config;
  const std::optional<Calibration>& calibration = run.calibration;
  const int gpus = run.gpus;
  const std::optional<double>& rate = run.rate;
  const Slo& slo = run.slo;
  const EngineConfig& engine = run.engine;
  const KvCache& kv = run.kv;
  const double duration = m.duration_s;
  const double out_per_s = m.output_tokens_per_s;
  const std::int64_t output_tokens = m.output_tokens;
  const std::int64_t prompt_tokens = m.prompt_tokens;
  const std::int64_t good = m.good_requests;
  const auto n = static_cast<double>(m.requests);
  std::vector<LatencyRow> latency{
      latency_row("ttft", "arrival to first output token (the end of the step that completes the prompt)", m.ttft),
      latency_row("tpot", "per request: (E2E - TTFT) / (output - 1), requests of 2+ output tokens", m.tpot),
      latency_row("itl", "every gap between two consecutive output tokens of a request", m.itl),
      latency_row("e2e", "arrival to last output token", m.e2e),
      latency_row("queue", "arrival to the start of the step that first schedules the request", m.queue),
  };

  const EngineStats& es = sim.engine;
  std::vector<SummaryRow> rows{
      {"output_tokens_per_s", "output tokens/s", out_per_s, "tokens/s",
       fmt::format("{} output tokens / {:.3f} s (first arrival to last finish)", output_tokens, duration)},
      {"output_tokens_per_s_per_gpu", "output tokens/s per GPU", out_per_s / gpus, "tokens/s",
       fmt::format("/ {} GPUs", gpus)},
      {"output_tokens_per_s_per_user", "output tokens/s per user", m.user_tokens_per_s, "tokens/s",
       "mean over requests of 1 / TPOT"},
      {"total_tokens_per_s", "prompt + output tokens/s", static_cast<double>(prompt_tokens + output_tokens) / duration,
       "tokens/s", fmt::format("{} prompt + {} output tokens / duration", prompt_tokens, output_tokens)},
      {"requests_per_s", "requests/s", n / duration, "requests/s", fmt::format("{} requests / duration", m.requests)},
      {"duration_s", "duration", duration, "s", "first arrival to last finish"},
      {"preemptions", "preemptions", es.preemptions, "", "requests evicted for KV blocks (recomputed on resumption)"},
      {"steps", "engine steps", es.steps, "", fmt::format("{:.3f} s busy", es.busy_s)},
      {"batch_mean", "sequences per step, mean", es.batch_mean, "", fmt::format("max {}", es.batch_max)},
      {"tokens_per_step_mean", "tokens per step, mean", es.tokens_mean, "tokens",
       fmt::format("max {}; {} prefill (recomputes included) + {} decode tokens in all", es.tokens_max,
                   es.prefill_tokens, es.decode_tokens)},
      {"kv_blocks_peak", "KV blocks in use, peak", es.kv_blocks_peak, "blocks",
       fmt::format("of {} ({:.1f}%)", kv.blocks,
                   100.0 * static_cast<double>(es.kv_blocks_peak) / static_cast<double>(kv.blocks))},
      {"kv_blocks_mean", "KV blocks in use, mean over steps", es.kv_blocks_mean, "blocks",
       fmt::format("blocks of {} tokens, {:.3f} MB each per GPU", engine.block_size, kv.bytes_per_block / 1e6)},
  };
  nlohmann::json goodput = nullptr;
  if (o.slo) {
    rows.push_back({"goodput_requests_per_s", "goodput", static_cast<double>(good) / duration, "requests/s",
                    fmt::format("{} of {} requests within --slo {}", good, m.requests, *o.slo)});
    const auto ms = [](const std::optional<double>& s) {
      return s ? nlohmann::json(*s * 1e3) : nlohmann::json(nullptr);
    };
    goodput = {{"slo", {{"ttft_ms", ms(slo.ttft_s)}, {"tpot_ms", ms(slo.tpot_s)}}},
               {"requests", good},
               {"requests_per_s", static_cast<double>(good) / duration},
               {"fraction", static_cast<double>(good) / n}};
  }

  Report report;
  report.kind = "serve";
  nlohmann::json workload_json = {{"requests", m.requests},
                                  {"arrivals", arrivals_text(o, rate)},
                                  {"seed", o.seed},
                                  {"prompt_tokens", prompt_tokens},
                                  {"output_tokens", output_tokens}};
  if (o.trace) workload_json["trace"] = *o.trace;
  if (o.prompt) workload_json["prompt"] = *o.prompt;
  if (o.output) workload_json["output"] = *o.output;
  if (o.prompt_dist) workload_json["prompt_dist"] = *o.prompt_dist;
  if (o.output_dist) workload_json["output_dist"] = *o.output_dist;
  if (rate) workload_json["rate"] = std::isfinite(*rate) ? nlohmann::json(*rate) : nlohmann::json("inf");
  if (o.concurrency) workload_json["concurrency"] = *o.concurrency;
  report.inputs = {{"model", model_summary(model)},
                   {"gpu", gpu.id},
                   {"gpus", gpus},
                   {"tp", config.tp},
                   {"pp", config.pp},
                   {"weights", name_of(config.weights)},
                   {"kv", name_of(config.kv)},
                   {"embeddings", name_of(config.embeddings)},
                   {"activations", name_of(config.activations)},
                   {"workload", workload_json},
                   {"engine",
                    {{"max_batch", engine.max_batch},
                     {"max_num_tokens", engine.max_num_tokens},
                     {"chunked_prefill", engine.chunked_prefill},
                     {"capacity_policy", policy_name(engine.policy)},
                     {"block_size", engine.block_size},
                     {"kv_memory_fraction", o.kv_memory_fraction},
                     {"step_overhead_us", engine.step_overhead_s * 1e6},
                     {"fp8_kernels", o.fp8_kernels}}},
                   {"deployment", deployment_flags_json(o.deployment)},
                   {"set", o.what_if}};
  if (o.layers) report.inputs["layers"] = *o.layers;
  report.hardware.push_back({gpu.id, gpu.origin});
  const std::string title =
      fmt::format("{} on {} x {} (TP {}, PP {}), weights {}, KV {}: {} requests, {}", model.id, gpus, gpu.id, config.tp,
                  config.pp, name_of(config.weights), name_of(config.kv), m.requests, arrivals_text(o, rate));
  report.tables.push_back(
      Table::from_rows<LatencyRow>("latency", "Latency per request [ms] (" + title + ")", latency_columns, latency));
  report.tables.push_back(Table::from_rows<SummaryRow>("summary", "Throughput and engine", summary_columns, rows));
  std::vector<TimelineRow> timeline;
  timeline.reserve(sim.timeline.size());
  for (const TimelinePoint& p : sim.timeline) timeline.push_back({p, kv.blocks});
  report.tables.push_back(Table::from_rows<TimelineRow>(
      "timeline", "Timeline (each row: the steps since the previous one; means weighted by time)", timeline_columns,
      timeline));

  nlohmann::json calibration_json = {{"source", "none"}};
  if (run.choice) {
    // The block llm reports, with the name for its kind: measured, transferred or none.
    calibration_json = calibration_block(*run.choice);
    calibration_json["source"] = run.choice->kind;
  }
  report.extra_results = {{"output_tokens_per_s", out_per_s},
                          {"output_tokens_per_s_per_gpu", out_per_s / gpus},
                          {"output_tokens_per_s_per_user", m.user_tokens_per_s},
                          {"total_tokens_per_s", static_cast<double>(prompt_tokens + output_tokens) / duration},
                          {"requests_per_s", n / duration},
                          {"duration_s", duration},
                          {"requests", m.requests},
                          {"output_tokens", output_tokens},
                          {"prompt_tokens", prompt_tokens},
                          {"ttft_ms", latency_json(latency[0])},
                          {"tpot_ms", latency_json(latency[1])},
                          {"itl_ms", latency_json(latency[2])},
                          {"e2e_ms", latency_json(latency[3])},
                          {"queue_ms", latency_json(latency[4])},
                          {"preemptions", es.preemptions},
                          {"goodput", goodput},
                          {"engine",
                           {{"steps", es.steps},
                            {"busy_s", es.busy_s},
                            {"batch_mean", es.batch_mean},
                            {"batch_max", es.batch_max},
                            {"tokens_per_step_mean", es.tokens_mean},
                            {"tokens_per_step_max", es.tokens_max},
                            {"prefill_tokens", es.prefill_tokens},
                            {"decode_tokens", es.decode_tokens},
                            {"requests_in_flight_peak", sim.in_flight_peak}}},
                          {"kv_cache",
                           {{"blocks", kv.blocks},
                            {"block_size", engine.block_size},
                            {"bytes_per_block_gpu", kv.bytes_per_block},
                            {"free_bytes_gpu", kv.free_bytes},
                            {"blocks_peak", es.kv_blocks_peak},
                            {"blocks_mean", es.kv_blocks_mean}}},
                          {"calibration", calibration_json}};

  if (config.collectives) report.notes.push_back(collectives_note(config, gpu, *o.deployment.calibration));
  if (run.choice) report.notes.push_back(calibration_note(*run.choice));
  if (calibration) {
    if (calibration->gpu_id != gpu.id) {
      report.notes.push_back(fmt::format("the calibration is for {}, not {}: every op keeps its roofline time",
                                         calibration->gpu_id, gpu.id));
    }
  } else {
    report.notes.push_back(fmt::format(
        "no calibration: every op at its roofline bound{} (datasheet peaks, HBM {:.2f} TB/s)",
        o.deployment.efficiency == "compute=1,memory=1" ? "" : " scaled by --efficiency", gpu.memory_bandwidth_tbps));
  }
  report.notes.push_back(
      "each step is a mixed batch costed by llm's op model: projections, norms and all-reduces at the step's token "
      "count (GEMV form when it has only decode tokens, GEMM form with a prefill chunk), the output head over one row "
      "per request, decode attention over each request's own cache, each prefill chunk causal over its prefix; "
      "ops do not overlap; PP stages run one after another");
  report.notes.push_back(fmt::format(
      "scheduler after vLLM V1: running requests first, FCFS, token budget {} per step, at most {} sequences, "
      "chunked prefill {}, admission {}, paged KV of {} blocks x {} tokens ({:g} of the {:.2f} GB per GPU left after "
      "weights, "
      "reserve and workspace), preemption by recompute; step overhead {:g} us",
      engine.max_num_tokens, engine.max_batch, engine.chunked_prefill ? "on" : "off", policy_name(engine.policy),
      kv.blocks, engine.block_size, o.kv_memory_fraction, kv.free_bytes / 1e9, engine.step_overhead_s * 1e6));
  report.notes.push_back(
      "metrics as vLLM's benchmark_serving states them: TTFT, TPOT = (E2E - TTFT) / (output - 1), ITL per token gap, "
      "E2E; percentiles interpolate linearly (numpy); throughput over first arrival to last finish");
  return report;
}

Fp8AsSixteenBit fp8_kernels(const std::string& flag) {
  if (flag == "measured") return {};
  if (flag == "like-16-bit") return {.gemm = true, .attention = true};
  if (flag == "attention-like-16-bit") return {.gemm = false, .attention = true};
  throw InputError(fmt::format("--fp8-kernels '{}': expected measured, like-16-bit or attention-like-16-bit", flag));
}

ModelSpec with_layers(ModelSpec model, const std::optional<std::int64_t>& layers) {
  if (!layers) return model;
  require_positive(*layers, "--layers", model.layers);
  if (model.moe && *layers < model.moe->dense_layers) {
    throw InputError(fmt::format("--layers {}: {} starts with {} dense layers; give at least that many", *layers,
                                 model.id, model.moe->dense_layers));
  }
  model.layers = *layers;
  return model;
}

}  // namespace

Report run_serve(const ServeOptions& o, const HardwareRegistry& registry) {
  ModelSpec model = with_layers(resolve_model(o.model), o.layers);
  // --- models (issue 19): the engine refuses a request longer than the model's context (prompt +
  // output, each request as it arrives) unless --allow-long-context lifts the limit.
  std::string long_context;
  if (o.model.allow_long_context && model.max_context) {
    long_context = fmt::format(
        "--allow-long-context: requests beyond the {} tokens {} supports are accepted; the model was not trained "
        "that long",
        *model.max_context, model.id);
    model.max_context.reset();
  }
  // --- end models
  const GpuSpec gpu = apply_overrides(registry.find(o.parallelism.gpu), o.what_if);
  DeploymentConfig config;
  apply_format_flags(o.formats, gpu, config);
  // --- models (issue 19): the checkpoint's weight format where --weights is not given.
  const std::string weights_note = apply_checkpoint_format(model, o.formats.weights.has_value(), config);
  const std::optional<CalibrationChoice> choice = apply_deployment_flags(o.deployment, config, gpu, registry);
  const std::optional<Calibration> no_calibration;
  const std::optional<Calibration>& calibration = choice ? choice->calibration : no_calibration;
  TimeOptions time;
  time.describe = false;
  apply_time_flags(o.deployment, calibration, time);
  const int gpus = apply_parallelism_flags(o.parallelism, config);
  time.table_in_place_of = fp8_tables_as_16_bit(model, config, fp8_kernels(o.fp8_kernels));
  if (config.replicas != 1) {
    throw InputError(fmt::format("--gpus {}: serve simulates one replica of TP x PP = {} GPUs", o.parallelism.gpus,
                                 config.tp * config.pp));
  }

  if (o.rate && o.concurrency) throw InputError("--rate and --concurrency: give one of them");
  const std::optional<double> rate = o.rate ? std::optional<double>(parse_rate(*o.rate)) : std::nullopt;
  if (o.concurrency) require_positive(*o.concurrency, "--concurrency", max_batch);
  const Slo slo = o.slo ? parse_slo(*o.slo) : Slo{};

  EngineConfig engine = engine_config(o);
  const KvCache kv = kv_cache(model, gpu, config, engine.block_size, o.kv_memory_fraction);
  engine.kv_blocks = kv.blocks;

  std::unique_ptr<RequestSource> source = workload(o, rate);
  StepCoster coster(model, gpu, config, time, std::max(engine.max_num_tokens, engine.max_batch));
  std::optional<OverheadFit> fit;
  std::vector<RequestSpec> replayed;  // --fit-step-overhead runs the workload many times: kept whole
  if (o.fit_step_overhead) {
    if (o.step_overhead_us != 0) throw InputError("--fit-step-overhead and --step-overhead-us: give one of them");
    while (std::optional<RequestSpec> r = source->next()) replayed.push_back(*r);
    fit = fit_step_overhead(replayed, engine, coster, model, *o.fit_step_overhead);
    engine.step_overhead_s = fit->step_overhead_s;
    source = std::make_unique<VectorSource>(replayed);
  }
  MetricsRecorder recorder(slo);
  IndexedRecords records;  // only for --requests-csv
  EngineRun sim = simulate(*source, engine, coster, model, [&](std::size_t index, const RequestRecord& r) {
    recorder.add(r);
    if (o.requests_csv) records.emplace_back(index, r);
  });
  if (o.requests_csv) write_requests_csv(*o.requests_csv, records);
  const ServeMetrics m = recorder.finish(sim);
  if (o.timeline_svg) {
    write_timeline_svg(*o.timeline_svg, sim, kv.blocks,
                       fmt::format("{} on {} x {} (TP {}): {} requests, {}", model.id, gpus, gpu.id, config.tp,
                                   m.requests, arrivals_text(o, rate)));
  }

  Report report = render_serve({o, model, gpu, config, calibration, choice, gpus, rate, slo, engine, kv}, sim, m);
  if (!weights_note.empty()) report.notes.push_back(weights_note);  // --- models (issue 19)
  if (!long_context.empty()) report.notes.push_back(long_context);  // --- models (issue 19)
  if (fit) {
    report.extra_results["step_overhead_fit"] = {{"measured_output_tokens_per_s", *o.fit_step_overhead},
                                                 {"step_overhead_us", fit->step_overhead_s * 1e6},
                                                 {"simulations", fit->iterations}};
    report.notes.push_back(fmt::format(
        "--fit-step-overhead: {:.1f} us per step reproduces the measured {:g} output tokens/s ({} simulations); "
        "every figure above is at that overhead",
        fit->step_overhead_s * 1e6, *o.fit_step_overhead, fit->iterations));
  }
  if (draws_figures(o.common)) report.figures = plot::serve_figures(report);
  return report;
}

void setup_serve_command(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* command = app.add_subcommand(
      "serve",
      "A serving engine simulated step by step under load: tokens/s, TTFT/TPOT/ITL percentiles, KV, preemptions");
  add_model_options(*command, options->model);
  add_context_limit_option(*command, options->model);  // --- models (issue 19)
  command->add_option("--layers", options->layers,
                      "Simulate only the model's first N decoder layers (embedding and head kept), e.g. 1 for the "
                      "layer suite's check");
  add_parallelism_flags(*command, options->parallelism, "GPUs in all (TP x PP: one replica is simulated)", false);
  add_format_flags(*command, options->formats);
  // Renamed from --prompt/--output, which clashed with -o/--output (docs/reports.md).
  add_renamed_option(*command, "--prompt-tokens", "--prompt", options->prompt, "Prompt tokens per request (fixed)");
  add_renamed_option(*command, "--output-tokens", "--output", options->output, "Output tokens per request (fixed)");
  command->add_option("--prompt-dist", options->prompt_dist,
                      "Prompt lengths: uniform:LO,HI | normal:MEAN,SD | lognormal:MEAN,SD");
  command->add_option("--output-dist", options->output_dist, "Output lengths, as --prompt-dist");
  command->add_option("--trace", options->trace, "Requests from a file: CSV (arrival_s,prompt,output) or JSONL");
  command->add_option("--requests", options->requests, "Requests to simulate (a trace: its first N)");
  command->add_option("--rate", options->rate,
                      "Arrivals: 'inf' (all at time 0) or Poisson requests/s (default: inf, a trace's own times)");
  command->add_option("--concurrency", options->concurrency, "Closed loop: this many requests in flight");
  command->add_option("--seed", options->seed, "Seed of the lengths and arrivals")->capture_default_str();
  command->add_option("--max-batch", options->engine.max_batch, "Sequences per step (vLLM max_num_seqs)")
      ->capture_default_str();
  command
      ->add_option("--max-num-tokens", options->engine.max_num_tokens,
                   "Token budget of one step (vLLM max_num_batched_tokens, TensorRT-LLM max_num_tokens)")
      ->capture_default_str();
  command->add_flag("--no-chunked-prefill", options->no_chunked_prefill,
                    "Schedule a prompt only when it fits the step's budget whole");
  command
      ->add_option("--capacity-policy", options->policy,
                   "Admission: max-utilization (when the first chunk's KV blocks are free; preempt by recompute) "
                   "or guaranteed-no-evict (when the whole request's are)")
      ->capture_default_str();
  command->add_option("--block-size", options->engine.block_size, "Tokens per KV block")->capture_default_str();
  command
      ->add_option("--kv-memory-fraction", options->kv_memory_fraction,
                   "Share of the memory left after weights, reserve and workspace given to the KV cache")
      ->capture_default_str();
  command
      ->add_option("--step-overhead-us", options->step_overhead_us,
                   "Fixed time added to every step (scheduler, sampling, launch gaps)")
      ->capture_default_str();
  command
      ->add_option("--fp8-kernels", options->fp8_kernels,
                   "With a calibration: which kernels cost FP8 GEMMs and attention over an FP8 KV cache: measured "
                   "(the tables measured for FP8), like-16-bit (both at the bf16 kernels' efficiency on the FP8 op's "
                   "own bytes and peak, as engines' FP8 kernels run) or attention-like-16-bit (only the attention; "
                   "docs/serve.md)")
      ->capture_default_str();
  command->add_option("--fit-step-overhead", options->fit_step_overhead,
                      "Learn --step-overhead-us from a run: the measured output tokens/s of this workload");
  command->add_option("--slo", options->slo, "Goodput targets: ttft=MS,tpot=MS");
  command->add_option("--requests-csv", options->requests_csv, "Write one row per request to this CSV file");
  command->add_option("--timeline-svg", options->timeline_svg, "Write the timeline as an SVG chart to this file");
  add_deployment_flags(*command, options->deployment);
  add_what_if_option(*command, options->what_if);
  add_common_options(*command, options->common, false);
  command->callback([options] { emit(run_serve(*options, load_registry(options->common)), options->common); });
}

}  // namespace roofline::cli
