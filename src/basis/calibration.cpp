#include "roofline/basis/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "roofline/core/embedded_file.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"
#include "roofline/core/json_schema.hpp"
#include "roofline/core/version.hpp"

namespace roofline {

// docs/schema/calibration.v1.schema.json (src/CMakeLists.txt embeds it).
std::span<const EmbeddedFile> bundled_schema_files();

struct PreparedTable {
  struct Curve {
    std::vector<double> x;  // ascending, distinct
    std::vector<double> y;
  };
  std::size_t point_count = 0;  // of the table it was made from
  // The series interpolation reads, ascending (one value, 0, in a table with one axis), and the
  // curve of each.
  std::vector<double> values;
  std::vector<Curve> curves;
  std::vector<double> left_out;  // series measured at one size only, where others hold several
  // The fastest measured point (the first in the points' order of those that tie): the floor.
  double fastest_s = 0;
  std::string fastest_benchmark;
  // Each measured problem's points as (series, efficiency): measured_problem's answers.
  std::map<std::string, std::vector<std::pair<double, double>>, std::less<>> problems;
};

namespace {

using nlohmann::json;

constexpr double same_tolerance = 1e-9;

bool same(double a, double b) {
  return std::abs(a - b) <= same_tolerance * std::max(std::abs(a), std::abs(b));
}

std::string us(double seconds) {
  return fmt::format("{:.3g} us", seconds * 1e6);
}

std::string number_text(double value) {
  return fmt::format("{:g}", value);
}

// Linear in log(at) between (x0, y0) and (x1, y1); x0 < x1, all positive.
double log_linear(double at, double x0, double y0, double x1, double y1) {
  return y0 + (y1 - y0) * (std::log(at) - std::log(x0)) / (std::log(x1) - std::log(x0));
}

using Curve = PreparedTable::Curve;

// A query this close to the end of a measured range is not reported as clamped: the sizes of
// one problem at neighbouring batches differ by far less than what matters.
constexpr double clamp_slack = 0.01;

// Evaluates a curve (x ascending, distinct) at `at`, clamped at its ends; `detail` (where given)
// says where `at` lay.
double evaluate(const Curve& c, double at, bool& clamped, std::string* detail, std::string_view what, bool time_axis) {
  const auto text = [time_axis](double v) { return time_axis ? us(v) : number_text(v); };
  const auto at_end = [&](double end) {
    if (same(at, end)) {
      if (detail) *detail += fmt::format("{} {} (measured)", what, text(at));
    } else if (std::abs(at / end - 1) <= clamp_slack) {
      if (detail) *detail += fmt::format("{} {} at the measured {}", what, text(at), text(end));
    } else {
      clamped = true;
      if (detail) *detail += fmt::format("{} {} clamped to {}", what, text(at), text(end));
    }
  };
  if (c.x.size() == 1 || at <= c.x.front()) {
    at_end(c.x.front());
    return c.y.front();
  }
  if (at >= c.x.back()) {
    at_end(c.x.back());
    return c.y.back();
  }
  const std::size_t i = static_cast<std::size_t>(std::upper_bound(c.x.begin(), c.x.end(), at) - c.x.begin());
  if (same(at, c.x[i - 1])) {
    if (detail) *detail += fmt::format("{} {} (measured)", what, text(at));
    return c.y[i - 1];
  }
  if (detail) *detail += fmt::format("{} {} between {} and {}", what, text(at), text(c.x[i - 1]), text(c.x[i]));
  return log_linear(at, c.x[i - 1], c.y[i - 1], c.x[i], c.y[i]);
}

// Adds (x, y) to a curve under construction; equal x are merged by averaging.
struct CurveBuilder {
  std::vector<std::pair<double, double>> points;
  [[nodiscard]] Curve build() {
    std::sort(points.begin(), points.end());
    Curve c;
    std::size_t i = 0;
    while (i < points.size()) {
      double sum = 0;
      std::size_t n = 0;
      const double x = points[i].first;
      while (i < points.size() && same(points[i].first, x)) {
        sum += points[i].second;
        ++n;
        ++i;
      }
      c.x.push_back(x);
      c.y.push_back(sum / static_cast<double>(n));
    }
    return c;
  }
};

// Whether a curve measured sizes on both sides of `at`, or one within clamp_slack of it.
bool covers(const Curve& c, double at) {
  return at >= c.x.front() * (1 - clamp_slack) && at <= c.x.back() * (1 + clamp_slack);
}

bool has_series(const CalibrationTable& table) {
  return !table.series_name.empty();
}

// ---- JSON ------------------------------------------------------------------------------------

json peaks_to_json(const std::array<std::optional<double>, peak_class_names.size()>& peaks) {
  json out = json::object();
  for (std::size_t i = 0; i < peaks.size(); ++i) {
    if (peaks[i]) out[std::string(peak_class_names[i])] = *peaks[i] / 1e12;
  }
  return out;
}

std::array<std::optional<double>, peak_class_names.size()> peaks_from_json(const json& object) {
  std::array<std::optional<double>, peak_class_names.size()> peaks{};
  for (const auto& [key, value] : object.items()) {
    // the schema admits only peak class names here
    peaks[static_cast<std::size_t>(*peak_class_from_name(key))] = value.get<double>() * 1e12;
  }
  return peaks;
}

json provenance_to_json(const RunProvenance& p) {
  json out = {{"gpu_name", p.gpu_name},
              {"compute_capability", p.compute_capability},
              {"driver_version", p.driver_version},
              {"cuda_runtime_version", p.cuda_runtime_version},
              {"cublas_version", p.cublas_version},
              {"tool_commit", p.tool_commit},
              {"command_line", p.command_line}};
  const auto clock = [&out](const char* key, const std::optional<double>& mhz) {
    if (mhz) out[key] = *mhz;
  };
  clock("sm_clock_start_mhz", p.sm_clock_start_mhz);
  clock("sm_clock_end_mhz", p.sm_clock_end_mhz);
  clock("memory_clock_start_mhz", p.memory_clock_start_mhz);
  clock("memory_clock_end_mhz", p.memory_clock_end_mhz);
  return out;
}

RunProvenance provenance_from_json(const json& object) {
  RunProvenance p;
  p.gpu_name = object["gpu_name"].get<std::string>();
  p.compute_capability = object["compute_capability"].get<std::string>();
  p.driver_version = object["driver_version"].get<std::string>();
  p.cuda_runtime_version = object["cuda_runtime_version"].get<std::string>();
  p.cublas_version = object["cublas_version"].get<std::string>();
  p.tool_commit = object["tool_commit"].get<std::string>();
  p.command_line = object.value("command_line", "");
  const auto clock = [&object](const char* key) -> std::optional<double> {
    if (!object.contains(key)) return std::nullopt;
    return object[key].get<double>();
  };
  p.sm_clock_start_mhz = clock("sm_clock_start_mhz");
  p.sm_clock_end_mhz = clock("sm_clock_end_mhz");
  p.memory_clock_start_mhz = clock("memory_clock_start_mhz");
  p.memory_clock_end_mhz = clock("memory_clock_end_mhz");
  return p;
}

std::optional<double> optional_tbps(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  return it->get<double>() * 1e12;
}

}  // namespace

namespace {

// The benchmark id "<problem>.<impl>" names its problem; nullopt where it has no dot.
std::optional<std::string_view> problem_of(std::string_view benchmark) {
  const std::size_t dot = benchmark.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == benchmark.size()) return std::nullopt;
  return benchmark.substr(0, dot);
}

// The series and curves of a table's points, leaving out point `skip`.
PreparedTable prepare(const CalibrationTable& table, std::optional<std::size_t> skip) {
  PreparedTable out;
  out.point_count = table.points.size();
  const bool two_axes = has_series(table);
  // Distinct series values of the points still in play, and the distinct sizes each holds.
  std::vector<double> values;
  std::vector<std::vector<double>> sizes;
  for (std::size_t i = 0; i < table.points.size(); ++i) {
    if (skip && *skip == i) continue;
    const double s = two_axes ? table.points[i].series.value_or(0) : 0;
    const double x = table.points[i].ideal_s;
    const auto at = std::find_if(values.begin(), values.end(), [s](double v) { return same(v, s); });
    if (at == values.end()) {
      values.push_back(s);
      sizes.push_back({x});
      continue;
    }
    std::vector<double>& xs = sizes[static_cast<std::size_t>(at - values.begin())];
    if (std::none_of(xs.begin(), xs.end(), [x](double v) { return same(v, x); })) xs.push_back(x);
  }
  // A series measured at one size says nothing of how the efficiency moves with size: held constant
  // over every size, it would give its one problem's efficiency to every other (the W8A8 GEMV's ragged
  // 9000 x 1104 correctness case at batch 5 became the whole of batch 5). Where the table has series of
  // several sizes, the interpolation between series reads those alone; a problem measured in a
  // one-size series is still predicted by its own measurement (measured_problem).
  if (std::any_of(sizes.begin(), sizes.end(), [](const std::vector<double>& xs) { return xs.size() > 1; })) {
    std::vector<double> kept;
    for (std::size_t i = 0; i < values.size(); ++i) (sizes[i].size() > 1 ? kept : out.left_out).push_back(values[i]);
    values = std::move(kept);
  }
  std::sort(values.begin(), values.end());
  for (const double s : values) {
    CurveBuilder builder;
    for (std::size_t i = 0; i < table.points.size(); ++i) {
      if (skip && *skip == i) continue;
      const CalibrationPoint& p = table.points[i];
      if (!two_axes || same(p.series.value_or(0), s)) builder.points.emplace_back(p.ideal_s, p.efficiency);
    }
    out.curves.push_back(builder.build());
  }
  out.values = std::move(values);
  for (std::size_t i = 0; i < table.points.size(); ++i) {
    if (skip && *skip == i) continue;
    const CalibrationPoint& p = table.points[i];
    if (!(p.efficiency > 0)) continue;
    const double time = p.ideal_s / p.efficiency;
    if (out.fastest_s == 0 || time < out.fastest_s) {
      out.fastest_s = time;
      out.fastest_benchmark = p.benchmark;
    }
  }
  return out;
}

// The table's own prepared form where it is current; `fresh` holds one made here otherwise.
const PreparedTable& prepared_of(const CalibrationTable& table, std::optional<std::size_t> skip,
                                 std::optional<PreparedTable>& fresh) {
  if (!skip && table.prepared && table.prepared->point_count == table.points.size()) return *table.prepared;
  fresh = prepare(table, skip);
  return *fresh;
}

}  // namespace

void sort_points(CalibrationTable& table) {
  std::sort(table.points.begin(), table.points.end(), [](const CalibrationPoint& a, const CalibrationPoint& b) {
    const double sa = a.series.value_or(0);
    const double sb = b.series.value_or(0);
    if (sa != sb) return sa < sb;
    if (a.ideal_s != b.ideal_s) return a.ideal_s < b.ideal_s;
    return a.benchmark < b.benchmark;
  });
  auto prepared = std::make_shared<PreparedTable>(prepare(table, std::nullopt));
  for (const CalibrationPoint& p : table.points) {
    if (const auto problem = problem_of(p.benchmark)) {
      const auto at = prepared->problems.try_emplace(std::string(*problem)).first;
      at->second.emplace_back(p.series.value_or(0), p.efficiency);
    }
  }
  table.prepared = std::move(prepared);
}

// ---- interpolation ---------------------------------------------------------------------------

namespace {

// The efficiency the curves give at (ideal_s, series), before the floor of interpolate.
std::optional<Interpolated> interpolate_curves(const CalibrationTable& table, const PreparedTable& prepared,
                                               double ideal_s, std::optional<double> series, Explain explain) {
  const std::vector<double>& values = prepared.values;
  if (values.empty()) return std::nullopt;
  const bool explained = explain == Explain::yes;
  const auto curve_of = [&](double s) -> const Curve& {
    const auto at = std::find_if(values.begin(), values.end(), [s](double v) { return same(v, s); });
    return prepared.curves[static_cast<std::size_t>(at - values.begin())];
  };

  Interpolated out;
  if (!has_series(table)) {
    out.efficiency =
        evaluate(prepared.curves.front(), ideal_s, out.clamped, explained ? &out.detail : nullptr, "x", true);
    return out;
  }
  if (!series) return std::nullopt;
  const double s = *series;
  std::string inner;
  const auto at_series = [&](double value) {
    std::string d;
    const double e =
        evaluate(curve_of(value), ideal_s, out.clamped, explained && inner.empty() ? &d : nullptr, "x", true);
    if (explained && inner.empty()) inner = std::move(d);
    return e;
  };
  // Says so where a series left out lies at the query's or between the two series read.
  const auto with_left_out = [&](double low, double high) {
    if (!explained) return;
    std::string skipped;
    for (double v : prepared.left_out) {
      if (same(v, s) || (v > std::min(low, s) && v < std::max(high, s))) {
        skipped += (skipped.empty() ? "" : ", ") + number_text(v);
      }
    }
    if (!skipped.empty()) {
      out.detail += fmt::format(" ({} {} measured at one size only: left out)", table.series_name, skipped);
    }
  };
  // A series that measured no problem of this size says little of one: the FP8 GEMM's k 1536,
  // measured at decode sizes alone (m <= 256, x up to 1.4 us), would hold its 0.32 efficiency to a
  // 9.8 us prefill problem of that k, where k 1024 and 2048 run about twice as efficiently as at
  // 1.4 us. Where the table chose it, the series' end value is carried on by the trend of the
  // nearest series on each side that measured both its end and the query's size: times their
  // efficiency here over theirs at the end (continuous at the end, which an outright switch to the
  // neighbours is not: 5% past the end of the grouped FP8 GEMM's k 4096 it moved an expert GEMM 39%).
  const auto own = table.neighbours_outside_range
                       ? std::find_if(values.begin(), values.end(), [s](double v) { return same(v, s); })
                       : values.end();
  const Curve* mine = own == values.end() ? nullptr : &prepared.curves[static_cast<std::size_t>(own - values.begin())];
  if (mine && !covers(*mine, ideal_s)) {
    const bool past_top = ideal_s > mine->x.back();
    const double end = past_top ? mine->x.back() : mine->x.front();
    // The nearest series on each side (by index: `values` is ascending) that measured both sizes.
    std::optional<std::size_t> below;
    std::optional<std::size_t> above;
    for (std::size_t i = 0; i < values.size(); ++i) {
      const Curve& c = prepared.curves[i];
      if (same(values[i], s) || !covers(c, ideal_s) || !covers(c, end)) continue;
      if (values[i] < s) below = i;
      if (values[i] > s && !above) above = i;
    }
    if (below && above) {
      bool unused = false;
      const Curve& low = prepared.curves[*below];
      const Curve& high = prepared.curves[*above];
      const double below_here = evaluate(low, ideal_s, unused, nullptr, "x", true);
      const double above_here = evaluate(high, ideal_s, unused, nullptr, "x", true);
      const double below_end = evaluate(low, end, unused, nullptr, "x", true);
      const double above_end = evaluate(high, end, unused, nullptr, "x", true);
      const double held = past_top ? mine->y.back() : mine->y.front();
      const double s0 = values[*below];
      const double s1 = values[*above];
      const double trend = log_linear(s, s0, below_here, s1, above_here) / log_linear(s, s0, below_end, s1, above_end);
      // Never beyond what was measured around it: an extrapolation that leaves the range of its own
      // end and both neighbours at this size has only the ratio to go on.
      out.efficiency =
          std::clamp(held * trend, std::min({held, below_here, above_here}), std::max({held, below_here, above_here}));
      out.clamped = true;
      if (explained) {
        out.detail = fmt::format("x {} beyond {} {}'s measured {}: its value there times the trend of {} {} and {}",
                                 us(ideal_s), table.series_name, number_text(s), us(end), table.series_name,
                                 number_text(s0), number_text(s1));
      }
      return out;
    }
  }
  if (s <= values.front() || s >= values.back() || values.size() == 1) {
    const double end = s <= values.front() ? values.front() : values.back();
    out.efficiency = at_series(end);
    if (!same(s, end)) {
      out.clamped = true;
      if (explained) {
        out.detail = fmt::format("{}; {} {} clamped to {}", inner, table.series_name, number_text(s), number_text(end));
      }
    } else if (explained) {
      out.detail = fmt::format("{}; {} {} (measured)", inner, table.series_name, number_text(s));
    }
    with_left_out(end, end);
    return out;
  }
  const std::size_t i = static_cast<std::size_t>(std::upper_bound(values.begin(), values.end(), s) - values.begin());
  if (same(s, values[i - 1])) {
    out.efficiency = at_series(values[i - 1]);
    if (explained) out.detail = fmt::format("{}; {} {} (measured)", inner, table.series_name, number_text(s));
    return out;
  }
  const double e0 = at_series(values[i - 1]);
  const double e1 = at_series(values[i]);
  out.efficiency = log_linear(s, values[i - 1], e0, values[i], e1);
  if (explained) {
    out.detail = fmt::format("{}; {} {} between {} and {}", inner, table.series_name, number_text(s),
                             number_text(values[i - 1]), number_text(values[i]));
  }
  with_left_out(values[i - 1], values[i]);
  return out;
}

}  // namespace

std::optional<Interpolated> interpolate(const CalibrationTable& table, double ideal_s, std::optional<double> series,
                                        std::optional<std::size_t> skip, Explain explain) {
  std::optional<PreparedTable> fresh;
  const PreparedTable& prepared = prepared_of(table, skip, fresh);
  std::optional<Interpolated> out = interpolate_curves(table, prepared, ideal_s, series, explain);
  // Where the table chose it: no faster than its fastest measured problem ran. It binds where a
  // clamp or a neighbouring series carried an efficiency onto a small problem, and also where
  // another series ran a problem of that size faster, which is why leave-one-out chooses it per table.
  if (out && table.fastest_time_floor && prepared.fastest_s > 0) {
    const double most = ideal_s / prepared.fastest_s;
    if (out->efficiency > most) {
      out->efficiency = most;
      out->clamped = true;
      if (explain == Explain::yes) {
        out->detail += fmt::format("; held to the table's fastest measured time, {} ({})", us(prepared.fastest_s),
                                   prepared.fastest_benchmark);
      }
    }
  }
  return out;
}

std::optional<Interpolated> measured_problem(const CalibrationTable& table, std::string_view problem,
                                             std::optional<double> series, Explain explain) {
  if (problem.empty()) return std::nullopt;
  const bool two_axes = has_series(table);
  if (two_axes && !series) return std::nullopt;
  double sum = 0;
  int count = 0;
  const auto add = [&](double point_series, double efficiency) {
    if (two_axes && !same(point_series, *series)) return;
    sum += efficiency;
    ++count;
  };
  if (table.prepared && table.prepared->point_count == table.points.size()) {
    const auto found = table.prepared->problems.find(problem);
    if (found == table.prepared->problems.end()) return std::nullopt;
    for (const auto& [point_series, efficiency] : found->second) add(point_series, efficiency);
  } else {
    for (const CalibrationPoint& p : table.points) {
      if (problem_of(p.benchmark) == problem) add(p.series.value_or(0), p.efficiency);
    }
  }
  if (count == 0) return std::nullopt;
  Interpolated out;
  out.efficiency = sum / count;
  if (explain == Explain::yes) out.detail = fmt::format("{} (measured)", problem);
  return out;
}

const CalibrationTable* Calibration::table(std::string_view name) const {
  const auto it = tables.find(std::string(name));
  return it == tables.end() ? nullptr : &it->second;
}

// ---- provenance ------------------------------------------------------------------------------

std::string provenance_text(const RunProvenance& p) {
  const auto clocks = [](const std::optional<double>& start, const std::optional<double>& end) {
    if (!start && !end) return std::string(not_recorded);
    const auto mhz = [](const std::optional<double>& v) { return v ? fmt::format("{:g}", *v) : std::string("?"); };
    return fmt::format("{} -> {} MHz", mhz(start), mhz(end));
  };
  return fmt::format("{} (cc {}), driver {}, CUDA {}, cuBLAS {}, SM {}, memory {}, commit {}", p.gpu_name,
                     p.compute_capability, p.driver_version, p.cuda_runtime_version, p.cublas_version,
                     clocks(p.sm_clock_start_mhz, p.sm_clock_end_mhz),
                     clocks(p.memory_clock_start_mhz, p.memory_clock_end_mhz), p.tool_commit);
}

std::string origin_text(const Calibration& c) {
  // The date of the measurement: the first source's start (an ISO time), and what measured it.
  std::string measured;
  for (const CalibrationSource& s : c.sources) {
    std::string date = s.started_utc.substr(0, s.started_utc.find('T'));
    measured =
        s.provenance
            ? fmt::format("{}, {}", date.empty() ? std::string(not_recorded) : date, provenance_text(*s.provenance))
            : fmt::format("{}, {}; provenance not recorded", date.empty() ? s.file : date, s.device_name);
    break;
  }
  if (c.transfer) {
    return fmt::format("transferred to {} from {} ({}), measured {}", c.gpu_id, c.transfer->from_gpu,
                       c.transfer->from_file, measured);
  }
  return fmt::format("measured on {} ({})", c.gpu_id, measured);
}

// ---- file ------------------------------------------------------------------------------------

json to_json(const Calibration& c) {
  json tables = json::object();
  for (const auto& [name, table] : c.tables) {
    json points = json::array();
    for (const CalibrationPoint& p : table.points) {
      json point = {{"ideal_us", p.ideal_s * 1e6},
                    {"efficiency", p.efficiency},
                    {"benchmark", p.benchmark},
                    {"measured_us", p.measured_s * 1e6},
                    {"spread_pct", p.spread * 100}};
      if (p.series) point["series"] = *p.series;
      if (p.loo_error) point["loo_error_pct"] = *p.loo_error * 100;
      if (p.problem) {
        point["flops"] = p.problem->flops;
        point["roof_bytes"] = p.problem->roof_bytes;
        if (p.problem->peak) point["peak"] = name_of(*p.problem->peak);
      }
      points.push_back(std::move(point));
    }
    json t = {{"pattern", table.pattern}, {"best", table.best}, {"points", std::move(points)}};
    if (has_series(table)) t["series"] = table.series_name;
    if (table.neighbours_outside_range) t["outside_series_range"] = "neighbour_series";
    if (table.fastest_time_floor) t["time_floor"] = "fastest_measured";
    tables[name] = std::move(t);
  }
  json sources = json::array();
  for (const CalibrationSource& s : c.sources) {
    json source = {
        {"file", s.file},   {"format", s.format}, {"device_name", s.device_name}, {"started_utc", s.started_utc},
        {"quick", s.quick}, {"points", s.points}};
    if (s.provenance) source["provenance"] = provenance_to_json(*s.provenance);
    sources.push_back(std::move(source));
  }
  json ceilings = {{"peak_tflops", peaks_to_json(c.ceilings.peaks)}};
  if (c.ceilings.stream_bytes_per_s) {
    ceilings["stream_tbps"] = *c.ceilings.stream_bytes_per_s / 1e12;
    ceilings["stream_benchmark"] = c.ceilings.stream_benchmark;
  }
  if (c.ceilings.l2_bytes_per_s) ceilings["l2_tbps"] = *c.ceilings.l2_bytes_per_s / 1e12;
  if (c.ceilings.smem_bytes_per_s) ceilings["smem_tbps"] = *c.ceilings.smem_bytes_per_s / 1e12;
  json out = {
      {"schema", "roofline.calibration.v1"},
      {"tool_version", tool_version},
      {"gpu", {{"id", c.gpu_id}, {"name", c.gpu_name}, {"hardware_file", c.hardware_origin}}},
      {"roofs", {{"bandwidth_tbps", c.roofs.bandwidth / 1e12}, {"peak_tflops", peaks_to_json(c.roofs.peaks)}}},
      {"interpolation",
       "efficiency = roofline time / measured median time; x = the roofline time on these roofs; linear in log(x) "
       "between measured x (equal x averaged) and in log(series) between series; clamped at the ends, or where a table "
       "says outside_series_range: neighbour_series and the query's series did not measure its x, the series' end "
       "times the ratio of the nearest series on each side that did (at x over at the end), within their values; where "
       "a table says time_floor: fastest_measured, no faster than its fastest measured point"},
      {"sources", std::move(sources)},
      {"ceilings", std::move(ceilings)},
      {"tables", std::move(tables)}};
  // Only where measured: files without collectives stay as they were.
  if (!c.collectives.empty()) out["collectives"] = to_json(c.collectives);
  if (c.validation) {
    out["validation"] = {{"summary", c.validation->summary},
                         {"within_pct", c.validation->within_pct},
                         {"within", c.validation->within},
                         {"layers", c.validation->layers},
                         {"run", c.validation->run}};
  }
  if (c.transfer) {
    out["transfer"] = {{"from_gpu", c.transfer->from_gpu},
                       {"from_file", c.transfer->from_file},
                       {"points", c.transfer->points},
                       {"points_dropped", c.transfer->points_dropped},
                       {"collectives", c.transfer->collectives}};
  }
  return out;
}

const json& calibration_schema() {
  static const json schema = [] {
    for (const EmbeddedFile& file : bundled_schema_files()) {
      if (file.path.ends_with("calibration.v1.schema.json")) return json::parse(file.contents);
    }
    throw std::logic_error("docs/schema/calibration.v1.schema.json is not embedded");
  }();
  return schema;
}

namespace {

// A point's efficiency is its roofline time over its measured time (the schema: ideal_us /
// measured_us). Above 1 the run beat the roofs the file itself states, which only roofs below the
// part's real figures or a timing error can do: the bundled H200 calibration's highest point is
// 0.942 (stream.dot, access.strided). max_point_efficiency accepts roofs understated by a third;
// a point far above it (1e6) would make every prediction from the table absurdly fast.
constexpr double max_point_efficiency = 1.5;

void check_efficiency(double efficiency, double ideal_us, double measured_us, const std::string& where) {
  if (!(efficiency > 0) || efficiency > max_point_efficiency) {
    throw InputError(
        fmt::format("{}/efficiency: {} is outside (0, {}]: a point may beat its roofline time by a "
                    "third at most",
                    where, efficiency, max_point_efficiency));
  }
  // The three are written together by roofline calibrate; an edited efficiency no longer matches.
  const double ratio = ideal_us / measured_us;
  if (!(std::abs(efficiency - ratio) <= 1e-6 * ratio)) {
    throw InputError(fmt::format("{}/efficiency: {} is not ideal_us / measured_us = {}", where, efficiency, ratio));
  }
}

}  // namespace

Calibration calibration_from_json(const json& document, const std::string& name) {
  static const SchemaValidator validator(calibration_schema());
  const std::vector<SchemaViolation> violations = validator.validate(document);
  if (!violations.empty()) {
    const SchemaViolation& v = violations.front();
    throw InputError(fmt::format("{}: {} {}", name, v.pointer.empty() ? "the document" : v.pointer, v.message));
  }
  Calibration c;
  c.file = name;
  c.gpu_id = document["gpu"]["id"].get<std::string>();
  c.gpu_name = document["gpu"]["name"].get<std::string>();
  c.hardware_origin = document["gpu"]["hardware_file"].get<std::string>();
  c.roofs.gpu_id = c.gpu_id;
  c.roofs.bandwidth = document["roofs"]["bandwidth_tbps"].get<double>() * 1e12;
  c.roofs.peaks = peaks_from_json(document["roofs"]["peak_tflops"]);
  for (const json& s : document["sources"]) {
    CalibrationSource source{s["file"].get<std::string>(),
                             s["format"].get<std::string>(),
                             s["device_name"].get<std::string>(),
                             s["started_utc"].get<std::string>(),
                             s["quick"].get<bool>(),
                             s["points"].get<int>(),
                             std::nullopt};
    if (s.contains("provenance")) source.provenance = provenance_from_json(s["provenance"]);
    c.sources.push_back(std::move(source));
  }
  const json& ceilings = document["ceilings"];
  c.ceilings.stream_bytes_per_s = optional_tbps(ceilings, "stream_tbps");
  if (ceilings.contains("stream_benchmark"))
    c.ceilings.stream_benchmark = ceilings["stream_benchmark"].get<std::string>();
  c.ceilings.l2_bytes_per_s = optional_tbps(ceilings, "l2_tbps");
  c.ceilings.smem_bytes_per_s = optional_tbps(ceilings, "smem_tbps");
  c.ceilings.peaks = peaks_from_json(ceilings["peak_tflops"]);
  for (const auto& [table_name, t] : document["tables"].items()) {
    CalibrationTable table;
    table.name = table_name;
    table.pattern = t["pattern"].get<std::string>();
    table.best = t["best"].get<bool>();
    if (t.contains("series")) table.series_name = t["series"].get<std::string>();
    table.neighbours_outside_range = t.value("outside_series_range", "own_series") == "neighbour_series";
    if (table.neighbours_outside_range && !has_series(table)) {
      throw InputError(fmt::format("{}: /tables/{}/outside_series_range is not allowed: the table has no series axis",
                                   name, table_name));
    }
    table.fastest_time_floor = t.value("time_floor", "none") == "fastest_measured";
    const json& points = t["points"];
    for (std::size_t i = 0; i < points.size(); ++i) {
      const json& p = points[i];
      if (has_series(table) != p.contains("series")) {
        throw InputError(fmt::format("{}: /tables/{}/points/{}/series {}", name, table_name, i,
                                     has_series(table) ? "is required: the table has a series axis"
                                                       : "is not allowed: the table has no series axis"));
      }
      CalibrationPoint point;
      point.ideal_s = p["ideal_us"].get<double>() * 1e-6;
      if (p.contains("series")) point.series = p["series"].get<double>();
      point.efficiency = p["efficiency"].get<double>();
      point.benchmark = p["benchmark"].get<std::string>();
      point.measured_s = p["measured_us"].get<double>() * 1e-6;
      check_efficiency(point.efficiency, p["ideal_us"].get<double>(), p["measured_us"].get<double>(),
                       fmt::format("{}: /tables/{}/points/{}", name, table_name, i));
      point.spread = p["spread_pct"].get<double>() / 100;
      if (p.contains("loo_error_pct")) point.loo_error = p["loo_error_pct"].get<double>() / 100;
      if (p.contains("flops") != p.contains("roof_bytes")) {
        throw InputError(
            fmt::format("{}: /tables/{}/points/{}: flops and roof_bytes come together (the problem "
                        "behind x)",
                        name, table_name, i));
      }
      if (p.contains("flops")) {
        CalibrationPoint::Problem problem{p["flops"].get<double>(), p["roof_bytes"].get<double>(), std::nullopt};
        // the schema admits only peak class names here
        if (p.contains("peak")) problem.peak = peak_class_from_name(p["peak"].get<std::string>());
        point.problem = problem;
      }
      table.points.push_back(std::move(point));
    }
    sort_points(table);
    c.tables.emplace(table_name, std::move(table));
  }
  if (document.contains("collectives")) {
    c.collectives = collective_tables_from_json(document["collectives"], name + ": /collectives");
  }
  if (document.contains("validation")) {
    const json& v = document["validation"];
    c.validation = ErrorBand{v["summary"].get<std::string>(), v["within_pct"].get<double>(), v["within"].get<int>(),
                             v["layers"].get<int>(), v["run"].get<std::string>()};
  }
  if (document.contains("transfer")) {
    const json& t = document["transfer"];
    c.transfer =
        TransferOrigin{t["from_gpu"].get<std::string>(), t["from_file"].get<std::string>(), t["points"].get<int>(),
                       t["points_dropped"].get<int>(), t["collectives"].get<std::string>()};
  }
  return c;
}

Calibration parse_calibration(std::string_view text, const std::string& name) {
  check_json_depth(text, name);
  json document;
  try {
    document = parse_json_unique(text, name);
  } catch (const json::exception& e) {
    std::string what = e.what();
    if (const std::size_t end = what.find("] "); end != std::string::npos) what = what.substr(end + 2);
    throw InputError(fmt::format("{}: not valid JSON ({})", name, what));
  }
  return calibration_from_json(document, name);
}

Calibration load_calibration(const std::filesystem::path& file) {
  return parse_calibration(read_input_file(file), file.string());
}

// ---- applying --------------------------------------------------------------------------------

CalibratedOrNot calibrated_time(const Calibration& calibration, const Basis& basis, const Roofs& roofs,
                                TableChoice choice, Explain explain) {
  if (roofs.gpu_id != calibration.gpu_id) {
    return NotCalibrated{fmt::format("the calibration is for {}, not {}", calibration.gpu_id, roofs.gpu_id)};
  }
  const std::string& name = choice == TableChoice::best ? basis.best_table : basis.table;
  if (name.empty()) return NotCalibrated{"no calibration table applies to this operation"};
  const CalibrationTable* table = calibration.table(name);
  if (table == nullptr) return NotCalibrated{fmt::format("the calibration has no table {}", name)};
  const double x = ideal_time(basis, calibration.roofs).time_s;
  if (!(x > 0)) return NotCalibrated{"the model counts no work for this operation"};
  std::optional<Interpolated> found = measured_problem(*table, basis.problem, basis.series, explain);
  if (!found) found = interpolate(*table, x, basis.series, std::nullopt, explain);
  if (!found) return NotCalibrated{fmt::format("table {} needs a {}", name, table->series_name)};
  CalibratedTime t;
  t.ideal_s = ideal_time(basis, roofs).time_s;
  t.efficiency = found->efficiency;
  t.time_s = t.ideal_s / found->efficiency;
  t.table = name;
  t.clamped = found->clamped;
  t.detail = std::move(found->detail);
  return t;
}

CalibratedOrNot expected_time(const Calibration& c, const GpuSpec& gpu, const GemmShape& shape) {
  return calibrated_time(c, gemm_basis(shape), Roofs::of(gpu));
}
CalibratedOrNot expected_time(const Calibration& c, const GpuSpec& gpu, const GemvShape& shape) {
  return calibrated_time(c, gemv_basis(shape), Roofs::of(gpu));
}
CalibratedOrNot expected_time(const Calibration& c, const GpuSpec& gpu, const ElementwiseShape& shape) {
  return calibrated_time(c, elementwise_basis(shape), Roofs::of(gpu));
}
CalibratedOrNot expected_time(const Calibration& c, const GpuSpec& gpu, const NormShape& shape) {
  return calibrated_time(c, norm_basis(shape), Roofs::of(gpu));
}
CalibratedOrNot expected_time(const Calibration& c, const GpuSpec& gpu, const SoftmaxShape& shape) {
  return calibrated_time(c, softmax_basis(shape), Roofs::of(gpu));
}
CalibratedOrNot expected_time(const Calibration& c, const GpuSpec& gpu, const AttentionShape& shape,
                              AttentionImpl impl) {
  return calibrated_time(c, attention_basis(shape, impl), Roofs::of(gpu));
}

}  // namespace roofline
