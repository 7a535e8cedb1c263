// The charts of a report from its tables (roofline/plot/report_figures.hpp).
#include "roofline/plot/report_figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "roofline/plot/timeline.hpp"

namespace roofline::plot {
namespace {

// A table's columns read by their JSON key, so a chart names the same figures the JSON does.
class TableView {
 public:
  explicit TableView(const Table& table) : table_(table) {}

  [[nodiscard]] bool has(std::string_view key) const { return index(key).has_value(); }
  [[nodiscard]] std::size_t rows() const { return table_.rows.size(); }

  [[nodiscard]] std::optional<double> number(std::size_t row, std::string_view key) const {
    const std::optional<std::size_t> c = index(key);
    if (!c) return std::nullopt;
    const Cell& cell = table_.rows[row][*c];
    if (const auto* d = std::get_if<double>(&cell)) return *d;
    if (const auto* i = std::get_if<std::int64_t>(&cell)) return static_cast<double>(*i);
    return std::nullopt;
  }
  [[nodiscard]] double number_or(std::size_t row, std::string_view key, double fallback) const {
    return number(row, key).value_or(fallback);
  }
  [[nodiscard]] std::string text(std::size_t row, std::string_view key) const {
    const std::optional<std::size_t> c = index(key);
    if (!c) return "";
    return human_cell(table_.rows[row][*c], table_.columns[*c].decimals);
  }

 private:
  [[nodiscard]] std::optional<std::size_t> index(std::string_view key) const {
    for (std::size_t c = 0; c < table_.columns.size(); ++c) {
      if (table_.columns[c].key == key) return c;
    }
    return std::nullopt;
  }
  const Table& table_;
};

const Table* find_table(const Report& report, std::string_view name) {
  const auto found =
      std::find_if(report.tables.begin(), report.tables.end(), [name](const Table& t) { return t.name == name; });
  return found == report.tables.end() ? nullptr : &*found;
}

Figure figure(std::string id, std::string title, std::string_view svg, std::string caption) {
  return {std::move(id), std::move(title), inline_svg(svg), std::move(caption)};
}

// The ops of one llm step table as roofline points: FLOPs / time at their intensity.
void add_step_points(Chart& chart, const Table& table, std::string_view phase) {
  const TableView ops(table);
  for (std::size_t r = 0; r < ops.rows(); ++r) {
    const std::optional<double> intensity = ops.number(r, "intensity_flop_per_byte");
    const double gflop = ops.number_or(r, "gflop", 0);
    const double time_us = ops.number_or(r, "time_us", 0);
    if (!intensity || !(*intensity > 0) || !(gflop > 0) || !(time_us > 0)) continue;
    chart.points.push_back({fmt::format("{} {} {}", phase, ops.text(r, "group"), ops.text(r, "name")), *intensity,
                            gflop * 1e9 / (time_us * 1e-6), PointKind::model});
  }
}

// One bar of a step: its ops' time per step (one instance x count), by op name in order.
Bar step_bar(const Table& table, std::string label) {
  const TableView ops(table);
  std::vector<BarSegment> segments;
  double total_ms = 0;
  for (std::size_t r = 0; r < ops.rows(); ++r) {
    const double ms = ops.number_or(r, "time_us", 0) * ops.number_or(r, "count", 1) / 1e3;
    total_ms += ms;
    const std::string name = ops.text(r, "name");
    const auto same =
        std::find_if(segments.begin(), segments.end(), [&](const BarSegment& s) { return s.label == name; });
    if (same == segments.end()) {
      segments.push_back({name, ms, ""});
    } else {
      same->value += ms;
    }
  }
  for (BarSegment& s : segments) {
    s.tooltip = fmt::format("{} {}: {:.4g} ms per step ({:.1f}% of {:.4g} ms)", label, s.label, s.value,
                            total_ms > 0 ? 100.0 * s.value / total_ms : 0.0, total_ms);
  }
  return {std::move(label), std::move(segments), fmt::format("{:.4g} ms", total_ms)};
}

}  // namespace

std::string roof_label(PeakClass peak) {
  std::string label(name_of(peak));
  std::replace(label.begin(), label.end(), '_', ' ');
  return label;
}

Chart gpu_roofline(const GpuSpec& gpu, std::string title) {
  Chart chart;
  chart.title = std::move(title);
  for (std::size_t i = 0; i < peak_class_names.size(); ++i) {
    const auto peak = static_cast<PeakClass>(i);
    if (const std::optional<double> flops = gpu.peak_flops(peak)) {
      chart.compute_roofs.push_back({roof_label(peak), *flops, Provenance::datasheet});
    }
  }
  chart.memory_roofs.push_back({gpu.memory_type, gpu.memory_bandwidth_bytes_per_s(), Provenance::datasheet});
  return chart;
}

std::string inline_svg(std::string_view svg) {
  if (svg.starts_with("<?xml")) svg.remove_prefix(std::min(svg.size(), svg.find('\n') + 1));
  return std::string(svg);
}

std::vector<Figure> llm_figures(const Report& report, const GpuSpec& gpu) {
  std::vector<Figure> figures;
  const Table* decode = find_table(report, "decode");
  const Table* prefill = find_table(report, "prefill");
  if (decode != nullptr && prefill != nullptr) {
    Chart chart = gpu_roofline(gpu, fmt::format("Decode and prefill ops on the roofline of {}", gpu.name));
    add_step_points(chart, *decode, "decode");
    add_step_points(chart, *prefill, "prefill");
    figures.push_back(figure("roofline", "The ops on the roofline", render_svg(chart),
                             "Each op of the decode step and the prefill at its intensity (FLOPs / bytes read + "
                             "written) and FLOPs / its time, from the decode and prefill tables; hover a point for "
                             "its name. Roofs: the datasheet peaks and HBM bandwidth."));
    BarChart bars{"Where the time goes: decode step and prefill, by op",
                  "share of the step [%]",
                  {step_bar(*decode, "decode step"), step_bar(*prefill, "prefill")},
                  true};
    figures.push_back(figure("steps", "Decode step and prefill by op", render_bar_chart_svg(bars),
                             "Each op's time per step (time of one instance x its count, the tables' time_us x "
                             "count), as a share of the step; ops do not overlap, so the shares add up to the step."));
  }
  if (const Table* memory = find_table(report, "memory")) {
    const TableView stages(*memory);
    const double capacity_gb = gpu.memory_capacity_bytes() / 1e9;
    const double batch = report.extra_results.value("batch", 0.0);
    BarChart chart{
        fmt::format("Memory per GPU of {} ({:.4g} GB)", gpu.id, capacity_gb), "memory per GPU [GB]", {}, false};
    for (std::size_t r = 0; r < stages.rows(); ++r) {
      const double weights = stages.number_or(r, "weights_gb", 0);
      const double free = stages.number_or(r, "free_gb", 0);
      const double kv = std::min(std::max(free, 0.0), batch * stages.number_or(r, "kv_per_request_gb", 0));
      const double reserve = std::max(capacity_gb - weights - std::max(free, 0.0), 0.0);
      const std::string stage = stages.text(r, "stage");
      chart.bars.push_back({fmt::format("stage {}", stage),
                            {{"weights", weights, fmt::format("stage {} weights: {:.4g} GB", stage, weights)},
                             {"KV cache of the batch", kv,
                              fmt::format("stage {} KV cache of {:g} requests: {:.4g} GB", stage, batch, kv)},
                             {"free for more KV", std::max(free, 0.0) - kv,
                              fmt::format("stage {} free for more KV: {:.4g} GB", stage, std::max(free, 0.0) - kv)},
                             {"reserve and workspace", reserve,
                              fmt::format("stage {} reserve and workspace: {:.4g} GB", stage, reserve)}},
                            fmt::format("{:.4g} GB", capacity_gb)});
    }
    if (!chart.bars.empty()) {
      figures.push_back(figure("memory", "Memory per GPU", render_bar_chart_svg(chart),
                               "Per pipeline stage, from the memory table: weights_gb, the batch's KV cache (batch x "
                               "kv_per_request_gb), the rest of free_gb, and the capacity's remainder (the reserve "
                               "and workspace)."));
    }
  }
  return figures;
}

std::vector<Figure> serve_figures(const Report& report) {
  std::vector<Figure> figures;
  if (const Table* timeline = find_table(report, "timeline")) {
    const TableView points(*timeline);
    if (points.rows() > 0) {
      TimelineChart chart;
      chart.title = "Engine over time";
      TimelineLine running{"running", {}}, waiting{"waiting", {}}, kv{"KV blocks in use", {}}, output{"output", {}},
          prefill{"prefill", {}};
      for (std::size_t r = 0; r < points.rows(); ++r) {
        chart.time_s.push_back(points.number_or(r, "time_s", 0));
        running.values.push_back(points.number_or(r, "running", 0));
        waiting.values.push_back(points.number_or(r, "waiting", 0));
        kv.values.push_back(100.0 * points.number_or(r, "kv_use", 0));
        output.values.push_back(points.number_or(r, "output_tokens_per_s", 0));
        prefill.values.push_back(points.number_or(r, "prefill_tokens_per_s", 0));
      }
      chart.panels = {{"requests", {std::move(running), std::move(waiting)}},
                      {"KV cache in use [%]", {std::move(kv)}},
                      {"tokens/s", {std::move(output), std::move(prefill)}}};
      figures.push_back(figure("timeline", "Timeline", render_timeline_svg(chart),
                               "The timeline table: requests running and waiting, KV blocks in use, and tokens/s "
                               "over the run."));
    }
  }
  if (const Table* latency = find_table(report, "latency")) {
    const TableView metrics(*latency);
    ScatterChart chart{
        "Latency percentiles per request", "percentile", "latency [ms]", Scale::linear, Scale::log, {}, {}, false};
    constexpr std::array<std::pair<std::string_view, double>, 4> percentiles{
        {{"p50_ms", 50}, {"p90_ms", 90}, {"p99_ms", 99}, {"max_ms", 100}}};
    for (std::size_t r = 0; r < metrics.rows(); ++r) {
      ScatterSeries series{metrics.text(r, "metric"), {}, true};
      for (const auto& [key, percentile] : percentiles) {
        const std::optional<double> ms = metrics.number(r, key);
        if (!ms || !(*ms > 0)) continue;
        series.points.push_back({fmt::format("{} {}", series.name, key), percentile, *ms,
                                 fmt::format("{} {}: {:.4g} ms", series.name, key.substr(0, key.size() - 3), *ms)});
      }
      if (!series.points.empty()) chart.series.push_back(std::move(series));
    }
    if (!chart.series.empty()) {
      figures.push_back(figure("latency", "Latency distributions", render_scatter_svg(chart),
                               "Each metric of the latency table at its p50, p90, p99 and max (drawn at 100): the "
                               "upper part of its distribution over requests."));
    }
  }
  return figures;
}

ScatterChart plan_candidates_chart(const Table& candidates, double tpot_target_ms, std::string title) {
  const TableView rows(candidates);
  ScatterChart chart{
      std::move(title), "TPOT [ms]", "cost [$ per million output tokens]", Scale::linear, Scale::linear, {}, {}, false};
  std::map<std::string, std::size_t> series_of;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    const std::optional<double> tpot = rows.number(r, "tpot_ms");
    const std::optional<double> cost = rows.number(r, "usd_per_million_output_tokens");
    if (!tpot || !cost) continue;
    const std::string gpu = rows.text(r, "gpu");
    if (!series_of.contains(gpu)) {
      series_of[gpu] = chart.series.size();
      chart.series.push_back({gpu, {}, false});
    }
    const std::string label =
        fmt::format("#{} {} TP{} PP{} {}/{} batch {}", rows.text(r, "rank"), gpu, rows.text(r, "tp"),
                    rows.text(r, "pp"), rows.text(r, "weights"), rows.text(r, "kv"), rows.text(r, "batch"));
    chart.series[series_of[gpu]].points.push_back(
        {label, *tpot, *cost,
         fmt::format("{}: TPOT {:.4g} ms, TTFT {} ms, ${:.4g} per M tokens, {} GPUs", label, *tpot,
                     rows.text(r, "ttft_ms"), *cost, rows.text(r, "gpus_total"))});
  }
  if (tpot_target_ms > 0) chart.references.push_back({"TPOT target", tpot_target_ms, true});
  return chart;
}

std::vector<Figure> plan_figures(const Report& report) {
  std::vector<Figure> figures;
  const Table* ranked = find_table(report, "ranked");
  if (ranked == nullptr || ranked->rows.empty()) return figures;
  double target = 0;
  if (report.inputs.contains("workload")) target = report.inputs["workload"].value("tpot_ms", 0.0);
  const ScatterChart chart = plan_candidates_chart(*ranked, target, "Candidates: TPOT against cost");
  if (chart.series.empty()) return figures;
  figures.push_back(figure("candidates", "Candidates", render_scatter_svg(chart),
                           "The ranked table's deployments (cheapest first), one colour per GPU: TPOT against the "
                           "cost of a million output tokens; rejected candidates are counted in the rejection "
                           "summary."));
  return figures;
}

// ---- plan --pareto
ScatterChart pareto_front_chart(const Report& report) {
  ScatterChart chart;
  chart.title = "Pareto front: tokens/s per GPU against tokens/s per user";
  chart.x_label = "tokens/s per user (1 / TPOT)";
  chart.y_label = "output tokens/s per GPU";
  chart.x_scale = Scale::log;
  chart.y_scale = Scale::log;
  // Aggregated points are circles; disaggregated ones (a prefill and a decode pool) diamonds.
  ScatterSeries dominated{"dominated (sample)", {}, false, "#b8b8b8", 0.5, 2.5};
  ScatterSeries dominated_pools{
      "dominated, disaggregated (sample)", {}, false, "#b8b8b8", 0.5, 2.5, ScatterMark::diamond};
  ScatterSeries front{"front (runners-up)", {}, true, std::string(chart_colour(0)), 0.85, 4};
  ScatterSeries front_pools{"front, disaggregated prefill/decode pools",
                            {},
                            false,
                            std::string(chart_colour(1)),
                            0.9,
                            4.5,
                            ScatterMark::diamond};
  ScatterSeries chosen{"chosen", {}, false, "#c00000", 1.0, 7};
  std::vector<ScatterPoint> front_line;  // every front point, in order, for the line
  bool chosen_pools = false;
  const auto add = [&](const Table& table, ScatterSeries& series, ScatterSeries& pools, bool on_front) {
    const TableView rows(table);
    for (std::size_t r = 0; r < rows.rows(); ++r) {
      const std::optional<double> x = rows.number(r, "tokens_per_s_per_user");
      const std::optional<double> y = rows.number(r, "tokens_per_s_per_gpu");
      if (!x || !y) continue;
      const bool disaggregated = rows.text(r, "mode") == "disaggregated";
      const std::string decode = fmt::format(
          "TP {} PP {} EP {}{} {}/{}{} batch {}", rows.text(r, "tp"), rows.text(r, "pp"), rows.text(r, "ep"),
          rows.text(r, "attention_dp") == "yes" ? " attention-DP" : "", rows.text(r, "weights"), rows.text(r, "kv"),
          rows.text(r, "draft_tokens") == "0" ? std::string()
                                              : fmt::format(" speculate {}", rows.text(r, "draft_tokens")),
          rows.text(r, "batch"));
      const std::string label = disaggregated
                                    ? fmt::format("{} prefill {} x {} : decode {} x {}", rows.text(r, "gpu"),
                                                  rows.text(r, "prefill_replicas"), rows.text(r, "prefill_pool"),
                                                  rows.text(r, "decode_replicas"), decode)
                                    : fmt::format("{} {}", rows.text(r, "gpu"), decode);
      ScatterPoint point{label, *x, *y,
                         fmt::format("{}: {:.1f} tokens/s per user, {:.1f} tokens/s per GPU", label, *x, *y)};
      if (on_front) {
        front_line.push_back(point);
        if (rows.text(r, "chosen") == "yes") {
          chosen.points.push_back(point);
          chosen_pools = disaggregated;
        }
      }
      (disaggregated ? pools : series).points.push_back(std::move(point));
    }
  };
  if (const Table* sample = find_table(report, "dominated_sample")) add(*sample, dominated, dominated_pools, false);
  if (const Table* table = find_table(report, "front")) add(*table, front, front_pools, true);
  if (chosen_pools) chosen.mark = ScatterMark::diamond;
  std::vector<ScatterSeries*> drawn{&dominated, &dominated_pools, &front, &front_pools, &chosen};
  std::optional<ScatterSeries> line;
  if (!front_pools.points.empty()) {
    // Both kinds on the front: the line runs through all of its points, each kind marked by its own
    // series (a report without disaggregated points keeps one series, line and circles).
    line =
        ScatterSeries{"front", std::move(front_line), true, std::string(chart_colour(0)), 0.85, 4, ScatterMark::none};
    front.connect = false;
    front.name = "front, aggregated";
    drawn.insert(drawn.begin() + 2, &*line);
  }
  for (ScatterSeries* series : drawn) {
    if (!series->points.empty()) chart.series.push_back(std::move(*series));
  }
  if (report.inputs.contains("workload")) {
    const nlohmann::json& tpot = report.inputs["workload"]["tpot_ms"];
    if (tpot.is_number() && tpot.get<double>() > 0) {
      chart.references.push_back({fmt::format("TPOT {:g} ms", tpot.get<double>()), 1e3 / tpot.get<double>(), true});
    }
  }
  return chart;
}

std::string render_pareto_svg(const Report& report) {
  return render_scatter_svg(pareto_front_chart(report));
}

std::vector<Figure> pareto_figures(const Report& report) {
  std::vector<Figure> figures;
  const ScatterChart chart = pareto_front_chart(report);
  if (chart.series.empty()) return figures;
  figures.push_back(figure("pareto-front", "Pareto front", render_scatter_svg(chart),
                           "The front table's points joined by a line, the chosen one in red, and the dominated "
                           "sample in grey: a point is on the front when no other is at least as fast both per user "
                           "and per GPU and faster in one. Circles are aggregated replicas, diamonds disaggregated "
                           "prefill/decode pools."));
  return figures;
}
// ---- end plan --pareto

std::vector<Figure> validate_figures(const Report& report) {
  std::vector<Figure> figures;
  const Table* benchmarks = find_table(report, "benchmarks");
  if (benchmarks == nullptr) return figures;
  const TableView rows(*benchmarks);
  ScatterChart chart{"Predicted against measured time per launch",
                     "measured [us]",
                     "predicted [us]",
                     Scale::log,
                     Scale::log,
                     {{"roofline", {}, false}, {"calibrated", {}, false}},
                     {},
                     true};
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    const std::optional<double> measured = rows.number(r, "measured_us");
    if (!measured || !(*measured > 0)) continue;
    const std::string id = rows.text(r, "id");
    for (std::size_t s = 0; s < 2; ++s) {
      const std::string_view key = s == 0 ? "roofline_us" : "calibrated_us";
      const std::optional<double> predicted = rows.number(r, key);
      if (!predicted || !(*predicted > 0)) continue;
      chart.series[s].points.push_back(
          {id, *measured, *predicted,
           fmt::format("{}: measured {:.4g} us, {} {:.4g} us ({:+.1f}%)", id, *measured, chart.series[s].name,
                       *predicted, 100.0 * (*predicted - *measured) / *measured)});
    }
  }
  std::erase_if(chart.series, [](const ScatterSeries& s) { return s.points.empty(); });
  if (chart.series.empty()) return figures;
  figures.push_back(figure("measured-vs-predicted", "Measured vs predicted", render_scatter_svg(chart),
                           "Each timed benchmark of the benchmarks table: measured_us across, roofline_us (and "
                           "calibrated_us where a calibration applies) up; on the dashed line the prediction is "
                           "exact, below it the model is optimistic."));
  return figures;
}

}  // namespace roofline::plot
