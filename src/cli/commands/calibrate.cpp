// roofline calibrate: efficiency tables learnt from a bench run, written to a calibration file
// that op (and llm and plan) read with --calibration. See docs/validate.md.
#include "roofline/validate/calibrate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "commands.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"
#include "roofline/core/stats.hpp"
#include "roofline/core/text.hpp"
#include "roofline/report/output_file.hpp"
#include "roofline/validate/validate.hpp"
#include "validate.hpp"

namespace roofline::cli {
namespace {

struct TableRow {
  const CalibrationTable* table = nullptr;
  double efficiency_min = 0;
  double efficiency_max = 0;
  double x_min_s = 0;
  double x_max_s = 0;
  int loo_points = 0;
  std::optional<double> loo_median_abs;
  std::optional<double> loo_max_abs;
};

TableRow summarize_table(const CalibrationTable& t) {
  TableRow row;
  row.table = &t;
  row.efficiency_min = row.efficiency_max = t.points.front().efficiency;
  row.x_min_s = row.x_max_s = t.points.front().ideal_s;
  std::vector<double> loo;
  for (const CalibrationPoint& p : t.points) {
    row.efficiency_min = std::min(row.efficiency_min, p.efficiency);
    row.efficiency_max = std::max(row.efficiency_max, p.efficiency);
    row.x_min_s = std::min(row.x_min_s, p.ideal_s);
    row.x_max_s = std::max(row.x_max_s, p.ideal_s);
    if (p.loo_error) loo.push_back(std::abs(*p.loo_error));
  }
  row.loo_points = static_cast<int>(loo.size());
  if (!loo.empty()) {
    const Summary s = summarize(loo);
    row.loo_median_abs = s.median;
    row.loo_max_abs = s.max;
  }
  return row;
}

constexpr std::array<ColumnOf<TableRow>, 12> table_columns{{
    {{"table", "table", 0}, [](const TableRow& r) { return Cell{r.table->name}; }},
    {{"pattern", "pattern", 0}, [](const TableRow& r) { return Cell{r.table->pattern}; }},
    {{"best", "best impl", 0}, [](const TableRow& r) { return Cell{r.table->best}; }},
    {{"series", "series", 0},
     [](const TableRow& r) {
       if (r.table->series_name.empty()) return Cell{};
       return Cell{r.table->neighbours_outside_range ? r.table->series_name + " (neighbours)" : r.table->series_name};
     }},
    {{"points", "points", 0},
     [](const TableRow& r) { return Cell{static_cast<std::int64_t>(r.table->points.size())}; }},
    {{"efficiency_min", "efficiency min", 3}, [](const TableRow& r) { return Cell{r.efficiency_min}; }},
    {{"efficiency_max", "max", 3}, [](const TableRow& r) { return Cell{r.efficiency_max}; }},
    {{"ideal_min_us", "x min [us]", 2}, [](const TableRow& r) { return Cell{r.x_min_s * 1e6}; }},
    {{"ideal_max_us", "x max [us]", 2}, [](const TableRow& r) { return Cell{r.x_max_s * 1e6}; }},
    {{"loo_points", "LOO points", 0}, [](const TableRow& r) { return Cell{std::int64_t{r.loo_points}}; }},
    {{"loo_median_abs_error_pct", "LOO median |err| %", 1},
     [](const TableRow& r) { return optional_cell(r.loo_median_abs, 100); }},
    {{"loo_max_abs_error_pct", "LOO max |err| %", 1},
     [](const TableRow& r) { return optional_cell(r.loo_max_abs, 100); }},
}};

struct PointRow {
  const CalibrationTable* table = nullptr;
  const CalibrationPoint* point = nullptr;
};

constexpr std::array<ColumnOf<PointRow>, 8> point_columns{{
    {{"table", "table", 0}, [](const PointRow& r) { return Cell{r.table->name}; }},
    {{"benchmark", "benchmark", 0}, [](const PointRow& r) { return Cell{r.point->benchmark}; }},
    {{"series", "series", 0}, [](const PointRow& r) { return optional_cell(r.point->series); }},
    {{"ideal_us", "roofline [us]", 2}, [](const PointRow& r) { return Cell{r.point->ideal_s * 1e6}; }},
    {{"measured_us", "measured [us]", 2}, [](const PointRow& r) { return Cell{r.point->measured_s * 1e6}; }},
    {{"efficiency", "efficiency", 3}, [](const PointRow& r) { return Cell{r.point->efficiency}; }},
    {{"spread_pct", "spread %", 1}, [](const PointRow& r) { return Cell{r.point->spread * 100}; }},
    {{"loo_error_pct", "LOO err %", 1}, [](const PointRow& r) { return optional_cell(r.point->loo_error, 100); }},
}};

// The band a layer check reports: the target for the layer predicted out of sample.
constexpr double layer_band_within_pct = 10;

// Each source's provenance, from its bench report's device and run rows (runs read from files: the
// rows are not part of a MeasuredRun).
void add_provenance(Calibration& cal, std::span<const MeasuredRun> runs) {
  for (std::size_t i = 0; i < runs.size() && i < cal.sources.size(); ++i) {
    if (runs[i].format != "roofline.bench.v1") continue;
    const nlohmann::json report =
        nlohmann::json::parse(read_input_file(runs[i].file, max_measured_file_bytes), nullptr, false);
    if (!report.is_discarded()) cal.sources[i].provenance = run_provenance(report);
  }
}

void add_layer_band(Calibration& cal, const GpuSpec& gpu, const std::string& file) {
  const MeasuredRun run = load_measured(file);
  if (run.hardware_id && *run.hardware_id != gpu.id) {
    throw InputError(fmt::format("--layer-check {}: a run on {}, not {}", file, *run.hardware_id, gpu.id));
  }
  const std::vector<LayerCheck> layers = check_layers(std::span(&run, 1), Roofs::of(gpu), &cal);
  cal.validation = layer_error_band(layers, layer_band_within_pct, file);
  if (!cal.validation) throw InputError(fmt::format("--layer-check {}: no timed layer the calibration predicts", file));
}

constexpr std::array<ColumnOf<Skipped>, 2> skipped_columns{{
    {{"id", "benchmark", 0}, [](const Skipped& s) { return Cell{s.id}; }},
    {{"reason", "why no point", 0}, [](const Skipped& s) { return Cell{s.reason}; }},
}};

void run_calibrate_command(const CalibrateOptions& raw) {
  CalibrateOptions options = raw;
  std::vector<std::string> filters;
  for (const std::string& value : raw.filters) {
    for (const std::string& piece : split(value, ',')) {
      if (piece.empty()) throw InputError("--filter: empty text in the list");
      filters.push_back(piece);
    }
  }
  options.filters = filters;
  const HardwareRegistry registry = load_registry(options.common);
  const std::vector<MeasuredRun> runs = load_runs(options.measured, options.filters);
  CalibrateResult result = run_calibrate(options, runs, registry);
  write_file_atomically(options.output, to_json(result.calibration).dump(2) + "\n");
  emit(result.report, options.common);
}

}  // namespace

CalibrateResult run_calibrate(const CalibrateOptions& options, std::span<const MeasuredRun> runs,
                              const HardwareRegistry& registry) {
  const GpuSpec& gpu = gpu_of_runs(runs, registry, options.gpu);
  CalibrationBuild build = build_calibration(runs, gpu);
  Calibration& cal = build.calibration;
  cal.file = options.output;
  add_provenance(cal, runs);
  if (options.layer_check) add_layer_band(cal, gpu, *options.layer_check);

  Report report;
  report.kind = "calibrate";
  nlohmann::json files = nlohmann::json::array();
  for (const MeasuredRun& run : runs) files.push_back(run.file);
  report.inputs = {{"measured", files},
                   {"output", options.output},
                   {"gpu", options.gpu ? nlohmann::json(*options.gpu) : nullptr},
                   {"filter", options.filters},
                   {"layer_check", options.layer_check ? nlohmann::json(*options.layer_check) : nullptr}};
  report.hardware.push_back({gpu.id, gpu.origin});

  std::vector<TableRow> tables;
  std::vector<PointRow> points;
  for (const auto& [name, table] : cal.tables) {
    tables.push_back(summarize_table(table));
    for (const CalibrationPoint& p : table.points) points.push_back({&table, &p});
  }
  report.tables.push_back(Table::from_rows<TableRow>(
      "calibration_tables",
      fmt::format("Calibration tables for {} (efficiency = roofline time / measured time)", gpu.id), table_columns,
      tables));
  report.tables.push_back(Table::from_rows<PointRow>("points", "Points", point_columns, points));
  report.tables.push_back(
      Table::from_rows<Skipped>("skipped", "Benchmarks that gave no point", skipped_columns, build.skipped));
  report.extra_results["calibration"] = {
      {"file", options.output}, {"gpu", gpu.id}, {"tables", cal.tables.size()}, {"points", points.size()}};
  for (const std::string& note : build.notes) report.notes.push_back(note);
  report.notes.push_back(fmt::format("wrote {} ({} tables, {} points; schema roofline.calibration.v1)", options.output,
                                     cal.tables.size(), points.size()));
  for (const CalibrationSource& s : cal.sources) {
    if (!s.provenance) continue;
    report.notes.push_back(fmt::format("provenance of {}: {}", s.file, provenance_text(*s.provenance)));
  }
  if (cal.validation) {
    report.extra_results["calibration"]["validation"] = cal.validation->summary;
    report.notes.push_back(fmt::format("error band ({}): {}", cal.validation->run, cal.validation->summary));
  }
  report.notes.push_back(
      "x = the roofline time of the problem on the hardware file's roofs; efficiency is linear in log(x) between "
      "measured sizes (points of equal x averaged) and in log(series) between series (GEMV batch, access stride); "
      "clamped to the end values outside the measured range (a table marked 'neighbours' carries its series' end on, "
      "where that series measured no problem of the size, by the trend of the nearest series on each side that did); "
      "no faster than the table's fastest measured point, unless leave-one-out declines that floor (a note names "
      "each table that does)");
  report.notes.push_back(
      "LOO: leave one out: each point predicted by its table without it; |err| is how far that prediction is from the "
      "measured time (the out-of-sample accuracy of the interpolation; empty where nothing else was measured)");
  report.notes.push_back(
      "best-impl tables keep the fastest implementation of each problem: op (and llm, plan) use them with "
      "--calibration; validate uses each implementation's own table");
  return {std::move(cal), std::move(report)};
}

void setup_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* command = app.add_subcommand(
      "calibrate",
      "Efficiency tables per pattern and size learnt from a bench run, written to a calibration file for "
      "--calibration");
  command
      ->add_option("--measured", options->measured, "A bench JSON report (or compute selftest JSON lines); repeatable")
      ->required();
  command->add_option("--gpu", options->gpu, "The hardware file to calibrate against, when the run matched none");
  command->add_option("--filter", options->filters,
                      "Only benchmarks whose id contains one of these texts (comma-separated; repeatable)");
  command->add_option("--layer-check", options->layer_check,
                      "A layer-suite run (bench --suite layer) of the same GPU: the share of its layers the new "
                      "calibration predicts within 10% (out of sample) is written into the file as its error band");
  add_common_options(*command, options->common);
  // Here -o names the calibration file; the summary report goes to stdout.
  command->remove_option(command->get_option("--output"));
  command->add_option("-o,--output", options->output, "The calibration file to write (atomically)")->required();
  command->callback([options] { run_calibrate_command(*options); });
}

}  // namespace roofline::cli
