// roofline llm with a sweep: --context and --batch take op's sweep syntax (a list, a range), and
// the report is one row per point (llm_sweep.hpp).
#include "llm_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"
#include "roofline/model/sweep.hpp"
#include "roofline/plot/charts.hpp"

namespace roofline::cli {
namespace {

struct SweepRow {
  std::int64_t context = 0;
  std::int64_t prompt = 0;
  std::string batch_flag;  // "max" or the number asked for
  nlohmann::json figures;  // the single-point report's results
};

double number(const nlohmann::json& figures, const char* key) {
  return figures.at(key).get<double>();
}

constexpr std::array<ColumnOf<SweepRow>, 14> sweep_columns{{
    {{"context", "context", 0}, [](const SweepRow& r) { return Cell{r.context}; }},
    {{"prompt", "prompt", 0}, [](const SweepRow& r) { return Cell{r.prompt}; }},
    {{"batch_flag", "--batch", 0}, [](const SweepRow& r) { return Cell{r.batch_flag}; }},
    {{"batch", "batch", 0}, [](const SweepRow& r) { return Cell{r.figures.at("batch").get<std::int64_t>()}; }},
    {{"max_requests", "max requests", 0},
     [](const SweepRow& r) { return Cell{r.figures.at("max_requests").get<std::int64_t>()}; }},
    {{"weights_per_gpu_gb", "weights/GPU [GB]", 2},
     [](const SweepRow& r) { return Cell{number(r.figures, "weights_per_gpu_bytes") / 1e9}; }},
    {{"kv_per_request_gpu_gb", "KV/request/GPU [GB]", 3},
     [](const SweepRow& r) { return Cell{number(r.figures, "kv_per_request_gpu_bytes") / 1e9}; }},
    {{"free_for_kv_gb", "free for KV [GB]", 2},
     [](const SweepRow& r) { return Cell{number(r.figures, "free_for_kv_bytes") / 1e9}; }},
    {{"tpot_ms", "TPOT [ms]", 3}, [](const SweepRow& r) { return Cell{number(r.figures, "tpot_ms")}; }},
    {{"ttft_ms", "TTFT [ms]", 2}, [](const SweepRow& r) { return Cell{number(r.figures, "ttft_ms")}; }},
    {{"tokens_per_s", "tok/s", 0}, [](const SweepRow& r) { return Cell{number(r.figures, "tokens_per_s")}; }},
    {{"tokens_per_s_per_gpu", "tok/s/GPU", 1},
     [](const SweepRow& r) { return Cell{number(r.figures, "tokens_per_s_per_gpu")}; }},
    {{"decode_bottleneck", "decode bound", 0},
     [](const SweepRow& r) { return Cell{r.figures.at("decode_bottleneck").get<std::string>()}; }},
    {{"prefill_bottleneck", "prefill bound", 0},
     [](const SweepRow& r) { return Cell{r.figures.at("prefill_bottleneck").get<std::string>()}; }},
}};

// --format html: TPOT over the contexts, one line per --batch value, from the rows of the table.
std::vector<Figure> sweep_figures(const std::vector<SweepRow>& rows) {
  plot::ScatterChart chart{
      "TPOT across the sweep", "context [tokens]", "TPOT [ms]", plot::Scale::log, plot::Scale::linear, {}, {}, false};
  for (const SweepRow& row : rows) {
    auto series = std::find_if(chart.series.begin(), chart.series.end(),
                               [&](const plot::ScatterSeries& s) { return s.name == "batch " + row.batch_flag; });
    if (series == chart.series.end()) {
      chart.series.push_back({"batch " + row.batch_flag, {}, true});
      series = chart.series.end() - 1;
    }
    const double tpot = number(row.figures, "tpot_ms");
    series->points.push_back({fmt::format("context {} batch {}", row.context, row.batch_flag),
                              static_cast<double>(row.context), tpot,
                              fmt::format("context {}, batch {} ({}): TPOT {:.4g} ms", row.context, row.batch_flag,
                                          row.figures.at("batch").get<std::int64_t>(), tpot)});
  }
  return {{"sweep", "TPOT across the sweep", plot::render_scatter_svg(chart),
           "Each point of the sweep table: TPOT at its context, one line per --batch value (max: what fits)."}};
}

}  // namespace

LlmSweep parse_llm_sweep(const std::string& context, const std::string& batch) {
  LlmSweep sweep;
  sweep.contexts = parse_int_sweep("--context", context);
  // One value is passed on as given, for run_llm's own check and message.
  if (batch.find_first_of(",:") == std::string::npos) {
    sweep.batches = {batch};
  } else {
    for (const std::string& piece : split(batch, ',')) {
      if (piece == "max") {
        sweep.batches.emplace_back("max");
        continue;
      }
      for (const std::int64_t b : parse_int_sweep("--batch", piece)) sweep.batches.push_back(std::to_string(b));
    }
  }
  const std::array<std::size_t, 2> sizes{sweep.contexts.size(), sweep.batches.size()};
  if (sweep_point_count(sizes) > max_llm_sweep_points) {
    throw InputError(fmt::format("--context x --batch: {} points; a sweep of llm takes at most {}",
                                 sweep_point_count(sizes), max_llm_sweep_points));
  }
  return sweep;
}

Report run_llm_sweep(const LlmOptions& options, const LlmSweep& sweep, const HardwareRegistry& registry) {
  std::vector<SweepRow> rows;
  Report report;
  const std::array<std::size_t, 2> sizes{sweep.contexts.size(), sweep.batches.size()};
  SweepCursor cursor(sizes);
  do {
    LlmOptions point = options;
    point.context = sweep.contexts[cursor[0]];
    point.batch = sweep.batches[cursor[1]];
    point.levers = false;
    const Report one = run_llm(point, registry);
    if (rows.empty()) {
      report.kind = "llm-sweep";
      report.inputs = one.inputs;
      report.inputs["context"] = nlohmann::json(sweep.contexts);
      report.inputs["batch"] = nlohmann::json(sweep.batches);
      report.hardware = one.hardware;
      // The notes of a point hold for every point: they name the model, not the point.
      report.notes = one.notes;
    }
    rows.push_back({point.context, options.prompt.value_or(point.context), point.batch, one.extra_results});
  } while (cursor.next());
  report.tables.push_back(Table::from_rows<SweepRow>(
      "sweep",
      fmt::format("{} on {}: {} points (--context x --batch), one deployment each",
                  report.inputs["model"].value("id", ""), report.inputs["gpu"].get<std::string>(), rows.size()),
      sweep_columns, rows));
  if (draws_figures(options.common)) report.figures = sweep_figures(rows);
  return report;
}

}  // namespace roofline::cli
