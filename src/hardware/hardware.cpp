#include "roofline/hardware/hardware.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"
#include "roofline/core/json_schema.hpp"
#include "roofline/core/text.hpp"

namespace roofline {
namespace {

using nlohmann::json;

const SchemaValidator& hardware_validator() {
  static const SchemaValidator validator(hardware_schema());
  return validator;
}

double figure_value(const json& figure) {
  return figure.at("value").get<double>();
}

std::optional<double> optional_figure(const json& parent, const char* key) {
  if (!parent.contains(key)) return std::nullopt;
  return figure_value(parent.at(key));
}

// Collects every figure (an object with "value") as dotted path -> JSON pointer.
void collect_figures(const json& node, const std::string& dotted, const std::string& pointer,
                     std::vector<std::pair<std::string, std::string>>& out) {
  if (!node.is_object()) return;
  if (node.contains("value") && node.contains("source")) {
    out.emplace_back(dotted, pointer);
    return;
  }
  for (const auto& [key, child] : node.items()) {
    if (key == "sources") continue;
    collect_figures(child, dotted.empty() ? key : dotted + "." + key, pointer + "/" + key, out);
  }
}

// Every figure, in the unit its key names, lies within a factor of a million of 1: the bundled
// files' figures run from 0.864 (L40S TB/s) to 15,000 (GB300 fp4 TFLOP/s), their
// ops_per_clock_per_unit up to 49,152, so the bounds are beyond any GPU by a factor of 20 or more. Outside them,
// products and quotients of the model reach infinity or zero (a 1e308 TB/s bandwidth printed "inf"; 1e300 SMs as an
// int, -2147483648).
constexpr double min_figure_value = 1e-6;
constexpr double max_figure_value = 1e6;

void check_figure_ranges(const json& document, const std::string& origin, std::vector<HardwareFinding>& out) {
  std::vector<std::pair<std::string, std::string>> figures;
  collect_figures(document, "", "", figures);
  for (const auto& [dotted, pointer] : figures) {
    const json& figure = document.at(json::json_pointer(pointer));
    for (const char* key : {"value", "ops_per_clock_per_unit"}) {
      if (!figure.contains(key) || !figure.at(key).is_number()) continue;  // the schema has said so
      const double number = figure.at(key).get<double>();
      if (number < min_figure_value || number > max_figure_value) {
        out.push_back({HardwareFinding::Level::error, origin, pointer + "/" + key,
                       fmt::format("{} is beyond any GPU: a figure lies in [{:g}, {:g}] of its unit",
                                   figure.at(key).dump(), min_figure_value, max_figure_value)});
      }
    }
  }
}

// Dangling `source` references: every figure must cite an entry of `sources`.
void check_source_references(const json& document, const std::string& origin, std::vector<HardwareFinding>& out) {
  std::vector<std::pair<std::string, std::string>> figures;
  collect_figures(document, "", "", figures);
  const json& sources = document.at("sources");
  for (const auto& [dotted, pointer] : figures) {
    const std::string source = document.at(json::json_pointer(pointer)).at("source").get<std::string>();
    if (!sources.contains(source)) {
      out.push_back({HardwareFinding::Level::error, origin, pointer + "/source",
                     fmt::format("cites '{}', which is not a key of \"sources\"", source)});
    }
  }
}

GpuSpec spec_from_document(const json& d, const std::string& origin) {
  GpuSpec spec;
  spec.id = d.at("id").get<std::string>();
  if (d.contains("aliases")) spec.aliases = d.at("aliases").get<std::vector<std::string>>();
  spec.name = d.at("name").get<std::string>();
  spec.vendor = d.at("vendor").get<std::string>();
  spec.architecture = d.at("architecture").get<std::string>();
  spec.release_year = d.at("release_year").get<int>();
  const json& compute = d.at("compute");
  spec.units = compute.at("units").at("value").get<int>();
  spec.unit_name = compute.at("unit_name").get<std::string>();
  spec.boost_clock_mhz = figure_value(compute.at("boost_clock_mhz"));
  for (std::size_t i = 0; i < peak_class_names.size(); ++i) {
    spec.peak_tflops[i] = optional_figure(d.at("peak_tflops"), std::string(peak_class_names[i]).c_str());
  }
  const json& memory = d.at("memory");
  spec.memory_type = memory.at("type").get<std::string>();
  spec.memory_capacity_gb = figure_value(memory.at("capacity_gb"));
  spec.memory_bandwidth_tbps = figure_value(memory.at("bandwidth_tbps"));
  const json& cache = d.at("cache");
  spec.l2_mb = figure_value(cache.at("l2_mb"));
  spec.smem_per_unit_kb = optional_figure(cache, "smem_per_unit_kb");
  const json& interconnect = d.at("interconnect");
  if (interconnect.contains("scale_up")) {
    spec.scale_up_name = interconnect.at("scale_up").at("name").get<std::string>();
    spec.scale_up_bidir_gbps = figure_value(interconnect.at("scale_up").at("bandwidth_bidir_gbps"));
  }
  spec.pcie_bidir_gbps = figure_value(interconnect.at("pcie").at("bandwidth_bidir_gbps"));
  spec.tdp_w = figure_value(d.at("power").at("tdp_w"));
  spec.origin = origin;
  spec.document = d;
  return spec;
}

std::string describe_errors(const std::vector<HardwareFinding>& errors) {
  std::string message;
  for (const HardwareFinding& e : errors) {
    if (!message.empty()) message += "\n";
    message +=
        e.key.empty() ? fmt::format("{}: {}", e.file, e.message) : fmt::format("{}: {}: {}", e.file, e.key, e.message);
  }
  return message;
}

}  // namespace

const json& hardware_schema() {
  static const json schema = [] {
    for (const EmbeddedFile& file : bundled_hardware_files()) {
      if (file.path == "hardware/schema.json") return json::parse(file.contents);
    }
    throw std::logic_error("hardware/schema.json is not embedded");
  }();
  return schema;
}

std::optional<double> GpuSpec::peak_flops(PeakClass peak) const {
  const auto& tflops = peak_tflops[static_cast<std::size_t>(peak)];
  if (!tflops) return std::nullopt;
  return *tflops * 1e12;
}

std::optional<PeakClass> GpuSpec::matrix_peak_class(DType type) const {
  for (const auto& peak : info(type).matrix_peaks) {
    if (peak && peak_tflops[static_cast<std::size_t>(*peak)]) return peak;
  }
  return std::nullopt;
}

std::optional<double> GpuSpec::matrix_peak_flops(DType type) const {
  if (auto peak = matrix_peak_class(type)) return peak_flops(*peak);
  return std::nullopt;
}

LoadResult load_hardware_document(std::string_view text, const std::string& origin) {
  LoadResult result;
  json document;
  try {
    check_json_depth(text, origin);
  } catch (const InputError& e) {
    std::string what = e.what();
    what = what.substr(std::min(what.size(), origin.size() + 2));  // the finding names the file itself
    result.errors.push_back({HardwareFinding::Level::error, origin, "", what});
    return result;
  }
  try {
    document = parse_json_unique(text, origin);
  } catch (const DuplicateKeyError& e) {
    result.errors.push_back({HardwareFinding::Level::error, origin, e.pointer.empty() ? "/" : e.pointer,
                             fmt::format("key '{}' is given twice (the last one would win without a word)", e.key)});
    return result;
  } catch (const json::exception& e) {
    // nlohmann's message starts with "[json.exception.parse_error.101] parse error at line 3, ...";
    // a number too large for a double is out_of_range.406.
    std::string what = e.what();
    if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    result.errors.push_back({HardwareFinding::Level::error, origin, "", "malformed JSON: " + what});
    return result;
  }
  for (const SchemaViolation& v : hardware_validator().validate(document)) {
    result.errors.push_back({HardwareFinding::Level::error, origin, v.pointer.empty() ? "/" : v.pointer, v.message});
  }
  if (!result.errors.empty()) return result;
  check_source_references(document, origin, result.errors);
  check_figure_ranges(document, origin, result.errors);
  if (!result.errors.empty()) return result;
  result.spec = spec_from_document(document, origin);
  return result;
}

std::vector<HardwareFinding> check_physics(const GpuSpec& spec, double tolerance) {
  std::vector<HardwareFinding> out;
  const auto off_by = [&](double stated, double derived) { return std::abs(derived - stated) / stated > tolerance; };
  const json& memory = spec.document.at("memory");
  if (memory.contains("bus_width_bits") && memory.contains("pin_rate_gbit_s")) {
    const double bus = figure_value(memory.at("bus_width_bits"));
    const double pin = figure_value(memory.at("pin_rate_gbit_s"));
    const double derived_tbps = bus * pin / 8.0 / 1000.0;
    if (off_by(spec.memory_bandwidth_tbps, derived_tbps)) {
      out.push_back(
          {HardwareFinding::Level::warning, spec.origin, "/memory/bandwidth_tbps",
           fmt::format("states {:.4g} TB/s; bus width x pin rate gives {:.4g} TB/s ({} bits x {} Gbit/s / 8), "
                       "{:+.1f}%",
                       spec.memory_bandwidth_tbps, derived_tbps, bus, pin,
                       100.0 * (derived_tbps / spec.memory_bandwidth_tbps - 1.0))});
    }
  }
  const json& peaks = spec.document.at("peak_tflops");
  for (const auto& [key, figure] : peaks.items()) {
    if (!figure.contains("ops_per_clock_per_unit")) continue;
    const double per_clock = figure.at("ops_per_clock_per_unit").get<double>();
    const double stated = figure_value(figure);
    const double derived = spec.units * spec.boost_clock_mhz * 1e6 * per_clock / 1e12;
    if (off_by(stated, derived)) {
      out.push_back({HardwareFinding::Level::warning, spec.origin, "/peak_tflops/" + key,
                     fmt::format("states {:.4g} TFLOP/s; {} {}s x {} MHz x {} ops/clock gives {:.4g} TFLOP/s, {:+.1f}%",
                                 stated, spec.units, spec.unit_name, spec.boost_clock_mhz, per_clock, derived,
                                 100.0 * (derived / stated - 1.0))});
    }
  }
  return out;
}

HardwareSearch HardwareSearch::from_flag_and_environment(const std::optional<std::string>& flag_dir) {
  HardwareSearch search;
  if (const char* env = std::getenv("ROOFLINE_HARDWARE_PATH"); env != nullptr && *env != '\0') {
    for (const std::string& dir : split(env, ':')) {
      if (!dir.empty()) search.directories.emplace_back(dir);
    }
  }
  if (flag_dir) search.directories.emplace_back(*flag_dir);
  return search;
}

void HardwareRegistry::add(GpuSpec spec) {
  add_entry(std::move(spec), {});
}

void HardwareRegistry::add_entry(GpuSpec spec, std::string_view unparsed) {
  const auto same_id = std::find_if(gpus_.begin(), gpus_.end(), [&](const GpuSpec& g) { return g.id == spec.id; });
  if (same_id != gpus_.end()) {
    notes_.push_back(fmt::format("{} replaces {} (same id '{}')", spec.origin, same_id->origin, spec.id));
    unparsed_[static_cast<std::size_t>(same_id - gpus_.begin())] = unparsed;
    *same_id = std::move(spec);
    return;
  }
  gpus_.push_back(std::move(spec));
  unparsed_.push_back(unparsed);
}

void HardwareRegistry::add_bundled(const EmbeddedFile& file) {
  const std::string origin = "bundled:" + std::string(file.path);
  if (file.id.empty()) {
    // The build found no id: parse it now, to say what is wrong with it.
    LoadResult result = load_hardware_document(file.contents, origin);
    if (!result.spec) throw std::logic_error(describe_errors(result.errors));
    add(std::move(*result.spec));
    return;
  }
  GpuSpec entry;
  entry.id = file.id;
  entry.aliases.assign(file.aliases.begin(), file.aliases.end());
  entry.origin = origin;
  add_entry(std::move(entry), file.contents);
}

const GpuSpec& HardwareRegistry::loaded(std::size_t index) const {
  GpuSpec& gpu = gpus_[index];
  if (unparsed_[index].empty()) return gpu;
  LoadResult result = load_hardware_document(unparsed_[index], gpu.origin);
  if (!result.spec) throw std::logic_error(describe_errors(result.errors));
  if (result.spec->id != gpu.id || result.spec->aliases != gpu.aliases) {
    throw std::logic_error(gpu.origin + ": id or aliases differ from the build's index; rebuild");
  }
  gpu = std::move(*result.spec);
  unparsed_[index] = {};
  return gpu;
}

const std::vector<GpuSpec>& HardwareRegistry::all() const {
  for (std::size_t i = 0; i < gpus_.size(); ++i) static_cast<void>(loaded(i));
  return gpus_;
}

HardwareRegistry HardwareRegistry::load(const HardwareSearch& search) {
  HardwareRegistry registry;
  for (const EmbeddedFile& file : bundled_hardware_files()) {
    if (!file.path.ends_with("schema.json")) registry.add_bundled(file);
  }
  for (const std::filesystem::path& dir : search.directories) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      throw InputError(fmt::format("hardware directory {}: not a readable directory", dir.string()));
    }
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".json" && entry.path().filename() != "schema.json")
        files.push_back(entry.path());
    }
    if (ec) throw InputError(fmt::format("hardware directory {}: {}", dir.string(), ec.message()));
    std::sort(files.begin(), files.end());
    std::set<std::string> ids_in_dir;
    for (const auto& path : files) {
      LoadResult result = load_hardware_document(read_input_file(path), path.string());
      if (!result.spec) throw InputError(describe_errors(result.errors));
      if (!ids_in_dir.insert(result.spec->id).second) {
        throw InputError(
            fmt::format("{}: id '{}' is defined twice in {}", path.string(), result.spec->id, dir.string()));
      }
      registry.add(std::move(*result.spec));
    }
  }
  // A name must lead to one GPU only (the index entries carry their names, so nothing is parsed).
  std::map<std::string, std::string> owner;
  for (const GpuSpec& gpu : registry.gpus_) owner.emplace(gpu.id, gpu.id);
  for (const GpuSpec& gpu : registry.gpus_) {
    for (const std::string& alias : gpu.aliases) {
      auto [it, inserted] = owner.emplace(alias, gpu.id);
      if (!inserted && it->second != gpu.id) {
        throw InputError(fmt::format("{}: alias '{}' already names '{}'", gpu.origin, alias, it->second));
      }
    }
  }
  return registry;
}

const GpuSpec& HardwareRegistry::find(std::string_view name) const {
  const std::string wanted = to_lower(name);
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    if (gpus_[i].id == wanted) return loaded(i);
  }
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    const std::vector<std::string>& aliases = gpus_[i].aliases;
    if (std::find(aliases.begin(), aliases.end(), wanted) != aliases.end()) return loaded(i);
  }
  std::vector<std::string> names;
  for (const GpuSpec& gpu : gpus_) {
    names.push_back(gpu.id);
    names.insert(names.end(), gpu.aliases.begin(), gpu.aliases.end());
  }
  std::string message = fmt::format("unknown GPU '{}'", name);
  if (auto guess = closest_match(wanted, names)) message += fmt::format(" (did you mean '{}'?)", *guess);
  message += "; `roofline hw list` shows the known GPUs";
  throw InputError(message);
}

std::vector<const GpuSpec*> HardwareRegistry::resolve_list(std::string_view list) const {
  std::vector<const GpuSpec*> out;
  if (to_lower(list) == "all") {
    for (const GpuSpec& gpu : all()) out.push_back(&gpu);
    return out;
  }
  for (const std::string& name : split(list, ',')) {
    if (name.empty()) throw InputError(fmt::format("--gpu: empty name in '{}'", list));
    const GpuSpec* gpu = &find(name);
    if (std::find(out.begin(), out.end(), gpu) == out.end()) out.push_back(gpu);
  }
  return out;
}

GpuSpec apply_overrides(const GpuSpec& spec, std::span<const std::string> assignments) {
  if (assignments.empty()) return spec;
  json document = spec.document;
  std::string origin = spec.origin;
  std::map<std::string, std::string> set_by;  // pointer -> the assignment that set it
  for (const std::string& assignment : assignments) {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError(fmt::format("--set '{}': expected KEY=VALUE, e.g. --set hbm_bandwidth_tbps=8", assignment));
    }
    const std::string key = to_lower(assignment.substr(0, eq));
    const std::string text = assignment.substr(eq + 1);
    const std::optional<double> parsed = parse_decimal(text);
    const double value = parsed.value_or(0);
    if (!parsed || !std::isfinite(value) || value <= 0) {
      throw InputError(fmt::format("--set {}: '{}' is not a positive finite number", key, text));
    }

    std::vector<std::pair<std::string, std::string>> figures;
    collect_figures(document, "", "", figures);
    std::string pointer;
    std::string dotted = key;
    if (key == "hbm_bandwidth_tbps" || key == "memory_bandwidth_tbps") dotted = "memory.bandwidth_tbps";
    if (key.ends_with("_tflops") && peak_class_from_name(key.substr(0, key.size() - 7))) {
      dotted = "peak_tflops." + key.substr(0, key.size() - 7);
    }
    for (const auto& [path, ptr] : figures) {
      if (path == dotted) pointer = ptr;
    }
    if (pointer.empty() && dotted.starts_with("peak_tflops.") && peak_class_from_name(dotted.substr(12))) {
      pointer = "/peak_tflops/" + dotted.substr(12);  // a peak the file does not state yet
    }
    if (pointer.empty()) {
      std::vector<std::string> matches;
      for (const auto& [path, ptr] : figures) {
        if (path == dotted || path.ends_with("." + dotted)) matches.push_back(path);
      }
      if (matches.size() > 1) {
        throw InputError(fmt::format("--set {}: ambiguous, say one of {}", key, fmt::join(matches, ", ")));
      }
      if (matches.empty()) {
        std::vector<std::string> names;
        std::vector<std::string> candidates;  // full paths and their last components
        for (const auto& [path, ptr] : figures) {
          names.push_back(path);
          candidates.push_back(path);
          candidates.push_back(path.substr(path.rfind('.') + 1));
        }
        std::string message = fmt::format("--set {}: {} has no figure of that name", key, spec.id);
        if (auto guess = closest_match(dotted, candidates)) message += fmt::format(" (did you mean '{}'?)", *guess);
        message += fmt::format("; figures: {}", fmt::join(names, ", "));
        throw InputError(message);
      }
      for (const auto& [path, ptr] : figures) {
        if (path == matches.front()) pointer = ptr;
      }
    }
    // Two --set of one figure (by the same or another name): the last would win without a word.
    if (const auto [earlier, first] = set_by.emplace(pointer, assignment); !first) {
      throw InputError(fmt::format("--set {}: sets {} of {}, which --set {} sets too: give each figure once",
                                   assignment, pointer, spec.id, earlier->second));
    }
    document["sources"]["command-line"] = {{"title", "roofline --set on the command line"}};
    const json::json_pointer where(pointer);
    std::string note = "set on the command line";
    if (document.contains(where)) note += fmt::format(" (file: {})", document.at(where).at("value").dump());
    json figure = {{"value", value}, {"source", "command-line"}, {"note", note}};
    if (document.contains(where) && document.at(where).contains("ops_per_clock_per_unit")) {
      figure["ops_per_clock_per_unit"] = document.at(where).at("ops_per_clock_per_unit");
    }
    document[where] = figure;
    origin += fmt::format(" with --set {}={}", key, text);
  }
  LoadResult result = load_hardware_document(document.dump(), origin);
  if (!result.spec) throw InputError(describe_errors(result.errors));
  return *result.spec;
}

}  // namespace roofline
