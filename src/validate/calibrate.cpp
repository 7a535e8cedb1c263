// Learning a calibration from measured runs: each timed benchmark with a basis becomes a point of
// its implementation's table and, when the fastest of its problem, of the best table.
#include "roofline/validate/calibrate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "roofline/bench/bench.hpp"
#include "roofline/core/error.hpp"
#include "roofline/validate/collective_validation.hpp"
#include "roofline/validate/validate.hpp"

namespace roofline {
namespace {

// The peak probes of the compute selftest, and the class each measures.
std::optional<PeakClass> probe_class(std::string_view kernel) {
  if (kernel.ends_with("fp32")) return PeakClass::fp32;
  if (kernel.ends_with("bf16")) return PeakClass::bf16;
  if (kernel.ends_with("fp16")) return PeakClass::fp16;
  if (kernel.ends_with("fp64")) return PeakClass::fp64;
  return std::nullopt;
}

void update_max(std::optional<double>& slot, double value) {
  if (!slot || value > *slot) slot = value;
}

// What a cache-level ceiling moved per second: the bytes the run counted for it (its passes over
// the footprint depend on the run's --quick, which its parameters do not restate); none where the
// run recorded no byte count.
std::optional<double> hierarchy_bandwidth(const Measurement& m) {
  if (!m.recorded_bytes) return std::nullopt;
  return *m.recorded_bytes / m.timing->median_s;
}

void record_ceiling(MeasuredCeilings& ceilings, const Measurement& m) {
  if (m.id == "hierarchy.l2.read") {
    if (auto bw = hierarchy_bandwidth(m)) update_max(ceilings.l2_bytes_per_s, *bw);
  } else if (m.id == "hierarchy.smem.read") {
    if (auto bw = hierarchy_bandwidth(m)) update_max(ceilings.smem_bytes_per_s, *bw);
  } else if (m.group == "peak" && m.recorded_flops && *m.recorded_flops > 0) {
    // A probe is a loop of FMAs: the op model has no formula for it, so its own count is used.
    if (auto peak = probe_class(m.kernel)) {
      update_max(ceilings.peaks[static_cast<std::size_t>(*peak)], *m.recorded_flops / m.timing->median_s);
    }
  }
}

void leave_one_out(CalibrationTable& table) {
  for (std::size_t i = 0; i < table.points.size(); ++i) {
    CalibrationPoint& p = table.points[i];
    p.loo_error.reset();
    if (auto e = interpolate(table, p.ideal_s, p.series, i)) {
      // predicted time / measured time - 1 = (ideal / e) / (ideal / efficiency) - 1
      p.loo_error = p.efficiency / e->efficiency - 1;
    }
  }
}

// The median and the mean |leave-one-out error| of a table whose points carry theirs (nullopt: none does).
struct LooErrors {
  double median = 0;
  double mean = 0;
};
std::optional<LooErrors> loo_errors(const CalibrationTable& table) {
  std::vector<double> errors;
  for (const CalibrationPoint& p : table.points) {
    if (p.loo_error) errors.push_back(std::abs(*p.loo_error));
  }
  if (errors.empty()) return std::nullopt;
  LooErrors out;
  for (const double e : errors) out.mean += e;
  out.mean /= static_cast<double>(errors.size());
  const auto mid = errors.begin() + static_cast<std::ptrdiff_t>(errors.size() / 2);
  std::nth_element(errors.begin(), mid, errors.end());
  out.median = *mid;
  return out;
}

// A lookup rule tried on a table: a copy with the rule set (its prepared curves hold: a rule moves no
// point) and the leave-one-out errors without and with it (nullopt where nothing is predicted).
struct RuleTrial {
  CalibrationTable table;
  std::optional<LooErrors> without;
  std::optional<LooErrors> with;
};
template <typename SetRule>
RuleTrial try_rule(const CalibrationTable& table, SetRule set_rule) {
  RuleTrial trial{table, loo_errors(table), std::nullopt};
  set_rule(trial.table);
  leave_one_out(trial.table);
  trial.with = loo_errors(trial.table);
  return trial;
}

// What a table reads where a query's series measured no problem of its size: its own series' end
// (the default), or that end carried on by the trend of the nearest series on each side that did
// (CalibrationTable::neighbours_outside_range). Neither is right everywhere: the FP8 GEMM's k series
// measured at decode sizes alone held a prefill problem at 0.3 of the roofline where the k series
// around it ran at 0.6, but decode attention's held-out ends are predicted better by their own
// series than by their neighbours' trend. So each table takes the trend only where leave-one-out
// says it predicts the table's own points better: neither the median nor the mean |error| higher,
// and one of them lower (where the rule never applies, nothing moves).
// Returns a note where it does; the table's points carry the leave-one-out errors of its choice.
std::optional<std::string> choose_outside_range(CalibrationTable& table) {
  RuleTrial trial = try_rule(table, [](CalibrationTable& t) { t.neighbours_outside_range = true; });
  const std::optional<LooErrors>& own = trial.without;
  const std::optional<LooErrors>& read = trial.with;
  if (!own || !read || read->median > own->median || read->mean > own->mean ||
      (read->median == own->median && read->mean == own->mean)) {
    return std::nullopt;
  }
  std::string note = fmt::format(
      "{}: past a {} series' measured sizes, its end carried on by the trend of the nearest series on each side "
      "(leave-one-out median |error| {:.1f}% against {:.1f}% holding the series' end, mean {:.1f}% against {:.1f}%)",
      table.name, table.series_name, read->median * 100, own->median * 100, read->mean * 100, own->mean * 100);
  table = std::move(trial.table);
  return note;
}

// An optional second axis (Basis::series_optional: a GEMM's k) is kept only where it predicts the
// table's own points better than the size alone, judged by leave-one-out: a table measured at few
// values of the axis (the bf16 GEMM ladder: squares and a few skinny shapes) interpolates across
// sparse series and clamps at their ends, and predicts worse with it than without. Better means
// neither the median nor the mean |error| higher (ties keep the axis): by the median alone a table
// whose typical point the axis predicts a little better kept it while its ends, clamped within a
// sparse series, got far worse, and a problem smaller than its series' smallest then held that
// size's efficiency (the H200's FP8 GEMM tables with the skinny GEMM run of 2026-12-05: median 3.72%
// with k against 3.81%, mean 7.24% against 6.33%; docs/results/2026-12-05-validations-calibration-0840.md).
// The table first takes its rule outside a series' range (choose_outside_range), and the axis is
// judged with it. Returns a note where the rule or the axis changed; the table's points get the
// leave-one-out errors of what was kept.
std::vector<std::string> choose_axes(CalibrationTable& table, bool axis_optional) {
  std::vector<std::string> notes;
  leave_one_out(table);
  if (table.series_name.empty()) return notes;
  if (std::optional<std::string> outside = choose_outside_range(table)) notes.push_back(std::move(*outside));
  if (!axis_optional) return notes;
  CalibrationTable flat = table;
  flat.series_name.clear();
  flat.neighbours_outside_range = false;
  for (CalibrationPoint& p : flat.points) p.series.reset();
  sort_points(flat);
  leave_one_out(flat);
  const std::optional<LooErrors> with = loo_errors(table);
  const std::optional<LooErrors> without = loo_errors(flat);
  if (!without || (with && with->median <= without->median && with->mean <= without->mean)) return notes;
  std::string note = fmt::format(
      "{}: learnt by size alone, without its {} axis (leave-one-out median |error| {:.1f}% against {} with it, "
      "mean {:.1f}% against {})",
      table.name, table.series_name, without->median * 100,
      with ? fmt::format("{:.1f}%", with->median * 100) : std::string("none"), without->mean * 100,
      with ? fmt::format("{:.1f}%", with->mean * 100) : std::string("none"));
  table = std::move(flat);
  notes.clear();  // without the axis no series is read outside its range
  notes.push_back(std::move(note));
  return notes;
}

// Whether a table holds every query to its fastest measured time (CalibrationTable::fastest_time_floor).
// A launch has a floor that holding an efficiency onto a smaller problem forgets, but the fastest
// problem of a table measured at large sizes alone (flash attention from 6 us, the SIMT GEMV at
// 8192 x 8192 and up) is no launch floor: a smaller problem runs faster. So each table takes the
// floor unless leave-one-out says it predicts the table's own points worse: the median or the mean
// |error| higher. Where it changes no point it is kept, for the problems no point stands for; a table
// of one point, which leave-one-out cannot judge, goes without.
// Returns a note where the floor is declined; the points carry the leave-one-out errors of the choice.
std::optional<std::string> choose_time_floor(CalibrationTable& table) {
  RuleTrial trial = try_rule(table, [](CalibrationTable& t) { t.fastest_time_floor = true; });
  const std::optional<LooErrors>& without = trial.without;
  const std::optional<LooErrors>& with = trial.with;
  // A table leave-one-out cannot judge (one point) has no floor: its one problem may be far above a
  // launch's (run 3 of 2026-11-30 measured each stream kernel at 1 GiB arrays alone, 450-800 us).
  if (!without || !with) return std::nullopt;
  if (with->median <= without->median && with->mean <= without->mean) {
    table = std::move(trial.table);
    return std::nullopt;
  }
  return fmt::format(
      "{}: no floor at its fastest measured time (leave-one-out median |error| {:.1f}% against {:.1f}% with it, "
      "mean {:.1f}% against {:.1f}%)",
      table.name, without->median * 100, with->median * 100, without->mean * 100, with->mean * 100);
}

// For each benchmark id timed in more than one run, the run whose measurement calibrate learns:
// the newest by start time (ISO 8601 strings compare in time order), the later file where the
// times tie or are not recorded. A kernel measured again after a change is the kernel as it is
// now; averaging the two would describe neither.
std::map<std::string, std::size_t> newest_timed_runs(std::span<const MeasuredRun> runs) {
  std::map<std::string, std::size_t> newest;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (const Measurement& m : runs[r].results) {
      if (!m.timed()) continue;
      const auto [it, first] = newest.try_emplace(m.id, r);
      if (first) continue;
      const std::string& mine = runs[r].started_utc;
      const std::string& theirs = runs[it->second].started_utc;
      if (mine.empty() || theirs.empty() || mine >= theirs) it->second = r;
    }
  }
  return newest;
}

}  // namespace

// ---- building --------------------------------------------------------------------------------

MeasuredCeilings measured_ceilings(std::span<const MeasuredRun> runs) {
  MeasuredCeilings ceilings;
  for (const MeasuredRun& run : runs) {
    for (const Measurement& m : run.results) {
      if (!m.timed()) continue;
      const BasisOrReason basis_or = benchmark_basis(m);
      if (const NoBasis* none = std::get_if<NoBasis>(&basis_or)) {
        if (none->ceiling) record_ceiling(ceilings, m);
        continue;
      }
      const Basis& basis = std::get<Basis>(basis_or);
      if (basis.pattern != "stream") continue;
      const double bandwidth = basis.cost.bytes() / m.timing->median_s;
      if (!ceilings.stream_bytes_per_s || bandwidth > *ceilings.stream_bytes_per_s) {
        ceilings.stream_bytes_per_s = bandwidth;
        ceilings.stream_benchmark = m.id;
      }
    }
  }
  return ceilings;
}

CalibrationBuild build_calibration(std::span<const MeasuredRun> runs, const GpuSpec& gpu) {
  CalibrationBuild out;
  Calibration& cal = out.calibration;
  cal.gpu_id = gpu.id;
  cal.gpu_name = gpu.name;
  cal.hardware_origin = gpu.origin;
  cal.roofs = Roofs::of(gpu);
  cal.ceilings = measured_ceilings(runs);

  struct Best {
    CalibrationPoint point;
    std::string table;
    std::string pattern;
    std::string series_name;
  };
  std::map<std::pair<std::string, std::string>, Best> best;  // (best table, problem) -> fastest
  std::set<std::string> optional_axes;                       // tables whose series axis is optional
  const std::map<std::string, std::size_t> newest = newest_timed_runs(runs);
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const MeasuredRun& run = runs[r];
    CalibrationSource source{run.file, run.format, run.device_name, run.started_utc, run.quick, 0, std::nullopt};
    for (const Measurement& m : run.results) {
      if (!m.timed()) {
        out.skipped.push_back({m.id, m.status == "passed" ? "not timed" : fmt::format("status {}", m.status)});
        continue;
      }
      if (const std::size_t latest = newest.at(m.id); latest != r) {
        out.skipped.push_back({m.id, fmt::format("measured again in {} (started {}): the newest measurement is learnt",
                                                 runs[latest].file, runs[latest].started_utc)});
        continue;
      }
      if (const auto collective = collective_sample(m)) {
        if (collective->ranks >= 2) {
          ++source.points;
        } else {
          out.skipped.push_back({m.id, "a collective over one rank"});
        }
        continue;  // learnt into the collective tables below
      }
      if (!m.suite.empty()) {
        if (const std::string_view why = bench::find_suite(m.suite).not_learnt; !why.empty()) {
          out.skipped.push_back({m.id, std::string(why)});
          continue;
        }
      }
      const BasisOrReason basis_or = benchmark_basis(m);
      if (const NoBasis* none = std::get_if<NoBasis>(&basis_or)) {
        out.skipped.push_back({m.id, none->ceiling ? none->reason + "; recorded among the ceilings" : none->reason});
        continue;
      }
      const Basis& basis = std::get<Basis>(basis_or);
      const IdealTime ideal = ideal_time(basis, cal.roofs);
      if (!(ideal.time_s > 0)) {
        out.skipped.push_back({m.id, "the model counts no work for it"});
        continue;
      }
      CalibrationPoint p;
      p.ideal_s = ideal.time_s;
      p.series = basis.series;
      p.efficiency = ideal.time_s / m.timing->median_s;
      p.benchmark = m.id;
      p.measured_s = m.timing->median_s;
      p.spread = m.timing->spread();
      p.problem = CalibrationPoint::Problem{basis.cost.flops, basis.roof_bytes, ideal.peak};
      CalibrationTable& table = cal.tables[basis.table];
      table.name = basis.table;
      table.pattern = basis.pattern;
      table.series_name = basis.series_name;
      if (basis.series_optional) {
        optional_axes.insert(basis.table);
        optional_axes.insert(basis.best_table);
      }
      table.points.push_back(p);
      ++source.points;
      if (!basis.best_table.empty() && basis.best_table != basis.table) {
        const auto key = std::make_pair(basis.best_table, basis.problem.empty() ? m.id : basis.problem);
        const auto it = best.find(key);
        if (it == best.end() || p.efficiency > it->second.point.efficiency) {
          best[key] = {p, basis.best_table, basis.pattern, basis.series_name};
        }
      }
    }
    cal.sources.push_back(std::move(source));
  }
  for (auto& [key, b] : best) {
    CalibrationTable& table = cal.tables[b.table];
    table.name = b.table;
    table.pattern = b.pattern;
    table.best = true;
    table.series_name = b.series_name;
    table.points.push_back(b.point);
  }
  cal.collectives = learn_collective_tables(runs);
  if (cal.tables.empty() && cal.collectives.empty()) {
    throw InputError("calibrate: no benchmark of the measured file(s) was timed and has a prediction");
  }
  for (auto& [name, table] : cal.tables) {
    sort_points(table);
    for (std::string& note : choose_axes(table, optional_axes.contains(name))) out.notes.push_back(std::move(note));
    if (std::optional<std::string> note = choose_time_floor(table)) out.notes.push_back(std::move(*note));
  }
  return out;
}

// ---- provenance ------------------------------------------------------------------------------

namespace {

using nlohmann::json;

// The first row of a bench report's results table `name`, or null.
const json* first_row(const json& report, const char* name) {
  const auto results = report.find("results");
  if (results == report.end() || !results->is_object()) return nullptr;
  const auto rows = results->find(name);
  if (rows == results->end() || !rows->is_array() || rows->empty() || !rows->front().is_object()) return nullptr;
  return &rows->front();
}

std::optional<std::int64_t> integer_of(const json& row, const char* key) {
  const auto it = row.find(key);
  if (it == row.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

std::optional<double> positive_of(const json& row, const char* key) {
  const auto it = row.find(key);
  if (it == row.end() || !it->is_number() || !(it->get<double>() > 0)) return std::nullopt;
  return it->get<double>();
}

std::string text_of(const json& row, const char* key) {
  const auto it = row.find(key);
  if (it == row.end() || !it->is_string() || it->get<std::string>().empty()) return std::string(not_recorded);
  return it->get<std::string>();
}

// CUDA encodes its driver and runtime versions as 1000 x major + 10 x minor.
std::string cuda_version_text(std::optional<std::int64_t> v) {
  if (!v || *v <= 0) return std::string(not_recorded);
  return fmt::format("{}.{}", *v / 1000, *v % 1000 / 10);
}

// cuBLAS as 10000 x major + 100 x minor + patch (CUBLAS_VERSION).
std::string cublas_version_text(std::optional<std::int64_t> v) {
  if (!v || *v <= 0) return std::string(not_recorded);
  return fmt::format("{}.{}.{}", *v / 10000, *v % 10000 / 100, *v % 100);
}

}  // namespace

std::optional<RunProvenance> run_provenance(const nlohmann::json& bench_report) {
  const json* device = first_row(bench_report, "device");
  if (device == nullptr) return std::nullopt;
  RunProvenance p;
  p.gpu_name = text_of(*device, "name");
  p.compute_capability = text_of(*device, "compute_capability");
  p.driver_version = cuda_version_text(integer_of(*device, "driver_version"));
  p.cuda_runtime_version = cuda_version_text(integer_of(*device, "runtime_version"));
  p.cublas_version = cublas_version_text(integer_of(*device, "cublas_version"));
  p.sm_clock_start_mhz = positive_of(*device, "sm_clock_start_mhz");
  p.sm_clock_end_mhz = positive_of(*device, "sm_clock_end_mhz");
  p.memory_clock_start_mhz = positive_of(*device, "memory_clock_start_mhz");
  p.memory_clock_end_mhz = positive_of(*device, "memory_clock_end_mhz");
  const json* run = first_row(bench_report, "run");
  p.tool_commit = run != nullptr ? text_of(*run, "tool_commit") : std::string(not_recorded);
  if (const auto inputs = bench_report.find("inputs"); inputs != bench_report.end() && inputs->is_object()) {
    p.command_line = inputs->value("command_line", "");
  }
  return p;
}

std::optional<ErrorBand> layer_error_band(std::span<const LayerCheck> layers, double within_pct,
                                          const std::string& run) {
  int checked = 0;
  int within = 0;
  double worst = 0;
  for (const LayerCheck& layer : layers) {
    if (!layer.timed()) continue;
    const std::optional<double> error = layer.calibrated_error();
    if (!error) continue;
    ++checked;
    if (std::abs(*error) * 100 <= within_pct) ++within;
    if (std::abs(*error) > std::abs(worst)) worst = *error;
  }
  if (checked == 0) return std::nullopt;
  return ErrorBand{fmt::format("layers within {:g}% out of sample, {}/{} (worst {:+.1f}%)", within_pct, within, checked,
                               worst * 100),
                   within_pct, within, checked, run};
}

}  // namespace roofline
