#include "roofline/profile/ncu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <sstream>

#include "roofline/core/error.hpp"

namespace roofline::ncu {
namespace {

// Splits one CSV line into fields; fields may be quoted ("" is a quote inside). Returns false on
// an unterminated quote.
bool split_csv_line(std::string_view line, std::vector<std::string>& fields) {
  fields.clear();
  std::string field;
  bool quoted = false;
  bool was_quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
      was_quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
      was_quoted = false;
    } else if (c != '\r') {
      field += c;
    }
  }
  if (quoted) return false;
  if (!field.empty() || was_quoted || !fields.empty()) fields.push_back(std::move(field));
  return true;
}

bool is_header(const std::vector<std::string>& fields) {
  return fields.size() > 2 && fields[0] == "ID" &&
         std::find(fields.begin(), fields.end(), "Kernel Name") != fields.end();
}

// SI prefix of a unit ("Gbyte/second" -> 1e9 and "byte/second").
double prefix_scale(std::string& unit) {
  static constexpr std::array<std::pair<char, double>, 5> prefixes{
      {{'K', 1e3}, {'k', 1e3}, {'M', 1e6}, {'G', 1e9}, {'T', 1e12}}};
  static constexpr std::array<std::string_view, 7> bases{"byte", "hz", "inst", "cycle", "sector", "warp", "request"};
  for (const auto& [letter, scale] : prefixes) {
    if (unit.size() > 1 && unit[0] == letter) {
      const std::string_view rest = std::string_view(unit).substr(1);
      for (std::string_view base : bases) {
        if (rest.starts_with(base)) {
          unit = std::string(rest);
          return scale;
        }
      }
    }
  }
  return 1;
}

std::optional<double> time_unit(std::string_view unit) {
  if (unit == "ns" || unit == "nsecond") return 1e-9;
  if (unit == "us" || unit == "usecond") return 1e-6;
  if (unit == "ms" || unit == "msecond") return 1e-3;
  if (unit == "s" || unit == "second") return 1.0;
  return std::nullopt;
}

// The factor that turns a value printed in `unit` into base units (bytes, hertz, seconds,
// operations; "per second" forms into per second). nullopt: a unit this reader does not know.
std::optional<double> unit_scale(std::string unit) {
  if (unit.empty() || unit == "%") return 1.0;
  if (auto t = time_unit(unit)) return t;
  double scale = prefix_scale(unit);
  const std::size_t slash = unit.find('/');
  const std::string base = unit.substr(0, slash);
  static constexpr std::array<std::string_view, 8> known{"byte",   "hz",   "inst",    "cycle",
                                                         "sector", "warp", "request", "pass"};
  if (std::find(known.begin(), known.end(), base) == known.end()) return std::nullopt;
  if (slash == std::string::npos) return scale;
  const std::string per = unit.substr(slash + 1);
  if (per == "cycle") return scale;
  const std::optional<double> t = time_unit(per);
  if (!t) return std::nullopt;
  return scale / *t;
}

class Columns {
 public:
  Columns(const RawCsv& csv, const std::string& name) : csv_(csv), name_(name) {
    for (std::size_t i = 0; i < csv.header.size(); ++i) index_.emplace(csv.header[i], i);
  }
  [[nodiscard]] bool has(const std::string& metric) const { return index_.contains(metric); }
  [[nodiscard]] const std::string& text(const std::vector<std::string>& row, const std::string& column) const {
    const auto it = index_.find(column);
    if (it == index_.end()) missing(column);
    return row[it->second];
  }
  // The value in base units; nullopt for an absent metric or "n/a"/"no data".
  [[nodiscard]] std::optional<double> value(const std::vector<std::string>& row, const std::string& metric) const {
    const auto it = index_.find(metric);
    if (it == index_.end()) return std::nullopt;
    std::string raw;
    for (char c : row[it->second]) {
      if (c != ',') raw += c;
    }
    if (raw.empty() || raw == "n/a" || raw == "no data" || raw == "N/A") return std::nullopt;
    double number = 0;
    std::size_t used = 0;
    try {
      number = std::stod(raw, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != raw.size() || !std::isfinite(number)) {
      throw InputError(
          fmt::format("{}: {} of kernel {} is '{}', not a number", name_, metric, row[0], row[it->second]));
    }
    const std::string& unit = csv_.units.empty() ? empty_ : csv_.units[it->second];
    const std::optional<double> scale = unit_scale(unit);
    if (!scale) throw InputError(fmt::format("{}: {} is in '{}', a unit roofline does not know", name_, metric, unit));
    return number * *scale;
  }
  [[noreturn]] void missing(const std::string& metric) const {
    throw InputError(fmt::format(
        "{}: the ncu table has no column {} (capture it with --page raw --csv and the sections `roofline profile` "
        "passes)",
        name_, metric));
  }

 private:
  const RawCsv& csv_;
  const std::string& name_;
  std::map<std::string, std::size_t> index_;
  std::string empty_;
};

struct TensorSource {
  std::string_view source;
  std::optional<PeakClass> peak;
  bool floating;
};
constexpr std::array<TensorSource, 8> tensor_sources{{
    {"bf16_dst_fp32", PeakClass::bf16, true},
    {"fp16", PeakClass::fp16, true},
    {"tf32_dst_fp32", PeakClass::tf32, true},
    {"fp64", PeakClass::fp64_tensor, true},
    {"fp8_sparsity_off", PeakClass::fp8, true},
    {"fp8_sparsity_on", PeakClass::fp8, true},
    {"int8", PeakClass::int8, false},
    {"int1", std::nullopt, false},
}};

const std::string sass = "smsp__sass_thread_inst_executed_op_";

}  // namespace

double Kernel::tensor_flops() const {
  double sum = 0;
  for (const TensorOps& t : tensor) {
    if (t.floating) sum += t.ops;
  }
  return sum;
}

RawCsv parse_raw_csv(std::string_view text, const std::string& name) {
  RawCsv csv;
  std::istringstream in{std::string(text)};
  std::string line;
  std::vector<std::string> fields;
  enum class State { before, units, rows, after } state = State::before;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    // A quoted field may hold line breaks (the details page's rule texts): read on to its end.
    for (std::string more; std::count(line.begin(), line.end(), '"') % 2 == 1 && std::getline(in, more); ++number) {
      line += '\n';
      line += more;
    }
    switch (state) {
      case State::before:
        if (split_csv_line(line, fields) && is_header(fields)) {
          if (std::find(fields.begin(), fields.end(), "Metric Name") != fields.end()) {
            throw InputError(fmt::format(
                "{}: this is Nsight Compute's details page (one metric per line); roofline reads --page raw", name));
          }
          csv.header = fields;
          state = State::units;
        } else {
          csv.other_lines.push_back(line);
        }
        break;
      case State::units:
      case State::rows:
        if (line.find_first_not_of(" \r") == std::string::npos) {
          state = State::after;  // the table ends at a blank line
          break;
        }
        if (!split_csv_line(line, fields) || fields.size() != csv.header.size()) {
          throw InputError(fmt::format("{}: line {}: {} fields where the header has {}", name, number, fields.size(),
                                       csv.header.size()));
        }
        if (state == State::units && fields[0].empty()) {
          csv.units = fields;  // ncu prints the units under the header, with an empty ID
        } else {
          csv.rows.push_back(fields);
        }
        state = State::rows;
        break;
      case State::after: csv.other_lines.push_back(line); break;
    }
  }
  if (csv.header.empty()) {
    throw InputError(fmt::format(
        "{}: no Nsight Compute metric table (a header line starting \"ID\",...,\"Kernel Name\"; was it captured with "
        "--page raw --csv?)",
        name));
  }
  return csv;
}

constexpr double min_kernel_duration_s = 1e-9;
constexpr double max_kernel_duration_s = 1e6;

std::vector<Kernel> kernels(const RawCsv& csv, const std::string& name) {
  const Columns c(csv, name);
  const bool has_vector = c.has(sass + "ffma_pred_on.sum.per_cycle_elapsed");
  if (!c.has("gpu__time_duration.sum")) c.missing("gpu__time_duration.sum");
  if (has_vector && !c.has("smsp__cycles_elapsed.avg.per_second")) c.missing("smsp__cycles_elapsed.avg.per_second");
  std::vector<Kernel> out;
  for (const std::vector<std::string>& row : csv.rows) {
    Kernel k;
    const std::optional<double> id = c.value(row, "ID");
    if (!id) throw InputError(fmt::format("{}: a kernel row has no ID", name));
    k.id = static_cast<std::int64_t>(*id);
    k.name = c.text(row, "Kernel Name");
    k.short_name = short_kernel_name(k.name);
    if (c.has("Block Size")) k.block = c.text(row, "Block Size");
    if (c.has("Grid Size")) k.grid = c.text(row, "Grid Size");
    if (c.has("device__attribute_display_name")) k.device = c.text(row, "device__attribute_display_name");
    const std::optional<double> duration = c.value(row, "gpu__time_duration.sum");
    if (!duration || !(*duration > 0)) {
      throw InputError(fmt::format("{}: kernel {} has no positive gpu__time_duration.sum", name, k.id));
    }
    // ncu times kernels in whole nanoseconds, and no profiled kernel runs for days: beyond these
    // bounds a rate (FLOPs / duration) or a count (rate x duration) overflows to inf.
    if (*duration < min_kernel_duration_s || *duration > max_kernel_duration_s) {
      throw InputError(fmt::format("{}: kernel {} lasts {:g} s (gpu__time_duration.sum), outside [{:g}, {:g}] s", name,
                                   k.id, *duration, min_kernel_duration_s, max_kernel_duration_s));
    }
    k.duration_s = *duration;
    if (has_vector) {
      const double cycles = c.value(row, "smsp__cycles_elapsed.avg.per_second").value_or(0) * k.duration_s;
      const auto per_cycle = [&](std::string_view op) {
        return c.value(row, fmt::format("{}{}_pred_on.sum.per_cycle_elapsed", sass, op)).value_or(0);
      };
      k.fp32_flops = (per_cycle("fadd") + per_cycle("fmul") + 2 * per_cycle("ffma")) * cycles;
      k.fp64_flops = (per_cycle("dadd") + per_cycle("dmul") + 2 * per_cycle("dfma")) * cycles;
      k.fp16_flops = (2 * per_cycle("hadd") + 2 * per_cycle("hmul") + 4 * per_cycle("hfma")) * cycles;
    }
    for (const TensorSource& source : tensor_sources) {
      const std::optional<double> ops = c.value(row, fmt::format("sm__ops_path_tensor_src_{}.sum", source.source));
      if (ops && *ops > 0) k.tensor.push_back({std::string(source.source), source.peak, source.floating, *ops});
    }
    const auto bytes = [&](const std::string& metric) -> std::optional<double> {
      const std::optional<double> rate = c.value(row, metric);
      return rate ? std::optional(*rate * k.duration_s) : std::nullopt;
    };
    k.dram_bytes = bytes("dram__bytes.sum.per_second");
    k.l2_bytes = bytes("derived__lts__lts2xbar_bytes.sum.per_second");
    k.l1_bytes = bytes("derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second");
    bool finite = std::isfinite(k.fp32_flops) && std::isfinite(k.fp64_flops) && std::isfinite(k.fp16_flops);
    for (const std::optional<double>& b : {k.dram_bytes, k.l2_bytes, k.l1_bytes})
      finite = finite && std::isfinite(b.value_or(0));
    for (const auto& t : k.tensor) finite = finite && std::isfinite(t.ops);
    if (!finite) {
      throw InputError(
          fmt::format("{}: kernel {}: its counters times its duration exceed any number (a rate near "
                      "1.8e308?)",
                      name, k.id));
    }
    out.push_back(std::move(k));
  }
  return out;
}

std::string short_kernel_name(std::string_view name) {
  std::string_view s = name;
  if (s.starts_with("void ")) s.remove_prefix(5);
  // The parameter list starts at the first '(' outside template brackets.
  int depth = 0;
  std::size_t end = s.size();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    if (s[i] == '>' && depth > 0) --depth;
    if (s[i] == '(' && depth == 0) {
      end = i;
      break;
    }
  }
  std::string plain;
  depth = 0;
  for (char c : s.substr(0, end)) {
    if (c == '<') {
      ++depth;
    } else if (c == '>') {
      if (depth > 0) --depth;
    } else if (depth == 0) {
      plain += c;
    }
  }
  const std::size_t last = plain.rfind("::");
  std::string result = last == std::string::npos ? plain : plain.substr(last + 2);
  return result.empty() ? std::string(name) : result;
}

std::vector<std::string> sections() {
  return {"SpeedOfLight",
          "SpeedOfLight_RooflineChart",
          "SpeedOfLight_HierarchicalSingleRooflineChart",
          "SpeedOfLight_HierarchicalHalfRooflineChart",
          "SpeedOfLight_HierarchicalDoubleRooflineChart",
          "SpeedOfLight_HierarchicalTensorRooflineChart",
          "MemoryWorkloadAnalysis"};
}

}  // namespace roofline::ncu
