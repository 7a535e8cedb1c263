#include "roofline/bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "roofline/bench_runner.hpp"
#include "roofline/error.hpp"
#include "roofline/text.hpp"

namespace roofline::bench {
namespace {

Cell optional_cell(const std::optional<double>& value, double scale = 1.0) {
  return value ? Cell{*value * scale} : Cell{};
}

Cell timing_cell(const BenchmarkResult& r, double Summary::*field) {
  return r.timing ? Cell{r.timing->seconds.*field * 1e6} : Cell{};
}

const BenchmarkResult* find_result(std::span<const BenchmarkResult> results, std::string_view id) {
  for (const BenchmarkResult& r : results) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char ch : text) {
    if (std::isalnum(static_cast<unsigned char>(ch)) != 0) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

std::set<std::string> spec_words(const GpuSpec& spec) {
  std::set<std::string> words;
  const auto add = [&words](std::string_view text) {
    for (std::string& w : words_of(text)) words.insert(std::move(w));
  };
  add(spec.id);
  for (const std::string& alias : spec.aliases) add(alias);
  add(spec.name);
  add(spec.memory_type);
  words.insert(fmt::format("{}gb", static_cast<long long>(std::lround(spec.memory_capacity_gb))));
  return words;
}

}  // namespace

// ---- results ---------------------------------------------------------------------------------

Cell BenchmarkResult::parameter(std::string_view key) const {
  for (const Parameter& p : parameters) {
    if (p.key == key) return p.value;
  }
  return Cell{};
}

std::optional<double> BenchmarkResult::bandwidth() const {
  if (!timing || timing->seconds.median <= 0) return std::nullopt;
  return cost.bytes() / timing->seconds.median;
}

std::optional<double> BenchmarkResult::best_bandwidth() const {
  if (!timing || timing->seconds.min <= 0) return std::nullopt;
  return cost.bytes() / timing->seconds.min;
}

std::optional<double> BenchmarkResult::flop_rate() const {
  if (!timing || timing->seconds.median <= 0 || cost.flops <= 0) return std::nullopt;
  return cost.flops / timing->seconds.median;
}

std::optional<double> BenchmarkResult::rate(Metric metric) const {
  return metric == Metric::bandwidth ? bandwidth() : flop_rate();
}

std::optional<double> BenchmarkResult::sector_bandwidth() const {
  if (!timing || !sectors || timing->seconds.median <= 0) return std::nullopt;
  return sectors->moved_bytes() / timing->seconds.median;
}

void relate(std::vector<BenchmarkResult>& results) {
  std::map<std::string, const BenchmarkResult*> by_id;
  for (const BenchmarkResult& r : results) by_id[r.id] = &r;
  // Computed first and assigned after: a result may be another's ceiling or reference.
  std::vector<std::pair<std::optional<double>, std::optional<double>>> related(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const BenchmarkResult& r = results[i];
    const std::optional<double> own = r.rate(r.ceiling_metric);
    if (!own || !r.timing) continue;
    if (auto it = by_id.find(r.ceiling_id); it != by_id.end()) {
      if (const std::optional<double> ceiling = it->second->rate(r.ceiling_metric); ceiling && *ceiling > 0) {
        related[i].first = *own / *ceiling;
      }
    }
    if (auto it = by_id.find(r.reference_id); it != by_id.end() && it->second->timing) {
      related[i].second = it->second->timing->seconds.median / r.timing->seconds.median;
    }
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    results[i].ceiling_fraction = related[i].first;
    results[i].reference_speedup = related[i].second;
  }
}

std::vector<TargetResult> evaluate_targets(std::span<const Target> targets, std::span<const BenchmarkResult> results) {
  std::vector<TargetResult> out;
  for (const Target& target : targets) {
    TargetResult t;
    t.description = std::string(target.description);
    t.metric = target.metric;
    const bool absolute = target.reference.empty();
    t.reference = absolute ? "fixed" : std::string(target.reference);
    t.required = absolute ? 1.0 : target.required;
    for (std::string_view id : target.candidates) {
      if (id.empty()) continue;
      const BenchmarkResult* r = find_result(results, id);
      if (r == nullptr || r->disposition != Disposition::passed) continue;
      const std::optional<double> rate = r->rate(target.metric);
      if (rate && (!t.candidate_rate || *rate > *t.candidate_rate)) {
        t.candidate = r->id;
        t.candidate_rate = rate;
      }
    }
    if (absolute) {
      t.reference_rate = target.required;
    } else if (const BenchmarkResult* reference = find_result(results, target.reference);
               reference != nullptr && reference->disposition == Disposition::passed) {
      t.reference_rate = reference->rate(target.metric);
    }
    if (t.candidate_rate && t.reference_rate && *t.reference_rate > 0) {
      t.ratio = *t.candidate_rate / *t.reference_rate;
      t.met = *t.ratio >= t.required;
    }
    out.push_back(std::move(t));
  }
  return out;
}

// ---- columns ---------------------------------------------------------------------------------

namespace cells {
Cell id(const BenchmarkResult& r) {
  return Cell{r.id};
}
Cell implementation(const BenchmarkResult& r) {
  return Cell{r.implementation};
}
Cell status(const BenchmarkResult& r) {
  return Cell{std::string(name_of(r.disposition))};
}
Cell model_bytes(const BenchmarkResult& r) {
  return Cell{r.cost.bytes()};
}
Cell median_us(const BenchmarkResult& r) {
  return timing_cell(r, &Summary::median);
}
Cell min_us(const BenchmarkResult& r) {
  return timing_cell(r, &Summary::min);
}
Cell max_us(const BenchmarkResult& r) {
  return timing_cell(r, &Summary::max);
}
Cell spread_pct(const BenchmarkResult& r) {
  return r.timing ? Cell{r.timing->seconds.spread() * 100} : Cell{};
}
Cell samples(const BenchmarkResult& r) {
  return r.timing ? Cell{static_cast<std::int64_t>(r.timing->seconds.count)} : Cell{};
}
Cell launches_per_sample(const BenchmarkResult& r) {
  return r.timing ? Cell{std::int64_t{r.timing->launches_per_sample}} : Cell{};
}
Cell graph(const BenchmarkResult& r) {
  return r.timing ? Cell{r.timing->graph} : Cell{};
}
Cell bandwidth_tbps(const BenchmarkResult& r) {
  return optional_cell(r.bandwidth(), 1e-12);
}
Cell best_bandwidth_tbps(const BenchmarkResult& r) {
  return optional_cell(r.best_bandwidth(), 1e-12);
}
Cell tflops(const BenchmarkResult& r) {
  return optional_cell(r.flop_rate(), 1e-12);
}
Cell model_flops(const BenchmarkResult& r) {
  return Cell{r.cost.flops};
}
Cell pct_of_ceiling(const BenchmarkResult& r) {
  return optional_cell(r.ceiling_fraction, 100.0);
}
Cell reference_speedup(const BenchmarkResult& r) {
  return optional_cell(r.reference_speedup);
}
Cell pct_of_reference(const BenchmarkResult& r) {
  return optional_cell(r.reference_speedup, 100.0);
}
Cell moved_bytes(const BenchmarkResult& r) {
  return r.sectors ? Cell{r.sectors->moved_bytes()} : Cell{};
}
Cell sector_bandwidth_tbps(const BenchmarkResult& r) {
  return optional_cell(r.sector_bandwidth(), 1e-12);
}
Cell sector_efficiency(const BenchmarkResult& r) {
  return r.sectors ? Cell{r.sectors->efficiency()} : Cell{};
}
Cell detail(const BenchmarkResult& r) {
  return Cell{r.detail};
}
}  // namespace cells

// ---- suites and policy -----------------------------------------------------------------------

const SuiteInfo& find_suite(std::string_view name) {
  std::vector<std::string> names;
  for (const SuiteInfo& s : suites()) {
    if (s.name == to_lower(name)) return s;
    names.emplace_back(s.name);
  }
  throw InputError(fmt::format("--suite: unknown suite '{}' (known: {}, all)", name, fmt::join(names, ", ")));
}

std::vector<const SuiteInfo*> select_suites(std::string_view list) {
  std::vector<const SuiteInfo*> selected;
  const auto add = [&selected](const SuiteInfo* s) {
    if (std::find(selected.begin(), selected.end(), s) == selected.end()) selected.push_back(s);
  };
  for (const std::string& name : split(list, ',')) {
    if (to_lower(name) == "all") {
      for (const SuiteInfo& s : suites()) add(&s);
    } else if (name.empty()) {
      throw InputError("--suite: empty suite name in the list");
    } else {
      add(&find_suite(name));
    }
  }
  return selected;
}

TimingPolicy timing_policy(bool quick, std::optional<int> samples) {
  TimingPolicy policy;
  if (quick) {
    // --quick checks every kernel and gives rough figures fast (also under compute-sanitizer).
    policy.samples = 5;
    policy.min_warmup_launches = 2;
    policy.min_warmup_s = 0.001;
    policy.target_sample_s = 0.0002;
    policy.max_launches_per_sample = 100;
    policy.max_case_s = 0.5;
  }
  if (samples) {
    if (*samples < 1 || *samples > 100000) throw InputError("--samples: must be between 1 and 100000");
    policy.samples = *samples;
  }
  return policy;
}

int warmup_launches(const TimingPolicy& policy, double first_launch_s) {
  const double first = std::max(first_launch_s, 1e-7);
  const double wanted =
      std::max(std::ceil(policy.min_warmup_s / first), static_cast<double>(policy.min_warmup_launches));
  const double cap = std::max(1.0, std::floor(0.25 * policy.max_case_s / first));
  return static_cast<int>(std::clamp(wanted, 1.0, cap));
}

SamplePlan sample_plan(const TimingPolicy& policy, double launch_s, int rotation) {
  const double launch = std::max(launch_s, 1e-7);
  rotation = std::max(rotation, 1);
  SamplePlan plan;
  plan.batch = static_cast<int>(
      std::clamp(std::ceil(policy.target_sample_s / launch), 1.0, static_cast<double>(policy.max_launches_per_sample)));
  if (rotation > 1) plan.batch = std::max(plan.batch, rotation) / rotation * rotation;  // whole rotations
  const double fit = std::floor(0.75 * policy.max_case_s / (launch * plan.batch));
  plan.samples = static_cast<int>(std::clamp(fit, static_cast<double>(std::min(policy.min_samples, policy.samples)),
                                             static_cast<double>(policy.samples)));
  return plan;
}

// ---- hardware matching -------------------------------------------------------------------------

HardwareMatch match_hardware(std::string_view device_name, const HardwareRegistry& registry) {
  std::vector<std::string> wanted = words_of(device_name);
  std::erase(wanted, "nvidia");
  if (wanted.empty()) return {nullptr, fmt::format("device name '{}' names no model", device_name)};
  // The model word: the first one with a digit ("h200", "a100", "4090").
  std::string model;
  for (const std::string& w : wanted) {
    if (std::any_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
      model = w;
      break;
    }
  }
  std::vector<const GpuSpec*> candidates;
  for (const GpuSpec& spec : registry.all()) {
    const std::set<std::string> words = spec_words(spec);
    if (std::all_of(wanted.begin(), wanted.end(), [&words](const std::string& w) { return words.contains(w); })) {
      candidates.push_back(&spec);
    }
  }
  if (candidates.empty()) {
    return {nullptr, fmt::format("no hardware file matches '{}': add one with --hardware-dir or name it with --gpu",
                                 device_name)};
  }
  if (candidates.size() == 1) {
    return {candidates.front(), fmt::format("'{}' matches {}", device_name, candidates.front()->id)};
  }
  std::vector<std::string> ids;
  for (const GpuSpec* spec : candidates) {
    ids.push_back(spec->id);
    if (!model.empty() && std::find(spec->aliases.begin(), spec->aliases.end(), model) != spec->aliases.end()) {
      return {spec, fmt::format("'{}' matches {} (alias '{}')", device_name, spec->id, model)};
    }
  }
  return {nullptr, fmt::format("'{}' matches several hardware files ({}): name one with --gpu", device_name,
                               fmt::join(ids, ", "))};
}

// ---- reports ---------------------------------------------------------------------------------

namespace {

Cell optional_mhz(const std::optional<double>& mhz) {
  return mhz ? Cell{*mhz} : Cell{};
}

constexpr std::array<ColumnOf<BenchRun>, 21> device_columns{{
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
    {{"hardware_id", "hardware file", 0},
     [](const BenchRun& r) { return r.hardware_id ? Cell{*r.hardware_id} : Cell{}; }},
}};

std::int64_t count_of(const BenchRun& run, Disposition d) {
  return std::count_if(run.results.begin(), run.results.end(),
                       [d](const BenchmarkResult& r) { return r.disposition == d; });
}

constexpr std::array<ColumnOf<BenchRun>, 15> run_columns{{
    {{"started_utc", "started (UTC)", 0}, [](const BenchRun& r) { return Cell{r.started_utc}; }},
    {{"duration_s", "duration [s]", 1}, [](const BenchRun& r) { return Cell{r.duration_s}; }},
    {{"suites", "suites", 0}, [](const BenchRun& r) { return Cell{fmt::format("{}", fmt::join(r.suites, ","))}; }},
    {{"quick", "quick", 0}, [](const BenchRun& r) { return Cell{r.quick}; }},
    {{"check_only", "check only", 0}, [](const BenchRun& r) { return Cell{r.policy.check_only}; }},
    {{"seed", "seed", 0},
     [](const BenchRun& r) { return Cell{static_cast<std::int64_t>(r.seed & 0x7FFFFFFFFFFFFFFFULL)}; }},
    {{"samples", "samples", 0}, [](const BenchRun& r) { return Cell{std::int64_t{r.policy.samples}}; }},
    {{"min_warmup_launches", "warm-up launches", 0},
     [](const BenchRun& r) { return Cell{std::int64_t{r.policy.min_warmup_launches}}; }},
    {{"min_warmup_ms", "warm-up [ms]", 1}, [](const BenchRun& r) { return Cell{r.policy.min_warmup_s * 1e3}; }},
    {{"target_sample_ms", "sample [ms]", 2}, [](const BenchRun& r) { return Cell{r.policy.target_sample_s * 1e3}; }},
    {{"passed", "passed", 0}, [](const BenchRun& r) { return Cell{count_of(r, Disposition::passed)}; }},
    {{"failed", "failed", 0}, [](const BenchRun& r) { return Cell{count_of(r, Disposition::failed)}; }},
    {{"not_run", "not run", 0}, [](const BenchRun& r) { return Cell{count_of(r, Disposition::not_run)}; }},
    {{"not_supported", "not supported", 0},
     [](const BenchRun& r) { return Cell{count_of(r, Disposition::not_supported)}; }},
    {{"stopped_early", "stopped early", 0}, [](const BenchRun& r) { return Cell{r.context_lost}; }},
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

Table group_table(const GroupLayout& layout, std::span<const BenchmarkResult> results, std::string_view suite) {
  Table table{std::string(layout.name), std::string(layout.title), {}, {}};
  for (const auto& c : layout.columns) table.columns.push_back(c.column);
  for (const BenchmarkResult& r : results) {
    if (r.suite != suite || r.group != layout.name) continue;
    std::vector<Cell> cells;
    cells.reserve(layout.columns.size());
    for (const auto& c : layout.columns) cells.push_back(c.value(r));
    table.rows.push_back(std::move(cells));
  }
  return table;
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
  if (run.policy.check_only) report.notes.push_back("--check-only: every case checked, nothing timed");
  if (run.quick) {
    report.notes.push_back("--quick: small buffers and few samples; figures are rough and targets not meaningful");
  }
  for (const std::string& note : run.notes) report.notes.push_back(note);
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

bool selected_by_filters(std::string_view id, const std::vector<std::string>& filters) {
  if (filters.empty()) return true;
  return std::any_of(filters.begin(), filters.end(),
                     [id](const std::string& f) { return id.find(f) != std::string_view::npos; });
}

std::vector<std::string> failed_ids(const BenchRun& run) {
  std::vector<std::string> ids;
  for (const BenchmarkResult& r : run.results) {
    if (r.disposition == Disposition::failed) ids.push_back(r.id);
  }
  return ids;
}

}  // namespace roofline::bench
