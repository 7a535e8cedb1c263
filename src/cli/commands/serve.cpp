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
#include "roofline/serve/kv_blocks.hpp"
#include "roofline/serve/metrics.hpp"
#include "roofline/serve/pools.hpp"
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
  // --- issue 18: the latency rows of a disaggregated run's stages (prefill, KV transfer, decode queue).
  std::vector<LatencyRow> stage_latency = {};
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
  latency.insert(latency.end(), run.stage_latency.begin(), run.stage_latency.end());

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
  // --- models (issue 19): the cache's attention groups, where the layers do not all attend alike.
  if (const KvBlockLayout layout(model, engine.block_size); layout.groups() > 1 || model.windowed()) {
    std::string kinds;
    for (const KvBlockLayout::Kind& kind : layout.kinds()) {
      kinds += fmt::format("{}{} of {} ({} layers)", kinds.empty() ? "" : ", ", kind.groups, kind.attention.describe(),
                           kind.layers);
    }
    report.notes.push_back(fmt::format(
        "KV cache per attention group (vLLM's hybrid KV cache manager): groups of {} layers, {}; a block holds {} "
        "tokens of one group's layers, and a sliding or chunked group frees the blocks its window has left",
        layout.layers_per_group(), kinds, engine.block_size));
  }
  // --- end models
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

// --- issue 18: a pool of the disaggregated deployment, gpu=G,tp=T,pp=P,ep=E,attention-dp=on|off,count=N.
struct PoolFlags {
  std::string gpu;
  int tp = 1;
  int pp = 1;
  int ep = 1;
  bool attention_dp = false;
  int count = 1;
};

PoolFlags parse_pool(const std::string& text, std::string_view flag, const std::string& default_gpu) {
  PoolFlags pool;
  pool.gpu = default_gpu;
  const auto bad = [&] {
    return InputError(
        fmt::format("{} '{}': expected gpu=G,tp=T,pp=P,ep=E,attention-dp=on|off,count=N (any of them; "
                    "numbers >= 1; gpu defaults to --gpu)",
                    flag, text));
  };
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) throw bad();
    const std::string key = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    if (key == "gpu") {
      pool.gpu = value;
      continue;
    }
    if (key == "attention-dp") {
      if (value != "on" && value != "off") throw bad();
      pool.attention_dp = value == "on";
      continue;
    }
    int number = 0;
    const auto [stop, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (error != std::errc{} || stop != value.data() + value.size() || number < 1 || number > 4096) throw bad();
    if (key == "tp") {
      pool.tp = number;
    } else if (key == "pp") {
      pool.pp = number;
    } else if (key == "ep") {
      pool.ep = number;
    } else if (key == "count") {
      pool.count = number;
    } else {
      throw bad();
    }
  }
  if (pool.gpu.empty()) throw InputError(fmt::format("{} '{}': name the GPU (gpu=G, or --gpu)", flag, text));
  return pool;
}

// One engine setup: its GPU, config, calibration, KV cache and step coster (kept in one place:
// the coster refers to the GPU and the calibration).
struct EngineSetup {
  GpuSpec gpu;
  DeploymentConfig config;
  std::optional<CalibrationChoice> choice;
  TimeOptions time;
  KvCache kv;
  EngineConfig engine;
  std::unique_ptr<StepCoster> coster;
  std::string weights_note;
  int gpus = 1;            // one replica
  std::int64_t lanes = 1;  // replicas x attention-DP ranks
  std::int64_t ranks = 1;  // attention-DP ranks of one replica, in lockstep
};

std::unique_ptr<EngineSetup> engine_setup(const ServeOptions& o, const ModelSpec& model,
                                          const HardwareRegistry& registry, const ParallelismFlags& parallelism,
                                          const ExpertFlags& experts, int count, const EngineConfig& engine,
                                          const std::optional<Speculation>& speculation) {
  auto s = std::make_unique<EngineSetup>();
  s->gpu = apply_overrides(registry.find(parallelism.gpu), o.what_if);
  apply_format_flags(o.formats, s->gpu, s->config);
  // --- models (issue 19): the checkpoint's weight format where --weights is not given.
  s->weights_note = apply_checkpoint_format(model, o.formats.weights.has_value(), s->config);
  s->choice = apply_deployment_flags(o.deployment, s->config, s->gpu, registry);
  static const std::optional<Calibration> no_calibration;
  s->time.describe = false;
  apply_time_flags(o.deployment, s->choice ? s->choice->calibration : no_calibration, s->time);
  s->gpus = apply_parallelism_flags(parallelism, s->config);
  apply_expert_flags(experts, s->config);
  s->time.table_in_place_of = fp8_tables_as_16_bit(model, s->config, fp8_kernels(o.fp8_kernels));
  if (s->config.replicas != 1) {
    throw InputError(fmt::format("--gpus {}: serve simulates one replica of TP x PP = {} GPUs", parallelism.gpus,
                                 s->config.tp * s->config.pp));
  }
  s->engine = engine;
  s->kv = kv_cache(model, s->gpu, s->config, engine.block_size, o.kv_memory_fraction, speculation);
  s->engine.kv_blocks = s->kv.blocks;
  if (speculation) {
    s->engine.draft_tokens = speculation->draft_tokens;
    s->engine.accepted_per_verify = expected_tokens_per_verify(*speculation);
  }
  s->coster = std::make_unique<StepCoster>(
      model, s->gpu, s->config, s->time,
      std::max(engine.max_num_tokens, engine.max_batch) * (1 + (speculation ? speculation->draft_tokens : 0)),
      speculation);
  s->ranks = s->coster->sharding().attention_dp;
  s->lanes = static_cast<std::int64_t>(count) * s->ranks;
  s->gpus *= count;
  return s;
}

nlohmann::json pool_json(const EngineSetup& s, const PoolFlags& flags, const PoolRun& run) {
  return {{"gpu", s.gpu.id},
          {"tp", flags.tp},
          {"pp", flags.pp},
          {"ep", flags.ep},
          {"attention_dp", flags.attention_dp},
          {"count", flags.count},
          {"gpus", s.gpus},
          {"engines", run.lanes},
          {"kv_blocks_per_engine", s.kv.blocks},
          {"steps", run.engine.steps},
          {"dummy_steps", run.engine.dummy_steps},
          {"busy_s", run.engine.busy_s},
          {"utilisation", run.utilisation()},
          {"batch_mean", run.engine.batch_mean},
          {"batch_max", run.engine.batch_max},
          {"tokens_per_step_mean", run.engine.tokens_mean},
          {"kv_blocks_peak", run.engine.kv_blocks_peak},
          {"preemptions", run.engine.preemptions}};
}

struct PoolRow {
  std::string pool;
  nlohmann::json figures;
};

constexpr std::array<ColumnOf<PoolRow>, 9> pool_columns{{
    {{"pool", "pool", 0}, [](const PoolRow& r) { return Cell{r.pool}; }},
    {{"gpu", "GPU", 0}, [](const PoolRow& r) { return Cell{r.figures["gpu"].get<std::string>()}; }},
    {{"layout", "TP/PP/EP/attention DP", 0},
     [](const PoolRow& r) {
       return Cell{fmt::format("{}/{}/{}/{}", r.figures["tp"].get<int>(), r.figures["pp"].get<int>(),
                               r.figures["ep"].get<int>(), r.figures["attention_dp"].get<bool>() ? "on" : "off")};
     }},
    {{"count", "replicas", 0}, [](const PoolRow& r) { return Cell{r.figures["count"].get<std::int64_t>()}; }},
    {{"gpus", "GPUs", 0}, [](const PoolRow& r) { return Cell{r.figures["gpus"].get<std::int64_t>()}; }},
    {{"engines", "engines", 0}, [](const PoolRow& r) { return Cell{r.figures["engines"].get<std::int64_t>()}; }},
    {{"utilisation", "busy", 3}, [](const PoolRow& r) { return Cell{r.figures["utilisation"].get<double>()}; }},
    {{"batch_mean", "batch, mean", 1}, [](const PoolRow& r) { return Cell{r.figures["batch_mean"].get<double>()}; }},
    {{"steps", "steps", 0}, [](const PoolRow& r) { return Cell{r.figures["steps"].get<std::int64_t>()}; }},
}};

std::string pool_text(const PoolFlags& p) {
  return fmt::format("gpu={},tp={},pp={},ep={},attention-dp={},count={}", p.gpu, p.tp, p.pp, p.ep,
                     p.attention_dp ? "on" : "off", p.count);
}

LatencyStats stats_of(Distribution& d) {
  return {d.count(), d.mean(), d.percentile(50), d.percentile(90), d.percentile(99), d.max()};
}

// serve --disaggregate: a prefill pool and a decode pool (roofline/serve/pools.hpp).
Report run_disaggregated(const ServeOptions& o, const ModelSpec& model, const HardwareRegistry& registry,
                         const std::optional<Speculation>& speculation, const std::optional<double>& rate,
                         const Slo& slo, const EngineConfig& engine) {
  if (!o.prefill_pool || !o.decode_pool) throw InputError("--disaggregate: give --prefill-pool and --decode-pool");
  if (o.fit_step_overhead) throw InputError("--fit-step-overhead: one engine only (not with --disaggregate)");
  if (o.parallelism.tp != 1 || o.parallelism.pp != 1 || o.parallelism.gpus != 0 || o.experts.ep != 1 ||
      o.experts.attention_dp) {
    throw InputError(
        "--disaggregate: each pool states its own layout (--prefill-pool/--decode-pool tp=,pp=,ep=,attention-dp=); "
        "leave out --gpus, --tp, --pp, --ep and --attention-dp");
  }
  const PoolFlags prefill_flags = parse_pool(*o.prefill_pool, "--prefill-pool", o.parallelism.gpu);
  const PoolFlags decode_flags = parse_pool(*o.decode_pool, "--decode-pool", o.parallelism.gpu);
  const auto setup = [&](const PoolFlags& p, std::string_view flag, const std::optional<Speculation>& s) {
    ParallelismFlags parallelism{p.gpu, 0, p.tp, p.pp};
    ExpertFlags experts{p.ep, p.attention_dp, o.experts.imbalance};
    try {
      return engine_setup(o, model, registry, parallelism, experts, p.count, engine, s);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{} {}: {}", flag, pool_text(p), e.what()));
    }
  };
  // The prefill pool runs prompts only: speculation drafts in the decode pool.
  const std::unique_ptr<EngineSetup> prefill = setup(prefill_flags, "--prefill-pool", std::nullopt);
  const std::unique_ptr<EngineSetup> decode = setup(decode_flags, "--decode-pool", speculation);

  // The default: each prefill GPU sends its part of the cache over its own scale-out NIC.
  KvLink link = default_kv_link(model, prefill->gpu, prefill->config);
  if (o.kv_link_gbps) {
    if (!(*o.kv_link_gbps > 0))
      throw InputError(fmt::format("--kv-link-gbps {}: must be > 0 (or inf)", *o.kv_link_gbps));
    link.bytes_per_s = *o.kv_link_gbps * 1e9;
  }
  if (o.kv_link_latency_us) {
    if (!(*o.kv_link_latency_us >= 0) || !std::isfinite(*o.kv_link_latency_us)) {
      throw InputError(fmt::format("--kv-link-latency-us {}: must be a number >= 0", *o.kv_link_latency_us));
    }
    link.latency_s = *o.kv_link_latency_us * 1e-6;
  }

  const SourceFactory source = [&] { return workload(o, rate); };
  MetricsRecorder recorder(slo);
  IndexedRecords records;
  DisaggregatedRun run =
      simulate_disaggregated(source, {prefill->engine, prefill->coster.get(), &model, prefill->lanes, prefill->ranks},
                             {decode->engine, decode->coster.get(), &model, decode->lanes, decode->ranks}, link,
                             [&](std::size_t index, const RequestRecord& r) {
                               recorder.add(r);
                               if (o.requests_csv) records.emplace_back(index, r);
                             });
  if (o.requests_csv) write_requests_csv(*o.requests_csv, records);
  const ServeMetrics m = recorder.finish(run.overall);
  if (o.timeline_svg) {
    write_timeline_svg(*o.timeline_svg, run.decode, decode->kv.blocks,
                       fmt::format("{}: decode pool, its first engine ({})", model.id, pool_text(decode_flags)));
  }
  const int gpus = prefill->gpus + decode->gpus;
  std::vector<LatencyRow> stages{
      latency_row("prefill_pool", "arrival to the end of the prefill pool's step that completes the prompt",
                  stats_of(run.prefill_s)),
      latency_row("kv_transfer", "the request's KV over the link: bytes / bandwidth + latency",
                  stats_of(run.transfer_s)),
      latency_row("decode_queue", "arrival at the decode pool to its first step there", stats_of(run.decode_queue_s)),
  };
  const std::optional<Calibration> no_calibration;
  const std::optional<Calibration>& calibration = decode->choice ? decode->choice->calibration : no_calibration;
  Report report = render_serve({o, model, decode->gpu, decode->config, calibration, decode->choice, gpus, rate, slo,
                                decode->engine, decode->kv, stages},
                               run.overall, m);
  const auto ms = [](const LatencyRow& r) { return latency_json(r); };
  report.inputs["disaggregation"] = {
      {"prefill_pool", pool_text(prefill_flags)},
      {"decode_pool", pool_text(decode_flags)},
      {"kv_link_gbps", std::isinf(link.bytes_per_s) ? nlohmann::json("inf") : nlohmann::json(link.bytes_per_s / 1e9)},
      {"kv_link_latency_us", link.latency_s * 1e6}};
  if (speculation) report.inputs["speculation"] = speculation_json(*speculation);
  report.extra_results["disaggregation"] = {{"prefill_pool", pool_json(*prefill, prefill_flags, run.prefill)},
                                            {"decode_pool", pool_json(*decode, decode_flags, run.decode)},
                                            {"kv_bytes_per_token", link.kv_bytes_per_token},
                                            {"prefill_ms", ms(stages[0])},
                                            {"transfer_ms", ms(stages[1])},
                                            {"decode_queue_ms", ms(stages[2])}};
  const std::vector<PoolRow> pools{{"prefill", report.extra_results["disaggregation"]["prefill_pool"]},
                                   {"decode", report.extra_results["disaggregation"]["decode_pool"]}};
  report.tables.insert(report.tables.begin() + 1,
                       Table::from_rows<PoolRow>("pools", "Pools (disaggregated prefill/decode)", pool_columns, pools));
  report.notes.push_back(fmt::format(
      "disaggregated: {} prefill engines ({}) and {} decode engines ({}), requests dealt round-robin in each pool; "
      "each request's KV ({:.0f} bytes per token, every layer) moves at {} + {:g} us, transfers not sharing the link; "
      "TTFT = prefill queue + prefill + transfer + decode queue + the decode pool's first step (which yields the first "
      "output token, as vLLM's KV connectors and Dynamo stream it); TPOT from the decode pool's steps; the KV and "
      "latency figures above are the decode pool's, its first engine's timeline",
      prefill->lanes, pool_text(prefill_flags), decode->lanes, pool_text(decode_flags), link.kv_bytes_per_token,
      std::isinf(link.bytes_per_s) ? std::string("no transfer time") : fmt::format("{:g} GB/s", link.bytes_per_s / 1e9),
      link.latency_s * 1e6));
  if (!decode->weights_note.empty()) report.notes.push_back(decode->weights_note);
  if (draws_figures(o.common)) report.figures = plot::serve_figures(report);
  return report;
}

// The notes and figures of expert parallelism, attention DP and speculation in a report.
void add_deployment_modes(Report& report, const ServeOptions& o, const ModelSpec& model, const EngineSetup& s,
                          const PoolRun& run, const std::optional<Speculation>& speculation, const ServeMetrics& m) {
  if (model.moe) report.inputs["expert_layout"] = expert_flags_json(o.experts);
  const Sharding& sharding = s.coster->sharding();
  if (sharding.attention_dp > 1) {
    const std::int64_t rank_steps = run.lockstep_steps * sharding.attention_dp;
    const double idle_share =
        rank_steps > 0 ? static_cast<double>(run.engine.dummy_steps) / static_cast<double>(rank_steps) : 0.0;
    report.extra_results["attention_dp"] = {{"ranks", sharding.attention_dp},
                                            {"kv_blocks_per_rank", s.kv.blocks},
                                            {"kv_blocks_all_ranks", s.kv.blocks * sharding.attention_dp},
                                            {"running_peak", run.running_peak},
                                            {"lockstep_steps", run.lockstep_steps},
                                            {"dummy_steps", run.engine.dummy_steps},
                                            {"idle_share", idle_share}};
    report.notes.push_back(fmt::format(
        "attention DP over {} ranks in lockstep: each rank schedules its own requests (dealt round-robin) in its own "
        "{} KV blocks, --max-batch and --max-num-tokens per rank (TensorRT-LLM's max_batch_size under "
        "enable_attention_dp); every step lasts as long as the slowest rank's (its own attention, the MoE layers over "
        "every rank's tokens), and a rank with nothing scheduled runs a dummy step ({} of {} rank steps, {:.1f}%); "
        "the engine figures above are summed or maximised over the ranks, the timeline is rank 0's",
        sharding.attention_dp, s.kv.blocks, run.engine.dummy_steps, rank_steps, 100.0 * idle_share));
  }
  if (speculation) {
    report.inputs["speculation"] = speculation_json(*speculation);
    const std::int64_t queries = 1 + speculation->draft_tokens;
    const std::int64_t verifies = run.engine.decode_tokens / queries;
    // The first output token of each request comes from its prefill, every other from a verify step.
    const double per_verify =
        verifies > 0 ? static_cast<double>(m.output_tokens - m.requests) / static_cast<double>(verifies) : 0.0;
    report.extra_results["speculation"] = {{"draft_tokens", speculation->draft_tokens},
                                           {"expected_tokens_per_verify", s.engine.accepted_per_verify},
                                           {"verify_steps", verifies},
                                           {"tokens_per_verify", per_verify},
                                           {"draft_weight_bytes_gpu", s.kv.draft_weight_bytes}};
    report.notes.push_back(fmt::format(
        "speculation: every decode step is a verify step of {} tokens per request ({} drafts from {}), which yields "
        "{:.3f} tokens in expectation (each request emits the whole ones as they accrue); the drafter's passes are "
        "costed in the step; its weights ({:.2f} GB per GPU) and cache come off the KV blocks",
        queries, speculation->draft_tokens, speculation->draft_model ? speculation->draft_model->id : "the MTP module",
        s.engine.accepted_per_verify, s.kv.draft_weight_bytes / 1e9));
  }
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
  const std::optional<Speculation> speculation = resolve_speculation(o.speculation, o.model.models_dirs);
  if (o.rate && o.concurrency) throw InputError("--rate and --concurrency: give one of them");
  const std::optional<double> rate = o.rate ? std::optional<double>(parse_rate(*o.rate)) : std::nullopt;
  if (o.concurrency) require_positive(*o.concurrency, "--concurrency", max_batch);
  const Slo slo = o.slo ? parse_slo(*o.slo) : Slo{};
  const EngineConfig engine_flags = engine_config(o);
  if (o.disaggregate) {
    Report report = run_disaggregated(o, model, registry, speculation, rate, slo, engine_flags);
    if (!long_context.empty()) report.notes.push_back(long_context);  // --- models (issue 19)
    return report;
  }
  if (o.prefill_pool || o.decode_pool || o.kv_link_gbps || o.kv_link_latency_us) {
    throw InputError("--prefill-pool, --decode-pool and --kv-link-*: only with --disaggregate");
  }

  const std::unique_ptr<EngineSetup> setup =
      engine_setup(o, model, registry, o.parallelism, o.experts, 1, engine_flags, speculation);
  const GpuSpec& gpu = setup->gpu;
  const DeploymentConfig& config = setup->config;
  const std::optional<CalibrationChoice>& choice = setup->choice;
  const std::optional<Calibration> no_calibration;
  const std::optional<Calibration>& calibration = choice ? choice->calibration : no_calibration;
  const int gpus = setup->gpus;
  EngineConfig& engine = setup->engine;
  const KvCache& kv = setup->kv;
  StepCoster& coster = *setup->coster;

  std::unique_ptr<RequestSource> source = workload(o, rate);
  std::optional<OverheadFit> fit;
  std::vector<RequestSpec> replayed;  // --fit-step-overhead runs the workload many times: kept whole
  if (o.fit_step_overhead) {
    if (o.step_overhead_us != 0) throw InputError("--fit-step-overhead and --step-overhead-us: give one of them");
    if (setup->lanes > 1) throw InputError("--fit-step-overhead: one engine only (not with --attention-dp)");
    while (std::optional<RequestSpec> r = source->next()) replayed.push_back(*r);
    fit = fit_step_overhead(replayed, engine, coster, model, *o.fit_step_overhead);
    engine.step_overhead_s = fit->step_overhead_s;
  }
  const SourceFactory sources = [&]() -> std::unique_ptr<RequestSource> {
    if (fit) return std::make_unique<VectorSource>(replayed);
    if (source) return std::move(source);  // the first lane reads the stream already opened
    return workload(o, rate);
  };
  MetricsRecorder recorder(slo);
  IndexedRecords records;  // only for --requests-csv
  PoolRun sim = simulate_pool(sources, {engine, &coster, &model, setup->lanes, setup->ranks},
                              [&](std::size_t index, const RequestRecord& r) {
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
  add_deployment_modes(report, o, model, *setup, sim, speculation, m);
  if (!setup->weights_note.empty()) report.notes.push_back(setup->weights_note);  // --- models (issue 19)
  if (!long_context.empty()) report.notes.push_back(long_context);                // --- models (issue 19)
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
  // --- issue 18: deployment modes and disaggregated prefill/decode (docs/deployment-modes.md).
  add_expert_flags(*command, options->experts);
  add_speculation_flags(*command, options->speculation);
  command->add_flag("--disaggregate", options->disaggregate,
                    "Prefill and decode on separate pools (--prefill-pool, --decode-pool), the KV moved between them");
  command->add_option("--prefill-pool", options->prefill_pool,
                      "The prefill pool: gpu=G,tp=T,pp=P,ep=E,attention-dp=on|off,count=N (replicas; gpu: --gpu)");
  command->add_option("--decode-pool", options->decode_pool, "The decode pool, as --prefill-pool");
  command->add_option("--kv-link-gbps", options->kv_link_gbps,
                      "GB/s of one request's KV transfer between the pools (default: --scale-out-gbps x the prefill "
                      "pool's TP x PP GPUs, each over its own NIC); 'inf' for none");
  command->add_option("--kv-link-latency-us", options->kv_link_latency_us,
                      "Latency of one KV transfer (default: --scale-out-latency-us)");
  add_what_if_option(*command, options->what_if);
  add_common_options(*command, options->common, false);
  command->callback([options] { emit(run_serve(*options, load_registry(options->common)), options->common); });
}

}  // namespace roofline::cli
