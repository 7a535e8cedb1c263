// roofline validate: measured vs predicted for every benchmark of a run (bare roofline, and
// calibrated with --calibration), or two runs compared for CI (--baseline); either judged against
// the limits of the gate (--max-error, --min-of-roofline). See docs/validate.md.
#include "validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "commands.hpp"
#include "roofline/bench/bench_runner.hpp"
#include "roofline/bench/collectives_suite.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"
#include "roofline/plot/report_figures.hpp"
#include "roofline/report/output_file.hpp"
#include "roofline/validate/calibrate.hpp"
#include "roofline/validate/collective_validation.hpp"
#include "roofline/validate/gate.hpp"
#include "roofline/validate/layer_check.hpp"
#include "roofline/validate/prediction.hpp"
#include "roofline/validate/regression.hpp"
#include "roofline/validate/validate.hpp"

namespace roofline::cli {
namespace {

std::string_view prediction_kind(const Prediction& p) {
  if (!p.basis) return p.none.ceiling ? "none (a ceiling)" : "none";
  return p.calibrated ? "roofline + calibration" : "roofline";
}

std::string detail_of(const Prediction& p) {
  std::vector<std::string> parts;
  if (!p.basis) parts.push_back(p.none.reason);
  if (p.basis && !p.basis->note.empty()) parts.push_back(p.basis->note);
  if (p.roofline.peak_missing) parts.push_back("the GPU states no peak for this math: memory roof only");
  if (p.measurement->status != "passed") parts.push_back(fmt::format("status {}", p.measurement->status));
  if (p.calibrated && p.calibrated->clamped) parts.push_back(p.calibrated->detail);
  if (!p.not_calibrated.empty()) parts.push_back(p.not_calibrated);
  return fmt::format("{}", fmt::join(parts, "; "));
}

constexpr std::array<ColumnOf<Prediction>, 19> prediction_columns{{
    {{"id", "benchmark", 0}, [](const Prediction& p) { return Cell{p.measurement->id}; }},
    {{"pattern", "pattern", 0}, [](const Prediction& p) { return p.basis ? Cell{p.basis->pattern} : Cell{}; }},
    {{"implementation", "impl", 0}, [](const Prediction& p) { return Cell{p.measurement->implementation}; }},
    {{"prediction", "prediction", 0}, [](const Prediction& p) { return Cell{std::string(prediction_kind(p))}; }},
    {{"flops", "FLOPs", 0}, [](const Prediction& p) { return p.basis ? Cell{p.basis->cost.flops} : Cell{}; }},
    {{"roof_bytes", "bytes at roof", 0},
     [](const Prediction& p) { return p.basis ? Cell{p.basis->roof_bytes} : Cell{}; }},
    {{"peak_class", "peak", 0},
     [](const Prediction& p) {
       return p.basis && p.roofline.peak ? Cell{std::string(name_of(*p.roofline.peak))} : Cell{};
     }},
    {{"bound", "bound", 0},
     [](const Prediction& p) { return p.basis ? Cell{std::string(name_of(p.roofline.bound))} : Cell{}; }},
    {{"measured_us", "measured [us]", 2},
     [](const Prediction& p) { return p.measurement->timed() ? Cell{p.measurement->timing->median_s * 1e6} : Cell{}; }},
    {{"spread_pct", "spread %", 1},
     [](const Prediction& p) { return p.measurement->timed() ? Cell{p.measurement->timing->spread() * 100} : Cell{}; }},
    {{"roofline_us", "roofline [us]", 2},
     [](const Prediction& p) { return p.basis ? Cell{p.roofline.time_s * 1e6} : Cell{}; }},
    {{"achieved_pct", "of roofline %", 1}, [](const Prediction& p) { return optional_cell(p.achieved(), 100); }},
    {{"roofline_error_pct", "roofline err %", 1},
     [](const Prediction& p) { return optional_cell(p.roofline_error(), 100); }},
    {{"calibrated_us", "calibrated [us]", 2},
     [](const Prediction& p) { return p.calibrated ? Cell{p.calibrated->time_s * 1e6} : Cell{}; }},
    {{"calibrated_error_pct", "calibrated err %", 1},
     [](const Prediction& p) { return optional_cell(p.calibrated_error(), 100); }},
    {{"calibration_table", "table", 0},
     [](const Prediction& p) { return p.calibrated ? Cell{p.calibrated->table} : Cell{}; }},
    {{"efficiency", "efficiency", 3},
     [](const Prediction& p) { return p.calibrated ? Cell{p.calibrated->efficiency} : Cell{}; }},
    {{"clamped", "clamped", 0},
     [](const Prediction& p) { return p.calibrated ? Cell{p.calibrated->clamped} : Cell{}; }},
    {{"detail", "detail", 0}, [](const Prediction& p) { return Cell{detail_of(p)}; }},
}};

constexpr std::array<ColumnOf<PatternSummary>, 9> pattern_columns{{
    {{"pattern", "pattern", 0}, [](const PatternSummary& s) { return Cell{s.pattern}; }},
    {{"benchmarks", "benchmarks", 0}, [](const PatternSummary& s) { return Cell{std::int64_t{s.benchmarks}}; }},
    {{"achieved_median_pct", "of roofline % (median)", 1},
     [](const PatternSummary& s) { return Cell{s.achieved_median * 100}; }},
    {{"achieved_min_pct", "min %", 1}, [](const PatternSummary& s) { return Cell{s.achieved_min * 100}; }},
    {{"achieved_max_pct", "max %", 1}, [](const PatternSummary& s) { return Cell{s.achieved_max * 100}; }},
    {{"calibrated", "calibrated", 0}, [](const PatternSummary& s) { return Cell{std::int64_t{s.calibrated}}; }},
    {{"calibrated_median_abs_error_pct", "median |err| %", 1},
     [](const PatternSummary& s) { return optional_cell(s.calibrated_median_abs_error, 100); }},
    {{"calibrated_max_abs_error_pct", "max |err| %", 1},
     [](const PatternSummary& s) { return optional_cell(s.calibrated_max_abs_error, 100); }},
    {{"within_10pct", "within 10%", 0}, [](const PatternSummary& s) { return Cell{std::int64_t{s.within_10pct}}; }},
}};

constexpr std::array<ColumnOf<CollectiveComparison>, 12> collective_columns{{
    {{"id", "benchmark", 0}, [](const CollectiveComparison& c) { return Cell{c.measurement->id}; }},
    {{"op", "op", 0}, [](const CollectiveComparison& c) { return Cell{std::string(name_of(c.sample.op))}; }},
    {{"ranks", "GPUs", 0}, [](const CollectiveComparison& c) { return Cell{std::int64_t{c.sample.ranks}}; }},
    {{"bytes", "bytes", 0}, [](const CollectiveComparison& c) { return Cell{c.sample.bytes}; }},
    {{"measured_us", "measured [us]", 2}, [](const CollectiveComparison& c) { return Cell{c.measured_s * 1e6}; }},
    {{"busbw_gbps", "busbw GB/s", 2}, [](const CollectiveComparison& c) { return Cell{c.busbw / 1e9}; }},
    {{"model_us", "ring model [us]", 2}, [](const CollectiveComparison& c) { return Cell{c.model_s * 1e6}; }},
    {{"model_error_pct", "model err %", 1}, [](const CollectiveComparison& c) { return Cell{c.model_error() * 100}; }},
    {{"calibrated_us", "calibrated [us]", 2},
     [](const CollectiveComparison& c) { return optional_cell(c.calibrated_s, 1e6); }},
    {{"calibrated_error_pct", "calibrated err %", 1},
     [](const CollectiveComparison& c) {
       return c.calibrated_s ? Cell{(*c.calibrated_s / c.measured_s - 1) * 100} : Cell{};
     }},
    {{"spread_pct", "spread %", 1},
     [](const CollectiveComparison& c) { return Cell{c.measurement->timing->spread() * 100}; }},
    {{"detail", "detail", 0}, [](const CollectiveComparison& c) { return Cell{c.calibrated_detail}; }},
}};

std::string layer_detail(const LayerCheck& l) {
  std::vector<std::string> parts;
  std::vector<std::string> roofline_only;
  for (const LayerStageCheck& s : l.stages) {
    if (!s.calibrated && !s.not_calibrated.empty()) roofline_only.push_back(s.stage);
  }
  if (!roofline_only.empty()) parts.push_back(fmt::format("roofline only: {}", fmt::join(roofline_only, ", ")));
  // The stage whose prediction is furthest from its time inside the layer, in microseconds.
  const LayerStageCheck* worst = nullptr;
  for (const LayerStageCheck& s : l.stages) {
    if (!s.measured_s) continue;
    if (worst == nullptr ||
        std::abs(s.expected_s() - *s.measured_s) > std::abs(worst->expected_s() - *worst->measured_s)) {
      worst = &s;
    }
  }
  if (worst != nullptr) {
    parts.push_back(fmt::format("largest stage miss: {} {:.1f} us predicted, {:.1f} us measured", worst->stage,
                                worst->expected_s() * 1e6, *worst->measured_s * 1e6));
  }
  if (!l.timed()) parts.push_back(fmt::format("status {}", l.measurement->status));
  return fmt::format("{}", fmt::join(parts, "; "));
}

constexpr std::array<ColumnOf<LayerCheck>, 19> layer_columns{{
    {{"id", "layer", 0}, [](const LayerCheck& l) { return Cell{l.measurement->id}; }},
    {{"phase", "phase", 0},
     [](const LayerCheck& l) { return Cell{std::string(bench::layer::name_of(l.layer.phase))}; }},
    {{"batch", "batch", 0}, [](const LayerCheck& l) { return Cell{l.layer.batch}; }},
    {{"context", "context", 0}, [](const LayerCheck& l) { return Cell{l.layer.context}; }},
    {{"tokens", "tokens", 0}, [](const LayerCheck& l) { return Cell{bench::layer::tokens(l.layer)}; }},
    {{"implementation", "linear", 0},
     [](const LayerCheck& l) { return Cell{std::string(bench::layer::name_of(l.layer.linear))}; }},
    {{"measured_us", "measured [us]", 2},
     [](const LayerCheck& l) { return l.timed() ? Cell{l.measurement->timing->median_s * 1e6} : Cell{}; }},
    {{"spread_pct", "spread %", 1},
     [](const LayerCheck& l) { return l.timed() ? Cell{l.measurement->timing->spread() * 100} : Cell{}; }},
    {{"stages_measured_us", "stages measured [us]", 2},
     [](const LayerCheck& l) { return optional_cell(l.stages_measured_s, 1e6); }},
    {{"roofline_us", "roofline [us]", 2}, [](const LayerCheck& l) { return Cell{l.roofline_s * 1e6}; }},
    {{"roofline_error_pct", "roofline err %", 1},
     [](const LayerCheck& l) { return optional_cell(l.roofline_error(), 100); }},
    {{"calibrated_us", "calibrated [us]", 2},
     [](const LayerCheck& l) { return l.calibrated_stages > 0 ? Cell{l.expected_s * 1e6} : Cell{}; }},
    {{"calibrated_error_pct", "calibrated err %", 1},
     [](const LayerCheck& l) { return optional_cell(l.calibrated_error(), 100); }},
    {{"calibrated_stages", "calibrated stages", 0},
     [](const LayerCheck& l) { return Cell{std::int64_t{l.calibrated_stages}}; }},
    {{"ran_table_stages", "own-kernel tables", 0},
     [](const LayerCheck& l) { return Cell{std::int64_t{l.ran_table_stages}}; }},
    {{"best_tables_us", "best tables [us]", 2},
     [](const LayerCheck& l) { return l.calibrated_stages > 0 ? Cell{l.expected_best_s * 1e6} : Cell{}; }},
    {{"best_tables_error_pct", "best tables err %", 1},
     [](const LayerCheck& l) { return optional_cell(l.best_error(), 100); }},
    {{"stages", "stages", 0}, [](const LayerCheck& l) { return Cell{static_cast<std::int64_t>(l.stages.size())}; }},
    {{"detail", "detail", 0}, [](const LayerCheck& l) { return Cell{layer_detail(l)}; }},
}};

struct CeilingRow {
  std::string name;
  std::string unit;  // "TB/s" or "TFLOP/s"
  double measured = 0;
  std::optional<double> hardware;
  std::string source;
};

constexpr std::array<ColumnOf<CeilingRow>, 6> ceiling_columns{{
    {{"ceiling", "ceiling", 0}, [](const CeilingRow& r) { return Cell{r.name}; }},
    {{"unit", "unit", 0}, [](const CeilingRow& r) { return Cell{r.unit}; }},
    {{"measured", "measured", 2}, [](const CeilingRow& r) { return Cell{r.measured}; }},
    {{"hardware_file", "hardware file", 2}, [](const CeilingRow& r) { return optional_cell(r.hardware); }},
    {{"of_hardware_pct", "of file %", 1},
     [](const CeilingRow& r) { return r.hardware ? Cell{r.measured / *r.hardware * 100} : Cell{}; }},
    {{"source", "from", 0}, [](const CeilingRow& r) { return Cell{r.source}; }},
}};

std::vector<CeilingRow> ceiling_rows(const MeasuredCeilings& c, const GpuSpec& gpu) {
  std::vector<CeilingRow> rows;
  if (c.stream_bytes_per_s) {
    rows.push_back({"HBM (fastest stream kernel)", "TB/s", *c.stream_bytes_per_s / 1e12, gpu.memory_bandwidth_tbps,
                    c.stream_benchmark});
  }
  if (c.l2_bytes_per_s)
    rows.push_back({"L2 read", "TB/s", *c.l2_bytes_per_s / 1e12, std::nullopt, "hierarchy.l2.read"});
  if (c.smem_bytes_per_s) {
    rows.push_back({"shared-memory read", "TB/s", *c.smem_bytes_per_s / 1e12, std::nullopt, "hierarchy.smem.read"});
  }
  for (std::size_t i = 0; i < c.peaks.size(); ++i) {
    if (!c.peaks[i]) continue;
    const auto peak = static_cast<PeakClass>(i);
    const std::optional<double> stated = gpu.peak_flops(peak);
    rows.push_back({fmt::format("{} peak", name_of(peak)), "TFLOP/s", *c.peaks[i] / 1e12,
                    stated ? std::optional(*stated / 1e12) : std::nullopt, "peak probes"});
  }
  return rows;
}

nlohmann::json file_list(std::span<const MeasuredRun> runs) {
  nlohmann::json files = nlohmann::json::array();
  for (const MeasuredRun& run : runs) files.push_back(run.file);
  return files;
}

// The human table keeps the columns a reader compares; JSON and CSV carry them all.
Table narrowed(Table table, std::initializer_list<std::string_view> keys) {
  std::vector<std::size_t> keep;
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    if (std::find(keys.begin(), keys.end(), table.columns[i].key) != keys.end()) keep.push_back(i);
  }
  Table out{table.name, table.title, {}, {}};
  for (std::size_t i : keep) out.columns.push_back(table.columns[i]);
  for (std::vector<Cell>& row : table.rows) {
    std::vector<Cell> cells;
    for (std::size_t i : keep) cells.push_back(std::move(row[i]));
    out.rows.push_back(std::move(cells));
  }
  return out;
}

bool learnt_from_any(const Calibration& calibration, std::span<const MeasuredRun> runs) {
  return std::any_of(runs.begin(), runs.end(), [&](const MeasuredRun& run) { return learnt_from(calibration, run); });
}

// ---- regression ------------------------------------------------------------------------------

Cell timing_field(const std::optional<MeasuredTiming>& t, double MeasuredTiming::*field) {
  return t ? Cell{(*t).*field * 1e6} : Cell{};
}

constexpr std::array<ColumnOf<Comparison>, 11> comparison_columns{{
    {{"id", "benchmark", 0}, [](const Comparison& c) { return Cell{c.id}; }},
    {{"group", "group", 0}, [](const Comparison& c) { return Cell{c.group}; }},
    {{"verdict", "verdict", 0}, [](const Comparison& c) { return Cell{std::string(name_of(c.verdict))}; }},
    {{"change_pct", "change %", 1}, [](const Comparison& c) { return optional_cell(c.change, 100); }},
    {{"baseline_median_us", "old median [us]", 2},
     [](const Comparison& c) { return timing_field(c.baseline, &MeasuredTiming::median_s); }},
    {{"baseline_min_us", "old min", 2},
     [](const Comparison& c) { return timing_field(c.baseline, &MeasuredTiming::min_s); }},
    {{"baseline_max_us", "old max", 2},
     [](const Comparison& c) { return timing_field(c.baseline, &MeasuredTiming::max_s); }},
    {{"measured_median_us", "new median [us]", 2},
     [](const Comparison& c) { return timing_field(c.measured, &MeasuredTiming::median_s); }},
    {{"measured_min_us", "new min", 2},
     [](const Comparison& c) { return timing_field(c.measured, &MeasuredTiming::min_s); }},
    {{"measured_max_us", "new max", 2},
     [](const Comparison& c) { return timing_field(c.measured, &MeasuredTiming::max_s); }},
    {{"detail", "detail", 0}, [](const Comparison& c) { return Cell{c.detail}; }},
}};

struct VerdictCount {
  Verdict verdict;
  std::int64_t count;
};

constexpr std::array<ColumnOf<VerdictCount>, 3> verdict_columns{{
    {{"verdict", "verdict", 0}, [](const VerdictCount& v) { return Cell{std::string(name_of(v.verdict))}; }},
    {{"benchmarks", "benchmarks", 0}, [](const VerdictCount& v) { return Cell{v.count}; }},
    {{"regression", "fails the check", 0}, [](const VerdictCount& v) { return Cell{is_regression(v.verdict)}; }},
}};

// ---- the gate ------------------------------------------------------------------------------

Cell when_check(const GateResult& r, GateCheck check, double value) {
  return r.check == check ? Cell{value} : Cell{};
}

constexpr std::array<ColumnOf<GateResult>, 11> offender_columns{{
    {{"id", "result", 0}, [](const GateResult& r) { return Cell{r.id}; }},
    {{"kind", "kind", 0}, [](const GateResult& r) { return Cell{std::string(name_of(r.kind))}; }},
    {{"check", "check", 0}, [](const GateResult& r) { return Cell{std::string(name_of(r.check))}; }},
    {{"sample", "sample", 0},
     [](const GateResult& r) { return r.sample ? Cell{std::string(name_of(*r.sample))} : Cell{}; }},
    {{"measured_us", "measured [us]", 2}, [](const GateResult& r) { return Cell{r.measured_s * 1e6}; }},
    {{"calibrated_us", "calibrated [us]", 2},
     [](const GateResult& r) { return when_check(r, GateCheck::max_error, r.predicted_s * 1e6); }},
    {{"error_pct", "error %", 1},
     [](const GateResult& r) { return when_check(r, GateCheck::max_error, r.judgement.value * 100); }},
    {{"roofline_us", "roofline [us]", 2},
     [](const GateResult& r) { return when_check(r, GateCheck::min_of_roofline, r.predicted_s * 1e6); }},
    {{"of_roofline_pct", "of roofline %", 1},
     [](const GateResult& r) { return when_check(r, GateCheck::min_of_roofline, r.judgement.value * 100); }},
    {{"limit_pct", "limit %", 1}, [](const GateResult& r) { return Cell{r.limit * 100}; }},
    {{"rule", "fails because", 0},
     [](const GateResult& r) {
       return Cell{r.check == GateCheck::max_error
                       ? fmt::format("|error| {:.1f}% > {:g}%", std::abs(r.judgement.value) * 100, r.limit * 100)
                       : fmt::format("{:.1f}% of the roofline < {:g}%", r.judgement.value * 100, r.limit * 100)};
     }},
}};

constexpr std::array<ColumnOf<NotChecked>, 4> not_checked_columns{{
    {{"id", "result", 0}, [](const NotChecked& n) { return Cell{n.id}; }},
    {{"kind", "kind", 0}, [](const NotChecked& n) { return Cell{std::string(name_of(n.kind))}; }},
    {{"check", "check", 0}, [](const NotChecked& n) { return Cell{std::string(name_of(n.check))}; }},
    {{"reason", "why not", 0}, [](const NotChecked& n) { return Cell{n.reason}; }},
}};

// One limit's count of the results it checked.
struct GateSummary {
  GateCheck check = GateCheck::max_error;
  double limit = 0;
  std::int64_t checked = 0;
  std::int64_t offenders = 0;
  std::int64_t in_sample = 0;  // of the checked (max error only)
  std::int64_t out_of_sample = 0;
  std::int64_t in_sample_offenders = 0;
  std::int64_t not_checked = 0;
};

Cell when_max_error(const GateSummary& s, std::int64_t value) {
  return s.check == GateCheck::max_error ? Cell{value} : Cell{};
}

constexpr std::array<ColumnOf<GateSummary>, 8> gate_summary_columns{{
    {{"check", "check", 0}, [](const GateSummary& s) { return Cell{std::string(name_of(s.check))}; }},
    {{"limit_pct", "limit %", 1}, [](const GateSummary& s) { return Cell{s.limit * 100}; }},
    {{"checked", "checked", 0}, [](const GateSummary& s) { return Cell{s.checked}; }},
    {{"offenders", "offenders", 0}, [](const GateSummary& s) { return Cell{s.offenders}; }},
    {{"in_sample", "in sample", 0}, [](const GateSummary& s) { return when_max_error(s, s.in_sample); }},
    {{"out_of_sample", "out of sample", 0}, [](const GateSummary& s) { return when_max_error(s, s.out_of_sample); }},
    {{"in_sample_offenders", "offenders in sample", 0},
     [](const GateSummary& s) { return when_max_error(s, s.in_sample_offenders); }},
    {{"not_checked", "not checked", 0}, [](const GateSummary& s) { return Cell{s.not_checked}; }},
}};

std::vector<GateSummary> gate_summaries(const GateOutcome& gate) {
  std::vector<GateSummary> out;
  for (const auto& [check, limit] : {std::pair{GateCheck::max_error, gate.limits.max_error},
                                     std::pair{GateCheck::min_of_roofline, gate.limits.min_of_roofline}}) {
    if (!limit) continue;
    GateSummary s{.check = check, .limit = *limit};
    for (const GateResult& r : gate.checked) {
      if (r.check != check) continue;
      ++s.checked;
      const bool in_sample = r.sample == Sample::in_sample;
      if (r.sample) (in_sample ? s.in_sample : s.out_of_sample) += 1;
      if (r.judgement.offends) {
        ++s.offenders;
        if (in_sample) ++s.in_sample_offenders;
      }
    }
    s.not_checked = std::count_if(gate.not_checked.begin(), gate.not_checked.end(),
                                  [wanted = check](const NotChecked& n) { return n.check == wanted; });
    out.push_back(s);
  }
  return out;
}

// ---- running the suite -----------------------------------------------------------------------

MeasuredRun run_suite_now(const ValidateOptions& options, const HardwareRegistry& registry) {
  bench::RunOptions run_options;
  run_options.suites = bench::select_suites(options.suite);
  run_options.quick = options.quick;
  run_options.filters = options.filters;
  if (options.gpu) run_options.hardware = &registry.find(*options.gpu);
  const bench::BenchRun run = bench::run_benchmarks(run_options, registry);
  const nlohmann::json inputs = {{"suite", options.suite},
                                 {"quick", options.quick},
                                 {"check_only", false},
                                 {"filter", options.filters},
                                 {"samples", nullptr},
                                 {"seed", run.seed & 0x7FFFFFFFFFFFFFFFULL},
                                 {"device", 0},
                                 {"gpu", options.gpu ? nlohmann::json(*options.gpu) : nullptr},
                                 {"command_line", "roofline validate"}};
  const nlohmann::json report = to_json(bench::make_report(run, inputs));
  if (options.json_out) write_file_atomically(*options.json_out, report.dump(2) + "\n", "--json");
  return measured_from_bench_report(report, "(this run)");
}

std::vector<std::string> split_list(const std::vector<std::string>& values, std::string_view flag) {
  std::vector<std::string> out;
  for (const std::string& value : values) {
    for (const std::string& piece : split(value, ',')) {
      if (piece.empty()) throw InputError(fmt::format("{}: empty text in the list", flag));
      out.push_back(piece);
    }
  }
  return out;
}

void run_validate_command(const ValidateOptions& raw) {
  ValidateOptions options = raw;
  options.filters = split_list(raw.filters, "--filter");
  (void)parse_tolerance(options.tolerance);  // a bad value is bad input before anything runs
  const GateLimits limits = gate_limits(options);
  if (!options.baseline && options.tolerance_given) {
    throw InputError("--tolerance: compares two runs; give it with --baseline");
  }
  if (limits.max_error && !options.calibration) {
    throw InputError("--max-error: limits the error of the calibrated prediction; give --calibration");
  }
  if (options.baseline && options.calibration && !limits.max_error) {
    throw InputError("--baseline compares two runs and --calibration predicts one: give one of them (or --max-error)");
  }
  if (options.baseline && options.measured.size() > 1) {
    throw InputError("--baseline compares one run with another: give one --measured");
  }
  if (options.json_out && !options.measured.empty()) {
    throw InputError("--json: writes the bench report of the run validate makes; with --measured nothing is run");
  }
  const HardwareRegistry registry = load_registry(options.common);
  std::optional<Calibration> calibration;
  if (options.calibration) calibration = load_calibration(*options.calibration);
  const Calibration* cal = calibration ? &*calibration : nullptr;
  std::optional<MeasuredRun> baseline;
  if (options.baseline) baseline = filter_runs({load_measured(*options.baseline)}, options.filters).front();

  std::vector<MeasuredRun> runs;
  if (options.measured.empty()) {
    runs.push_back(run_suite_now(options, registry));
  } else {
    runs = load_runs(options.measured, options.filters);
  }
  bool regressed = false;
  Report report;
  std::optional<Validation> validation;
  if (!baseline || limits.any()) validation = validate_runs(runs, registry, options.gpu, cal);
  if (baseline) {
    report = run_regression(options, *baseline, runs.front(), regressed);
  } else {
    report = run_validate(options, runs, *validation, cal);
  }
  std::optional<GateOutcome> gate;
  if (limits.any()) {
    gate = run_gate({.runs = runs,
                     .predictions = validation->predictions,
                     .layers = validation->layers,
                     .collectives = validation->collectives,
                     .calibration = cal},
                    limits);
    add_gate(report, *gate);
  }
  if (draws_figures(options.common)) report.figures = plot::validate_figures(report);
  // The whole report first: a CI job wants it when the check fails.
  emit(report, options.common);
  std::vector<std::string> failures;
  if (regressed) failures.emplace_back("a benchmark regressed (slower or failed)");
  if (gate && !gate->passed()) {
    failures.push_back(fmt::format("{} result(s) beyond a limit", gate->offending_results()));
  }
  if (!failures.empty()) throw CheckFailed(fmt::format("validate: {}; see the report", fmt::join(failures, " and ")));
}

}  // namespace

std::vector<MeasuredRun> filter_runs(std::vector<MeasuredRun> runs, const std::vector<std::string>& filters) {
  if (filters.empty()) return runs;
  for (MeasuredRun& run : runs) {
    std::erase_if(run.results, [&](const Measurement& m) {
      return std::none_of(filters.begin(), filters.end(),
                          [&](const std::string& f) { return m.id.find(f) != std::string::npos; });
    });
    if (run.results.empty()) {
      throw InputError(fmt::format("--filter {}: keeps no benchmark of {}", fmt::join(filters, ","), run.file));
    }
  }
  return runs;
}

std::vector<MeasuredRun> load_runs(const std::vector<std::string>& files, const std::vector<std::string>& filters) {
  std::vector<MeasuredRun> runs;
  for (const std::string& file : files) runs.push_back(load_measured(file));
  return filter_runs(std::move(runs), filters);
}

Validation validate_runs(std::span<const MeasuredRun> runs, const HardwareRegistry& registry,
                         const std::optional<std::string>& gpu, const Calibration* calibration) {
  Validation v;
  v.gpu = &gpu_of_runs(runs, registry, gpu);
  v.roofs = Roofs::of(*v.gpu);
  v.predictions = predict(runs, v.roofs, calibration);
  v.layers = check_layers(runs, v.roofs, calibration);
  v.link = bench::collectives::model_link(*v.gpu);
  v.collectives = compare_collectives(runs, v.link, calibration != nullptr ? &calibration->collectives : nullptr);
  return v;
}

Report run_validate(const ValidateOptions& options, std::span<const MeasuredRun> runs, const Validation& validation,
                    const Calibration* calibration) {
  const GpuSpec& gpu = *validation.gpu;
  const std::vector<Prediction>& predictions = validation.predictions;
  const std::vector<LayerCheck>& layers = validation.layers;
  const LinkSpec& link = validation.link;
  const std::vector<CollectiveComparison>& collectives = validation.collectives;

  Report report;
  report.kind = "validate";
  report.inputs = {{"measured", file_list(runs)},
                   {"calibration", calibration != nullptr ? nlohmann::json(calibration->file) : nullptr},
                   {"gpu", options.gpu ? nlohmann::json(*options.gpu) : nullptr},
                   {"filter", options.filters}};
  report.hardware.push_back({gpu.id, gpu.origin});
  Table benchmarks = Table::from_rows<Prediction>(
      "benchmarks",
      fmt::format("Measured vs predicted on {} (times per launch; error = (predicted - measured) / measured)", gpu.id),
      prediction_columns, predictions);
  if (parse_format(options.common.format) == Format::table) {
    benchmarks = narrowed(std::move(benchmarks),
                          {"id", "pattern", "prediction", "bound", "measured_us", "spread_pct", "roofline_us",
                           "achieved_pct", "calibrated_us", "calibrated_error_pct", "detail"});
  }
  report.tables.push_back(std::move(benchmarks));
  const std::vector<PatternSummary> patterns = summarize_patterns(predictions);
  report.tables.push_back(
      Table::from_rows<PatternSummary>("patterns", "Per access pattern", pattern_columns, patterns));
  if (!layers.empty()) {
    Table table = Table::from_rows<LayerCheck>(
        "layers",
        "Decoder layers timed end to end vs the sum of their stages' predictions (each stage the operation it runs; "
        "calibrated through the table of the kernel that ran it where the run names one, else the operation's best "
        "table; 'best tables' is the same sum through the best tables only, as llm predicts)",
        layer_columns, layers);
    if (parse_format(options.common.format) == Format::table) {
      table = narrowed(std::move(table), {"id", "measured_us", "stages_measured_us", "roofline_us",
                                          "roofline_error_pct", "calibrated_us", "calibrated_error_pct",
                                          "ran_table_stages", "best_tables_us", "best_tables_error_pct", "detail"});
    }
    report.tables.push_back(std::move(table));
  }
  const std::vector<CeilingRow> ceilings = ceiling_rows(measured_ceilings(runs), gpu);
  report.tables.push_back(
      Table::from_rows<CeilingRow>("ceilings", "Measured ceilings vs the hardware file", ceiling_columns, ceilings));
  if (!collectives.empty()) {
    report.tables.push_back(Table::from_rows<CollectiveComparison>(
        "collectives",
        fmt::format("Collectives measured vs the ring model over {} ({:.0f} GB/s per direction, {:.1f} us per step)",
                    link.name, link.bandwidth_bytes_per_s / 1e9, link.latency_s * 1e6),
        collective_columns, collectives));
    report.notes.push_back(
        "collectives: model = ring_steps x latency + bus_factor x bytes / link bandwidth (docs/collectives.md); "
        "calibrated = the calibration's measured table for the op and GPU count, interpolated in log(bytes)");
  }

  report.notes.push_back(fmt::format(
      "roofline: the bare model, max(FLOPs / peak, bytes / bandwidth) with the figures of {} ({:.2f} TB/s); no "
      "measurement enters it; 'of roofline %' = roofline time / measured time",
      gpu.origin, gpu.memory_bandwidth_tbps));
  report.notes.push_back(
      "bytes at roof: the model's HBM bytes (read + written) of the problem; for access patterns the 32-byte sectors "
      "moved (access.hpp); FLOPs and bytes come from the model's formulas (ops.hpp, attention.hpp), rebuilt from "
      "each benchmark's recorded parameters");
  if (calibration != nullptr) {
    report.notes.push_back(
        fmt::format("calibrated: the roofline time divided by the efficiency that {} learnt for the benchmark's own "
                    "implementation (its 'table'), interpolated at the benchmark's size",
                    calibration->file));
    if (learnt_from_any(*calibration, runs)) {
      report.notes.push_back(
          "in-sample: the calibration was learnt from this run, so its errors show how closely the tables reproduce "
          "their own points (points of equal size are averaged); `roofline calibrate` reports leave-one-out errors, "
          "the out-of-sample estimate");
    }
  } else {
    report.notes.push_back("no --calibration: every prediction is the bare roofline");
  }
  if (!layers.empty()) {
    report.notes.push_back(
        "layers: each decoder layer (timed end to end as one CUDA graph) is predicted as the sum of its stages, each "
        "stage the operation it runs (its FLOPs and bytes from the model), calibrated through the table of the best "
        "measured implementation of that operation: the layer suite itself is never learnt from, so these errors are "
        "out of sample; its stages (patterns layer.*) are timed inside the layer with direct launches");
  }
  std::vector<std::string> beat;
  for (const Prediction& p : predictions) {
    if (p.achieved() && *p.achieved() > 1.0) beat.push_back(p.measurement->id);
  }
  if (!beat.empty()) {
    report.notes.push_back(
        fmt::format("{} benchmark(s) beat the roofline (data served from a cache the model does "
                    "not count, or a datasheet figure below what the GPU delivers): {}",
                    beat.size(), fmt::join(beat, ", ")));
  }
  return report;
}

Report run_regression(const ValidateOptions& options, const MeasuredRun& baseline, const MeasuredRun& measured,
                      bool& regressed) {
  if (baseline.device_name != measured.device_name) {
    throw InputError(fmt::format("--baseline {} ran on '{}' but {} on '{}': compare runs of one GPU", baseline.file,
                                 baseline.device_name, measured.file, measured.device_name));
  }
  const double tolerance = parse_tolerance(options.tolerance);
  const std::vector<Comparison> comparisons = compare_runs(baseline, measured, tolerance);
  // Two unrelated runs (a CI job pointed at the wrong file) share no benchmark: none could have
  // regressed, and passing would hide the mistake.
  const auto compared = std::count_if(comparisons.begin(), comparisons.end(), [](const Comparison& c) {
    return c.verdict == Verdict::same || c.verdict == Verdict::faster || c.verdict == Verdict::slower ||
           c.verdict == Verdict::noisy || c.verdict == Verdict::failed;
  });
  if (compared == 0) {
    throw InputError(
        fmt::format("--baseline {} and {}: no benchmark was compared ({} in the baseline, {} in the "
                    "new run, none timed in both under one id and size)",
                    baseline.file, measured.file, baseline.results.size(), measured.results.size()));
  }
  std::vector<VerdictCount> counts;
  regressed = false;
  for (std::size_t i = 0; i <= static_cast<std::size_t>(Verdict::not_compared); ++i) {
    const auto v = static_cast<Verdict>(i);
    const auto n =
        std::count_if(comparisons.begin(), comparisons.end(), [v](const Comparison& c) { return c.verdict == v; });
    counts.push_back({v, static_cast<std::int64_t>(n)});
    if (n > 0 && is_regression(v)) regressed = true;
  }
  Report report;
  report.kind = "regression";
  report.inputs = {{"baseline", baseline.file},
                   {"measured", measured.file},
                   {"tolerance_pct", tolerance * 100},
                   {"filter", options.filters}};
  report.tables.push_back(Table::from_rows<Comparison>(
      "benchmarks", fmt::format("{} vs baseline {} (per-launch times)", measured.file, baseline.file),
      comparison_columns, comparisons));
  report.tables.push_back(Table::from_rows<VerdictCount>("summary", "Verdicts", verdict_columns, counts));
  report.extra_results["regressed"] = regressed;
  report.notes.push_back(fmt::format(
      "change = new median / old median - 1; same: |change| <= {:g}%; slower: change > {:g}% and new min > old max; "
      "faster: change < -{:g}% and new max < old min; noisy: otherwise (the [min, max] ranges overlap)",
      tolerance * 100, tolerance * 100, tolerance * 100));
  report.notes.push_back("exit code 1 when a benchmark is slower, or failed its check in the new run");
  if (baseline.quick != measured.quick) {
    report.notes.push_back("one run is --quick and the other is not: benchmarks of different sizes are not compared");
  }
  return report;
}

GateLimits gate_limits(const ValidateOptions& options) {
  GateLimits limits;
  // The error passes 100% when a kernel runs more than twice as fast as its table predicts; a
  // share of the roofline above 100% would fail every kernel that does not beat the model.
  if (options.max_error) {
    limits.max_error = parse_percentage(*options.max_error, "--max-error", {.upper_pct = 1000, .upper_included = true});
  }
  if (options.min_of_roofline) {
    limits.min_of_roofline =
        parse_percentage(*options.min_of_roofline, "--min-of-roofline", {.upper_pct = 100, .upper_included = true});
  }
  for (const std::string& kind : split_list(options.gate_kinds, "--gate-kinds")) {
    limits.kinds.push_back(parse_result_kind(kind, "--gate-kinds"));
  }
  if (!limits.kinds.empty() && !limits.any()) {
    throw InputError("--gate-kinds: chooses what the gate judges; give --max-error or --min-of-roofline");
  }
  return limits;
}

void add_gate(Report& report, const GateOutcome& gate) {
  report.inputs["max_error_pct"] = gate.limits.max_error ? nlohmann::json(*gate.limits.max_error * 100) : nullptr;
  report.inputs["min_of_roofline_pct"] =
      gate.limits.min_of_roofline ? nlohmann::json(*gate.limits.min_of_roofline * 100) : nullptr;
  const std::vector<GateSummary> summaries = gate_summaries(gate);
  const std::vector<GateResult> offenders = gate.offenders();
  report.tables.push_back(Table::from_rows<GateSummary>("gate", "The gate: results checked against each limit",
                                                        gate_summary_columns, summaries));
  report.tables.push_back(Table::from_rows<GateResult>(
      "offenders",
      "Offenders: beyond a limit (error = (calibrated - measured) / measured; of roofline = roofline / measured)",
      offender_columns, offenders));
  report.tables.push_back(Table::from_rows<NotChecked>(
      "not_checked", "Not checked: timed results with no figure for a limit (not offenders)", not_checked_columns,
      gate.not_checked));
  report.extra_results["gate_passed"] = gate.passed();
  std::vector<std::string> parts;
  for (const GateSummary& s : summaries) {
    parts.push_back(
        s.check == GateCheck::max_error
            ? fmt::format("max error {:g}%: {} of {} checked (in sample {} of {}, out of sample {} of {})",
                          s.limit * 100, s.offenders, s.checked, s.in_sample_offenders, s.in_sample,
                          s.offenders - s.in_sample_offenders, s.out_of_sample)
            : fmt::format("min of roofline {:g}%: {} of {} checked", s.limit * 100, s.offenders, s.checked));
  }
  const std::size_t offending = gate.offending_results();
  report.extra_results["gate_offending_results"] = offending;
  report.notes.push_back(fmt::format("gate: {} {} offended ({}); {} not checked{}", offending,
                                     offending == 1 ? "result" : "results", fmt::join(parts, "; "),
                                     gate.not_checked.size(), gate.passed() ? "" : "; exit code 1"));
  report.notes.push_back(
      "gate: in sample = the calibration was learnt from the result's run, and its suite is one calibrate learns "
      "from (the layer suite never is); results not timed are not checked");
}

void setup_validate_command(CLI::App& app) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* command = app.add_subcommand(
      "validate",
      "Measured vs predicted for every benchmark (bare roofline, and calibrated with --calibration); with --baseline, "
      "two runs compared for CI (exit 1 on a regression); with --max-error / --min-of-roofline, a gate on measured "
      "vs predicted (exit 1 when a result is beyond a limit)");
  command->add_option("--measured", options->measured,
                      "A bench JSON report (or compute selftest JSON lines); repeatable. Without it the suite runs "
                      "now (needs a GPU and a CUDA build: exit 3 otherwise)");
  command->add_option("--calibration", options->calibration,
                      "A calibration file (roofline calibrate): adds each benchmark's calibrated prediction");
  command->add_option("--baseline", options->baseline,
                      "Compare --measured with this earlier run, benchmark by benchmark, instead of predicting");
  CLI::Option* tolerance = command->add_option(
      "--tolerance", options->tolerance, "With --baseline: the change of median that counts, in percent (default 5%)");
  command->add_option("--max-error", options->max_error,
                      "The gate: exit 1 when a result's calibrated prediction misses its measured time by more than "
                      "this, |calibrated - measured| / measured, in percent (10 or 10%); needs --calibration");
  command->add_option("--min-of-roofline", options->min_of_roofline,
                      "The gate: exit 1 when a result reaches less than this share of the bare roofline (roofline "
                      "time / measured time, the 'of roofline %'), in percent (50 or 50%)");
  command->add_option("--gate-kinds", options->gate_kinds,
                      "The gate: judge only these kinds of result (benchmark, layer_stage, layer, collective; "
                      "comma-separated; default all)");
  command->add_option("--gpu", options->gpu, "The hardware file to predict with, when the run matched none");
  command->add_option("--filter", options->filters,
                      "Only benchmarks whose id contains one of these texts (comma-separated; repeatable)");
  command->add_option("--suite", options->suite, "Without --measured: the suites to run (memory, all)")
      ->capture_default_str();
  command->add_flag("--quick", options->quick, "Without --measured: run the quick subset");
  command->add_option("--json", options->json_out, "Without --measured: also write the bench report of the run");
  add_common_options(*command, options->common);
  command->callback([options, tolerance] {
    options->tolerance_given = tolerance->count() > 0;
    run_validate_command(*options);
  });
}

}  // namespace roofline::cli
