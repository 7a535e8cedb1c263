#include "roofline/validate/measured.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "roofline/bench/bench.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"

namespace roofline {
namespace {

using nlohmann::json;

// Measured files are a few MB; anything far larger is not one.

// Reads values out of a document, naming the file and the JSON pointer of anything missing or of
// the wrong type.
class Fields {
 public:
  explicit Fields(std::string name) : name_(std::move(name)) {}

  [[nodiscard]] const json& at(const json& object, std::string_view key, const std::string& where) const {
    if (!object.is_object()) fail(where, "is not an object");
    const auto it = object.find(std::string(key));
    if (it == object.end()) fail(where + "/" + std::string(key), "is missing");
    return *it;
  }
  [[nodiscard]] double number(const json& object, std::string_view key, const std::string& where) const {
    const json& value = at(object, key, where);
    if (!value.is_number() || !std::isfinite(value.get<double>())) {
      fail(where + "/" + std::string(key), "must be a finite number");
    }
    return value.get<double>();
  }
  [[nodiscard]] std::optional<double> nullable_number(const json& object, std::string_view key,
                                                      const std::string& where) const {
    const json& value = at(object, key, where);
    if (value.is_null()) return std::nullopt;
    return number(object, key, where);
  }
  [[nodiscard]] std::string text(const json& object, std::string_view key, const std::string& where) const {
    const json& value = at(object, key, where);
    if (!value.is_string()) fail(where + "/" + std::string(key), "must be a string");
    return value.get<std::string>();
  }
  [[nodiscard]] bool boolean(const json& object, std::string_view key, const std::string& where) const {
    const json& value = at(object, key, where);
    if (!value.is_boolean()) fail(where + "/" + std::string(key), "must be true or false");
    return value.get<bool>();
  }
  [[noreturn]] void fail(const std::string& where, std::string_view problem) const {
    throw InputError(fmt::format("{}: {} {}", name_, where.empty() ? "the document" : where, problem));
  }
  [[nodiscard]] const std::string& name() const { return name_; }

 private:
  std::string name_;
};

std::string last_component(const std::string& id) {
  const std::size_t dot = id.rfind('.');
  return dot == std::string::npos ? id : id.substr(dot + 1);
}

// The suite a result table belongs to, from the suites this build knows.
std::string suite_of_group(std::string_view group) {
  for (const bench::SuiteInfo& suite : bench::suites()) {
    for (const bench::GroupLayout& layout : suite.groups) {
      if (layout.name == group) return std::string(suite.name);
    }
  }
  return {};
}

// Columns of the bench result tables that describe the outcome, not the problem (the rest are the
// problem's parameters, which a regression check requires to be equal).
constexpr std::array<std::string_view, 28> bench_result_columns{"id",
                                                                "implementation",
                                                                "status",
                                                                "model_bytes",
                                                                "model_flops",
                                                                "median_us",
                                                                "min_us",
                                                                "max_us",
                                                                "spread_pct",
                                                                "samples",
                                                                "launches_per_sample",
                                                                "graph",
                                                                "bandwidth_tbps",
                                                                "best_bandwidth_tbps",
                                                                "pct_of_memcpy",
                                                                "detail",
                                                                "moved_bytes",
                                                                "sector_bandwidth_tbps",
                                                                "sector_efficiency",
                                                                "tflops",
                                                                "speedup_vs_cublas",
                                                                "speedup_vs_reference",
                                                                "speedup_vs_standard",
                                                                "pct_of_peak",
                                                                "pct_of_cublas",
                                                                "share_pct",
                                                                "direct_us",
                                                                "stages_sum_us"};

bool is_result_column(std::string_view key) {
  for (std::string_view c : bench_result_columns) {
    if (c == key) return true;
  }
  // How each result was measured (clocks, noise, cold L2), which bench appends to every table.
  return std::any_of(bench::columns::measurement.begin(), bench::columns::measurement.end(),
                     [key](const bench::columns::C& c) { return c.column.key == key; });
}

void check_unique(std::set<std::string>& seen, const Measurement& m, const Fields& f) {
  if (!seen.insert(m.id).second) f.fail(m.where, fmt::format("repeats the id '{}'", m.id));
}

Measurement bench_row(const json& row, const std::string& group, const std::string& where, const Fields& f) {
  Measurement m;
  m.group = group;
  m.suite = suite_of_group(group);
  m.where = f.name() + " " + where;
  m.id = f.text(row, "id", where);
  if (m.id.empty()) f.fail(where + "/id", "is empty");
  // Collective rows of the first runs (2026-11-30) predate the column; NCCL ran them all.
  const bool legacy_collective = m.suite == "collectives" && !row.contains("implementation");
  m.implementation = legacy_collective ? "nccl" : f.text(row, "implementation", where);
  m.kernel = last_component(m.id);
  m.status = f.text(row, "status", where);
  // Compute ceilings (peak probes) move no bytes to speak of and record none.
  if (row.contains("model_bytes")) m.recorded_bytes = f.nullable_number(row, "model_bytes", where);
  if (row.contains("model_flops")) m.recorded_flops = f.nullable_number(row, "model_flops", where);
  for (const auto& [key, value] : row.items()) {
    if (!is_result_column(key)) m.parameters[key] = value;
  }
  const std::optional<double> median = f.nullable_number(row, "median_us", where);
  if (m.status == "passed" && median) {
    MeasuredTiming t;
    t.median_s = *median * 1e-6;
    const std::optional<double> min = f.nullable_number(row, "min_us", where);
    const std::optional<double> max = f.nullable_number(row, "max_us", where);
    const std::optional<double> samples = f.nullable_number(row, "samples", where);
    if (!min || !max || !samples) f.fail(where, "has a median time but no min_us, max_us or samples");
    t.min_s = *min * 1e-6;
    t.max_s = *max * 1e-6;
    t.samples = static_cast<std::int64_t>(*samples);
    if (!(t.min_s > 0 && t.min_s <= t.median_s && t.median_s <= t.max_s)) {
      f.fail(where, fmt::format("times must satisfy 0 < min <= median <= max (min {} us, median {} us, max {} us)",
                                *min, *median, *max));
    }
    if (t.samples < 1) f.fail(where + "/samples", "must be at least 1");
    m.timing = t;
    // A table without a model_flops column still gives its FLOPs through its TFLOP/s.
    if (!m.recorded_flops && row.contains("tflops")) {
      if (const std::optional<double> tflops = f.nullable_number(row, "tflops", where)) {
        m.recorded_flops = *tflops * 1e12 * t.median_s;
      }
    }
  }
  return m;
}

// Keys of a selftest record that report the outcome rather than define the problem.
constexpr std::array<std::string_view, 16> selftest_result_keys{
    "record", "group",  "kernel", "shape", "verification", "rel_err", "tolerance",     "median_ms",
    "min_ms", "max_ms", "reps",   "flop",  "tflops",       "note",    "pct_of_cublas", "workspace_bytes"};

bool is_selftest_result_key(std::string_view key) {
  for (std::string_view k : selftest_result_keys) {
    if (k == key) return true;
  }
  return key.starts_with("rel_err");
}

std::string selftest_status(const std::string& verification) {
  if (verification == "passed") return "passed";
  if (verification == "unsupported") return "not_supported";
  if (verification == "skipped") return "not_run";
  return "failed";
}

std::int64_t integer_field(const json& record, std::string_view key, const std::string& where, const Fields& f) {
  const double value = f.number(record, key, where);
  if (value != std::floor(value)) f.fail(where + "/" + std::string(key), "must be a whole number");
  return static_cast<std::int64_t>(value);
}

std::string selftest_id(const json& record, const std::string& group, const std::string& kernel,
                        const std::string& where, const Fields& f) {
  if (group == "gemm") {
    return fmt::format("gemm.{}.{}x{}x{}.{}", f.text(record, "dtype", where), integer_field(record, "m", where, f),
                       integer_field(record, "n", where, f), integer_field(record, "k", where, f), kernel);
  }
  if (group == "attention") {
    return fmt::format("attention.{}.b{}.h{}.kv{}.n{}.d{}.{}.{}", f.text(record, "dtype", where),
                       integer_field(record, "batch", where, f), integer_field(record, "heads", where, f),
                       integer_field(record, "kv_heads", where, f), integer_field(record, "seq", where, f),
                       integer_field(record, "head_dim", where, f),
                       integer_field(record, "causal", where, f) != 0 ? "causal" : "full", kernel);
  }
  if (group == "peak") return fmt::format("peak.{}", kernel);
  f.fail(where + "/group", fmt::format("'{}' is not a group of the compute selftest (gemm, attention, peak)", group));
}

MeasuredRun parse_selftest_lines(std::string_view text, const std::string& name) {
  const Fields f(name);
  MeasuredRun run;
  run.file = name;
  run.format = "compute_selftest.v1";
  std::set<std::string> seen;
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  bool have_device = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("line {}", number);
    json record;
    try {
      record = parse_json_unique(line, fmt::format("{}: {}", name, where));
    } catch (const json::exception&) {
      f.fail(where, "is not a JSON object");
    }
    const std::string kind = f.text(record, "record", where);
    if (kind == "compute_selftest_device.v1") {
      const std::string device = f.text(record, "device", where);
      if (have_device && device != run.device_name) {
        f.fail(where, fmt::format("names device '{}' after '{}': one file holds one device", device, run.device_name));
      }
      run.device_name = device;
      run.sms = static_cast<int>(integer_field(record, "multiprocessors", where, f));
      run.l2_bytes = integer_field(record, "l2_bytes", where, f);
      if (record.contains("mode")) run.quick = f.text(record, "mode", where) == "quick";
      have_device = true;
      continue;
    }
    if (kind != "compute_selftest.v1") {
      f.fail(where + "/record", fmt::format("'{}' is not a compute selftest record", kind));
    }
    Measurement m;
    m.suite = "compute";
    m.group = f.text(record, "group", where);
    m.kernel = f.text(record, "kernel", where);
    m.implementation = m.kernel == "cublas" ? "cublas" : "roofline";
    m.status = selftest_status(f.text(record, "verification", where));
    m.id = selftest_id(record, m.group, m.kernel, where, f);
    m.where = name + " " + where;
    if (record.contains("flop")) m.recorded_flops = f.nullable_number(record, "flop", where);
    for (const auto& [key, value] : record.items()) {
      if (!is_selftest_result_key(key)) m.parameters[key] = value;
    }
    if (m.status == "passed") {
      MeasuredTiming t;
      t.median_s = f.number(record, "median_ms", where) * 1e-3;
      t.min_s = f.number(record, "min_ms", where) * 1e-3;
      t.max_s = f.number(record, "max_ms", where) * 1e-3;
      t.samples = integer_field(record, "reps", where, f);
      if (!(t.min_s > 0 && t.min_s <= t.median_s && t.median_s <= t.max_s)) {
        f.fail(where, "times must satisfy 0 < min <= median <= max");
      }
      m.timing = t;
    }
    check_unique(seen, m, f);
    run.results.push_back(std::move(m));
  }
  if (!have_device) f.fail("", "has no compute_selftest_device.v1 record (which GPU ran it?)");
  if (run.results.empty()) f.fail("", "has no compute_selftest.v1 results");
  return run;
}

}  // namespace

const Measurement* MeasuredRun::find(std::string_view id) const {
  for (const Measurement& m : results) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

MeasuredRun measured_from_bench_report(const json& report, const std::string& name) {
  const Fields f(name);
  if (!report.is_object()) f.fail("", "is not a JSON object");
  const std::string schema = f.text(report, "schema", "");
  if (schema != "roofline.bench.v1") {
    f.fail("/schema", fmt::format("is '{}': not a bench report (roofline.bench.v1)", schema));
  }
  MeasuredRun run;
  run.file = name;
  run.format = schema;
  const json& results = f.at(report, "results", "");
  const json& devices = f.at(results, "device", "/results");
  if (!devices.is_array() || devices.size() != 1) f.fail("/results/device", "must hold one device");
  const json& device = devices[0];
  run.device_name = f.text(device, "name", "/results/device/0");
  run.sms = static_cast<int>(f.number(device, "sms", "/results/device/0"));
  run.l2_bytes = static_cast<std::int64_t>(f.number(device, "l2_bytes", "/results/device/0"));
  const json& hardware = f.at(device, "hardware_id", "/results/device/0");
  if (hardware.is_string()) run.hardware_id = hardware.get<std::string>();
  const json& runs = f.at(results, "run", "/results");
  if (!runs.is_array() || runs.size() != 1) f.fail("/results/run", "must hold one run");
  run.quick = f.boolean(runs[0], "quick", "/results/run/0");
  run.started_utc = f.text(runs[0], "started_utc", "/results/run/0");

  std::set<std::string> seen;
  for (const auto& [group, rows] : results.items()) {
    if (group == "device" || group == "run" || group == "targets") continue;
    const std::string where = "/results/" + group;
    if (!rows.is_array()) f.fail(where, "must be an array of results");
    // A table a suite derives from its results (compute's attention_by_n: one row per shape, the
    // kernels side by side) is no group of results and has no ids: the results are elsewhere.
    const bool derived = suite_of_group(group).empty() && std::none_of(rows.begin(), rows.end(), [](const json& row) {
                           return row.is_object() && row.contains("id");
                         });
    if (derived) continue;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      Measurement m = bench_row(rows[i], group, fmt::format("{}/{}", where, i), f);
      check_unique(seen, m, f);
      run.results.push_back(std::move(m));
    }
  }
  if (run.results.empty()) f.fail("/results", "holds no benchmark results");
  return run;
}

MeasuredRun parse_measured(std::string_view text, const std::string& name) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) throw InputError(fmt::format("{}: is empty", name));
  // A bench report is one JSON document; selftest output is one object per line.
  json document;
  bool whole = true;
  check_json_depth(text, name);
  try {
    document = parse_json_unique(text, name);
  } catch (const json::exception& e) {
    whole = false;
    if (text.find('\n', first) == std::string_view::npos ||
        text.substr(first).find("\"record\"") == std::string::npos) {
      std::string what = e.what();
      if (const std::size_t end = what.find("] "); end != std::string::npos) what = what.substr(end + 2);
      throw InputError(fmt::format("{}: not valid JSON ({})", name, what));
    }
  }
  if (whole && document.is_object() && document.contains("record")) whole = false;  // a one-line selftest file
  if (whole) return measured_from_bench_report(document, name);
  return parse_selftest_lines(text, name);
}

MeasuredRun load_measured(const std::filesystem::path& file) {
  return parse_measured(read_input_file(file, max_measured_file_bytes), file.string());
}

}  // namespace roofline
