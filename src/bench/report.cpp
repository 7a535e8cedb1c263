// The report of a run and of --list.
#include <fmt/format.h>

#include <algorithm>

#include "roofline/bench/bench.hpp"
#include "roofline/core/version.hpp"

namespace roofline::bench {
namespace {

Cell optional_mhz(const std::optional<double>& mhz) {
  return mhz ? Cell{*mhz} : Cell{};
}

constexpr std::array<ColumnOf<BenchRun>, 23> device_columns{{
    {{"name", "device", 0}, [](const BenchRun& r) { return Cell{r.device.name}; }},
    {{"index", "index", 0}, [](const BenchRun& r) { return Cell{std::int64_t{r.device.index}}; }},
    {{"compute_capability", "cc", 0},
     [](const BenchRun& r) { return Cell{fmt::format("{}.{}", r.device.compute_major, r.device.compute_minor)}; }},
    {{"sms", "SMs", 0}, [](const BenchRun& r) { return Cell{std::int64_t{r.device.sms}}; }},
    {{"sm_clock_max_mhz", "SM clock max [MHz]", 0}, [](const BenchRun& r) { return Cell{r.device.sm_clock_max_mhz}; }},
    {{"memory_clock_max_mhz", "mem clock max [MHz]", 0},
     [](const BenchRun& r) { return Cell{r.device.memory_clock_max_mhz}; }},
    {{"memory_bus_bits", "bus [bit]", 0},
     [](const BenchRun& r) { return Cell{std::int64_t{r.device.memory_bus_bits}}; }},
    {{"memory_bandwidth_from_clocks_tbps", "clocks x bus [TB/s]", 2},
     [](const BenchRun& r) { return Cell{r.device.memory_bandwidth_from_clocks() * 1e-12}; }},
    {{"l2_bytes", "L2 [B]", 0}, [](const BenchRun& r) { return Cell{r.device.l2_bytes}; }},
    {{"memory_bytes", "memory [B]", 0}, [](const BenchRun& r) { return Cell{r.device.memory_bytes}; }},
    {{"smem_per_sm_bytes", "smem/SM [B]", 0}, [](const BenchRun& r) { return Cell{r.device.smem_per_sm_bytes}; }},
    {{"ecc", "ECC", 0}, [](const BenchRun& r) { return Cell{r.device.ecc}; }},
    {{"driver_version", "driver API", 0},
     [](const BenchRun& r) { return Cell{std::int64_t{r.device.driver_version}}; }},
    {{"runtime_version", "runtime", 0}, [](const BenchRun& r) { return Cell{std::int64_t{r.device.runtime_version}}; }},
    {{"cublas_version", "cuBLAS", 0}, [](const BenchRun& r) { return Cell{std::int64_t{r.device.cublas_version}}; }},
    {{"pci_bus_id", "PCI", 0}, [](const BenchRun& r) { return Cell{r.device.pci_bus_id}; }},
    {{"sm_clock_start_mhz", "SM clock start", 0},
     [](const BenchRun& r) { return optional_mhz(r.device.sm_clock_start_mhz); }},
    {{"sm_clock_end_mhz", "SM clock end", 0},
     [](const BenchRun& r) { return optional_mhz(r.device.sm_clock_end_mhz); }},
    {{"memory_clock_start_mhz", "mem clock start", 0},
     [](const BenchRun& r) { return optional_mhz(r.device.memory_clock_start_mhz); }},
    {{"memory_clock_end_mhz", "mem clock end", 0},
     [](const BenchRun& r) { return optional_mhz(r.device.memory_clock_end_mhz); }},
    {{"sm_clock_default_mhz", "SM clock default", 0},
     [](const BenchRun& r) { return optional_mhz(r.device.sm_clock_default_mhz); }},
    {{"sm_clock_default_source", "default from", 0},
     [](const BenchRun& r) {
       return r.device.sm_clock_default_source.empty() ? Cell{} : Cell{r.device.sm_clock_default_source};
     }},
    {{"hardware_id", "hardware file", 0},
     [](const BenchRun& r) { return r.hardware_id ? Cell{*r.hardware_id} : Cell{}; }},
}};

std::int64_t count_of(const BenchRun& run, Disposition d) {
  return std::count_if(run.results.begin(), run.results.end(),
                       [d](const BenchmarkResult& r) { return r.disposition == d; });
}

std::int64_t throttled_count(const BenchRun& run) {
  return std::count_if(run.results.begin(), run.results.end(),
                       [](const BenchmarkResult& r) { return r.timing && r.timing->throttled; });
}

constexpr std::array<ColumnOf<BenchRun>, 21> run_columns{{
    {{"started_utc", "started (UTC)", 0}, [](const BenchRun& r) { return Cell{r.started_utc}; }},
    {{"duration_s", "duration [s]", 1}, [](const BenchRun& r) { return Cell{r.duration_s}; }},
    {{"suites", "suites", 0}, [](const BenchRun& r) { return Cell{fmt::format("{}", fmt::join(r.suites, ","))}; }},
    {{"quick", "quick", 0}, [](const BenchRun& r) { return Cell{r.quick}; }},
    {{"check_only", "check only", 0}, [](const BenchRun& r) { return Cell{r.policy.check_only}; }},
    {{"seed", "seed", 0},
     [](const BenchRun& r) { return Cell{static_cast<std::int64_t>(r.seed & 0x7FFFFFFFFFFFFFFFULL)}; }},
    {{"samples", "samples", 0}, [](const BenchRun& r) { return Cell{std::int64_t{r.policy.samples}}; }},
    {{"min_samples", "min samples", 0}, [](const BenchRun& r) { return Cell{std::int64_t{r.policy.min_samples}}; }},
    {{"min_time_ms", "min time [ms]", 1}, [](const BenchRun& r) { return Cell{r.policy.min_time_s * 1e3}; }},
    {{"max_noise_pct", "max noise %", 2}, [](const BenchRun& r) { return optional_cell(r.policy.max_noise, 100.0); }},
    {{"keep_throttled", "keep throttled", 0}, [](const BenchRun& r) { return Cell{r.policy.keep_throttled}; }},
    {{"min_warmup_launches", "warm-up launches", 0},
     [](const BenchRun& r) { return Cell{std::int64_t{r.policy.min_warmup_launches}}; }},
    {{"min_warmup_ms", "warm-up [ms]", 1}, [](const BenchRun& r) { return Cell{r.policy.min_warmup_s * 1e3}; }},
    {{"target_sample_ms", "sample [ms]", 2}, [](const BenchRun& r) { return Cell{r.policy.target_sample_s * 1e3}; }},
    {{"passed", "passed", 0}, [](const BenchRun& r) { return Cell{count_of(r, Disposition::passed)}; }},
    {{"failed", "failed", 0}, [](const BenchRun& r) { return Cell{count_of(r, Disposition::failed)}; }},
    {{"not_run", "not run", 0}, [](const BenchRun& r) { return Cell{count_of(r, Disposition::not_run)}; }},
    {{"not_supported", "not supported", 0},
     [](const BenchRun& r) { return Cell{count_of(r, Disposition::not_supported)}; }},
    {{"throttled", "throttled", 0}, [](const BenchRun& r) { return Cell{throttled_count(r)}; }},
    {{"stopped_early", "stopped early", 0}, [](const BenchRun& r) { return Cell{r.context_lost}; }},
    {{"tool_commit", "commit", 0}, [](const BenchRun& /*r*/) { return Cell{std::string(tool_commit())}; }},
}};

Cell target_rate(const TargetResult& t, const std::optional<double>& rate, Metric metric) {
  return t.metric == metric ? optional_cell(rate, 1e-12) : Cell{};
}

constexpr std::array<ColumnOf<TargetResult>, 11> target_columns{{
    {{"target", "target", 0}, [](const TargetResult& t) { return Cell{t.description}; }},
    {{"metric", "metric", 0}, [](const TargetResult& t) { return Cell{std::string(name_of(t.metric))}; }},
    {{"candidate", "best candidate", 0},
     [](const TargetResult& t) { return t.candidate ? Cell{*t.candidate} : Cell{}; }},
    {{"candidate_tbps", "TB/s", 3},
     [](const TargetResult& t) { return target_rate(t, t.candidate_rate, Metric::bandwidth); }},
    {{"candidate_tflops", "TFLOP/s", 1},
     [](const TargetResult& t) { return target_rate(t, t.candidate_rate, Metric::flop_rate); }},
    {{"reference", "reference", 0}, [](const TargetResult& t) { return Cell{t.reference}; }},
    {{"reference_tbps", "ref TB/s", 3},
     [](const TargetResult& t) { return target_rate(t, t.reference_rate, Metric::bandwidth); }},
    {{"reference_tflops", "ref TFLOP/s", 1},
     [](const TargetResult& t) { return target_rate(t, t.reference_rate, Metric::flop_rate); }},
    {{"ratio_pct", "achieved %", 1}, [](const TargetResult& t) { return optional_cell(t.ratio, 100.0); }},
    {{"required_pct", "required %", 1}, [](const TargetResult& t) { return Cell{t.required * 100}; }},
    {{"met", "met", 0}, [](const TargetResult& t) { return t.met ? Cell{*t.met} : Cell{}; }},
}};

// What the memcpy ceiling measured, against the hardware file and against the copy kernels of
// the same run: a ceiling below the kernels it judges is itself mis-measured (the first H200
// run timed it as a copy-engine node inside a CUDA graph).
std::vector<std::string> ceiling_notes(const BenchRun& run) {
  std::vector<std::string> notes;
  const BenchmarkResult* memcpy = find_result(run.results, "memcpy.d2d");
  if (memcpy == nullptr || !memcpy->bandwidth()) return notes;
  const double ceiling = *memcpy->bandwidth();
  if (run.hardware_bandwidth_tbps && run.hardware_id) {
    notes.push_back(fmt::format("cudaMemcpy D2D moved {:.3f} TB/s: {:.1f}% of the {} TB/s in {}", ceiling * 1e-12,
                                ceiling * 1e-12 / *run.hardware_bandwidth_tbps * 100, *run.hardware_bandwidth_tbps,
                                *run.hardware_id));
  }
  if (const BenchmarkResult* graph = find_result(run.results, "memcpy.d2d.graph"); graph && graph->bandwidth()) {
    notes.push_back(fmt::format(
        "memcpy.d2d is timed as the user calls it (cudaMemcpyAsync launches, events around a batch): {:.3f} TB/s; "
        "the same copy captured into a CUDA graph (a memcpy node) moved {:.3f} TB/s",
        ceiling * 1e-12, *graph->bandwidth() * 1e-12));
  }
  const BenchmarkResult* best_copy = nullptr;
  for (const BenchmarkResult& r : run.results) {
    if (r.id.starts_with("stream.copy.") && r.bandwidth() &&
        (best_copy == nullptr || *r.bandwidth() > *best_copy->bandwidth())) {
      best_copy = &r;
    }
  }
  if (best_copy != nullptr && *best_copy->bandwidth() > 1.05 * ceiling) {
    notes.push_back(fmt::format(
        "WARNING: the copy kernel {} ({:.3f} TB/s) beats the memcpy ceiling ({:.3f} TB/s) by more than 5%: the "
        "ceiling looks mis-measured, so every % memcpy figure is too high",
        best_copy->id, *best_copy->bandwidth() * 1e-12, ceiling * 1e-12));
  }
  return notes;
}

// The clocks of the whole run, and which results ran throttled: what a reader checks before
// trusting a figure (the SM clock of an H200 falls by a quarter under sustained load).
std::vector<std::string> clock_notes(const BenchRun& run) {
  std::vector<std::string> notes;
  const DeviceInfo& d = run.device;
  const auto mhz = [](const std::optional<double>& v) { return v ? fmt::format("{:.0f} MHz", *v) : "not recorded"; };
  if (d.sm_clock_default_mhz) {
    notes.push_back(fmt::format(
        "SM clock {} at the start, {} at the end of the run; default {:.0f} MHz ({}); a sample below {:.0f}% of it "
        "({:.0f} MHz) is throttled{}",
        mhz(d.sm_clock_start_mhz), mhz(d.sm_clock_end_mhz), *d.sm_clock_default_mhz, d.sm_clock_default_source,
        throttle_clock_fraction * 100, throttle_clock_fraction * *d.sm_clock_default_mhz,
        run.policy.keep_throttled ? " and kept (--keep-throttled)" : " and taken again"));
  } else {
    notes.push_back(fmt::format(
        "SM clock {} at the start, {} at the end of the run; no default SM clock (NVML missing or silent), so no "
        "sample was checked for throttling",
        mhz(d.sm_clock_start_mhz), mhz(d.sm_clock_end_mhz)));
  }
  std::vector<std::string> throttled;
  for (const BenchmarkResult& r : run.results) {
    if (r.timing && r.timing->throttled) throttled.push_back(r.id);
  }
  if (!throttled.empty()) {
    constexpr std::size_t shown = 10;
    notes.push_back(fmt::format(
        "{} result{} ran throttled (clock marked *): {}{}", throttled.size(), throttled.size() == 1 ? "" : "s",
        fmt::join(throttled.begin(), throttled.begin() + std::min(shown, throttled.size()), ", "),
        throttled.size() > shown ? ", ..." : ""));
  }
  return notes;
}

Table group_table(const GroupLayout& layout, std::span<const BenchmarkResult> results, std::string_view suite) {
  Table table{std::string(layout.name), std::string(layout.title), {}, {}};
  for (const auto& c : layout.columns) table.columns.push_back(c.column);
  for (const auto& c : columns::measurement) table.columns.push_back(c.column);
  for (const BenchmarkResult& r : results) {
    if (r.suite != suite || r.group != layout.name) continue;
    std::vector<Cell> cells;
    cells.reserve(table.columns.size());
    for (const auto& c : layout.columns) cells.push_back(c.value(r));
    for (const auto& c : columns::measurement) cells.push_back(c.value(r));
    table.rows.push_back(std::move(cells));
  }
  return table;
}

bool is_measurement_column(std::string_view key) {
  return std::any_of(columns::measurement.begin(), columns::measurement.end(),
                     [key](const columns::C& c) { return c.column.key == key; });
}

// "1980", or "1485*" for a throttled result; empty where the clock was not recorded.
Cell clock_cell(const Cell& sm_clock_mhz, const Cell& throttled) {
  const double* mhz = std::get_if<double>(&sm_clock_mhz);
  if (mhz == nullptr) return Cell{};
  const bool* flag = std::get_if<bool>(&throttled);
  return Cell{fmt::format("{:.0f}{}", *mhz, flag != nullptr && *flag ? "*" : "")};
}

}  // namespace

Report make_report(const BenchRun& run, const nlohmann::json& inputs) {
  Report report;
  report.kind = "bench";
  report.inputs = inputs;
  const std::span<const BenchRun> one(&run, 1);
  report.tables.push_back(Table::from_rows<BenchRun>("device", "Device", device_columns, one));
  report.tables.push_back(Table::from_rows<BenchRun>("run", "Run", run_columns, one));
  std::vector<TargetResult> targets;
  for (const std::string& name : run.suites) {
    const SuiteInfo& suite = find_suite(name);
    for (const GroupLayout& layout : suite.groups) {
      Table table = group_table(layout, run.results, suite.name);
      if (!table.rows.empty()) report.tables.push_back(std::move(table));
    }
    if (suite.derived_tables != nullptr) {
      for (Table& table : suite.derived_tables(run.results)) {
        if (!table.rows.empty()) report.tables.push_back(std::move(table));
      }
    }
    for (TargetResult& t : evaluate_targets(suite.targets, run.results)) targets.push_back(std::move(t));
  }
  report.tables.push_back(Table::from_rows<TargetResult>("targets", "Targets", target_columns, targets));

  if (run.hardware_id) report.hardware.push_back({*run.hardware_id, run.hardware_origin});
  report.notes.push_back("bandwidth = (bytes read + bytes written) / median time per launch; 1 TB/s = 1e12 B/s");
  report.notes.push_back(
      "bytes (model) come from the model's formulas (roofline/ops.hpp); moved bytes from the 32-byte sector model "
      "(roofline/access.hpp); see docs/bench.md");
  report.notes.push_back("every timed result was first checked against a host reference; failed results are not timed");
  report.notes.push_back(fmt::format("hardware: {}", run.hardware_detail));
  for (std::string& note : ceiling_notes(run)) report.notes.push_back(std::move(note));
  for (std::string& note : clock_notes(run)) report.notes.push_back(std::move(note));
  if (run.policy.check_only) report.notes.push_back("--check-only: every case checked, nothing timed");
  if (run.quick) {
    report.notes.push_back("--quick: small buffers and few samples; figures are rough and targets not meaningful");
  }
  for (const std::string& note : run.notes) report.notes.push_back(note);
  return report;
}

Report readable(Report report) {
  constexpr std::size_t clock_marker = static_cast<std::size_t>(-1);
  for (Table& table : report.tables) {
    const auto key_at = [&table](std::string_view key) {
      for (std::size_t i = 0; i < table.columns.size(); ++i) {
        if (table.columns[i].key == key) return i;
      }
      return table.columns.size();
    };
    const std::size_t clock = key_at("sm_clock_mhz");
    const std::size_t throttled = key_at("throttled");
    if (clock == table.columns.size() || throttled == table.columns.size()) continue;  // not a result table
    // The columns shown, by their place in the full table; the clock goes before the (long) detail.
    std::vector<std::size_t> shown;
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      if (table.columns[i].key == "detail") shown.push_back(clock_marker);
      if (!is_measurement_column(table.columns[i].key)) shown.push_back(i);
    }
    if (std::find(shown.begin(), shown.end(), clock_marker) == shown.end()) shown.push_back(clock_marker);
    std::vector<Column> columns;
    for (std::size_t i : shown) columns.push_back(i == clock_marker ? Column{"clock", "SM MHz", 0} : table.columns[i]);
    for (std::vector<Cell>& row : table.rows) {
      std::vector<Cell> cells;
      cells.reserve(shown.size());
      for (std::size_t i : shown) {
        cells.push_back(i == clock_marker ? clock_cell(row[clock], row[throttled]) : std::move(row[i]));
      }
      row = std::move(cells);
    }
    table.columns = std::move(columns);
  }
  return report;
}

Report make_case_list(std::span<const SuiteInfo* const> selected, bool quick, const nlohmann::json& inputs) {
  constexpr std::array<ColumnOf<CaseInfo>, 5> list_columns{{
      {{"suite", "suite", 0}, [](const CaseInfo& c) { return Cell{c.suite}; }},
      {{"group", "group", 0}, [](const CaseInfo& c) { return Cell{c.group}; }},
      {{"id", "benchmark", 0}, [](const CaseInfo& c) { return Cell{c.id}; }},
      {{"implementation", "impl", 0}, [](const CaseInfo& c) { return Cell{c.implementation}; }},
      {{"quick", "in --quick", 0}, [](const CaseInfo& c) { return Cell{c.quick}; }},
  }};
  std::vector<CaseInfo> rows;
  for (const SuiteInfo* suite : selected) {
    for (CaseInfo& c : suite->cases()) {
      if (!quick || c.quick) rows.push_back(std::move(c));
    }
  }
  Report report;
  report.kind = "bench-cases";
  report.inputs = inputs;
  report.tables.push_back(Table::from_rows<CaseInfo>("cases", "Benchmark cases", list_columns, rows));
  report.notes.push_back(fmt::format("{} cases; running them needs an NVIDIA GPU and a CUDA build", rows.size()));
  return report;
}

}  // namespace roofline::bench
