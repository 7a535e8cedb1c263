// Bundled calibrations and their transfer to another GPU of the same architecture (the rules:
// roofline/basis/calibration_transfer.hpp, derived in docs/calibration.md).
#include "roofline/basis/calibration_transfer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

#include "roofline/core/embedded_file.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/json_schema.hpp"

namespace roofline {

// calibrations/*.json and calibrations/transfer/bands.json (src/CMakeLists.txt embeds them).
std::span<const EmbeddedFile> bundled_calibration_files();
// docs/schema/transfer-bands.v1.schema.json among the schemas embedded with the calibration's.
std::span<const EmbeddedFile> bundled_schema_files();

namespace {

constexpr std::string_view calibration_folder = "calibrations/";
constexpr std::string_view bands_path = "calibrations/transfer/bands.json";

// The GPU id of a bundled calibration file ("calibrations/h200-sxm.json"), or "" for another file.
std::string_view gpu_of_path(std::string_view path) {
  if (!path.starts_with(calibration_folder) || !path.ends_with(".json")) return {};
  const std::string_view name = path.substr(calibration_folder.size(), path.size() - calibration_folder.size() - 5);
  return name.find('/') == std::string_view::npos ? name : std::string_view{};
}

double log_distance(double a, double b) {
  if (!(a > 0) || !(b > 0)) return 0;
  return std::abs(std::log(a / b));
}

// How far two GPUs of one architecture are apart: bandwidth, SMs, clock, and the peaks both state.
double distance(const GpuSpec& a, const GpuSpec& b) {
  double d = log_distance(a.memory_bandwidth_tbps, b.memory_bandwidth_tbps) + log_distance(a.units, b.units) +
             log_distance(a.boost_clock_mhz, b.boost_clock_mhz);
  double peaks = 0;
  int common = 0;
  for (std::size_t i = 0; i < peak_class_names.size(); ++i) {
    if (a.peak_tflops[i] && b.peak_tflops[i]) {
      peaks += log_distance(*a.peak_tflops[i], *b.peak_tflops[i]);
      ++common;
    }
  }
  return common > 0 ? d + peaks / common : d;
}

// The roofline time of a point's problem on `roofs`; nullopt when its peak class is not stated there.
std::optional<double> problem_time(const CalibrationPoint::Problem& p, const Roofs& roofs) {
  double compute_s = 0;
  if (p.peak && p.flops > 0) {
    const std::optional<double> peak = roofs.peak(*p.peak);
    if (!peak) return std::nullopt;
    compute_s = p.flops / *peak;
  }
  return std::max(compute_s, p.roof_bytes / roofs.bandwidth);
}

bool same_series(const CalibrationPoint& a, const CalibrationPoint& b) {
  return a.series.value_or(0) == b.series.value_or(0);
}

// The best efficiency of the point's curve (its table at its series).
double best_of_curve(const CalibrationTable& table, const CalibrationPoint& point) {
  double best = 0;
  for (const CalibrationPoint& p : table.points) {
    if (same_series(p, point)) best = std::max(best, p.efficiency);
  }
  return best;
}

std::optional<double> scaled(const std::optional<double>& value, double ratio) {
  if (!value || !(ratio > 0)) return std::nullopt;
  return *value * ratio;
}

MeasuredCeilings transfer_ceilings(const MeasuredCeilings& c, const Roofs& from, const Roofs& to,
                                   const GpuSpec& from_gpu, const GpuSpec& to_gpu) {
  MeasuredCeilings out;
  out.stream_bytes_per_s = scaled(c.stream_bytes_per_s, to.bandwidth / from.bandwidth);
  out.stream_benchmark = c.stream_benchmark;
  // On-chip bandwidth is a per-SM rate at the SM clock.
  const double on_chip = (to_gpu.units * to_gpu.boost_clock_mhz) / (from_gpu.units * from_gpu.boost_clock_mhz);
  out.l2_bytes_per_s = scaled(c.l2_bytes_per_s, on_chip);
  out.smem_bytes_per_s = scaled(c.smem_bytes_per_s, on_chip);
  for (std::size_t i = 0; i < out.peaks.size(); ++i) {
    if (from.peaks[i] && to.peaks[i]) out.peaks[i] = scaled(c.peaks[i], *to.peaks[i] / *from.peaks[i]);
  }
  return out;
}

std::string link_text(const GpuSpec& gpu) {
  if (!gpu.scale_up_bidir_gbps) return "no scale-up link";
  return fmt::format("{} at {:g} GB/s", gpu.scale_up_name, *gpu.scale_up_bidir_gbps);
}

bool same_link(const GpuSpec& a, const GpuSpec& b) {
  return a.scale_up_bidir_gbps && b.scale_up_bidir_gbps && *a.scale_up_bidir_gbps == *b.scale_up_bidir_gbps &&
         a.scale_up_name == b.scale_up_name;
}

const nlohmann::json& bands_document() {
  static const nlohmann::json document = [] {
    std::optional<SchemaValidator> validator;
    for (const EmbeddedFile& file : bundled_schema_files()) {
      if (file.path.ends_with("transfer-bands.v1.schema.json")) validator.emplace(nlohmann::json::parse(file.contents));
    }
    if (!validator) throw std::logic_error("docs/schema/transfer-bands.v1.schema.json is not embedded");
    for (const EmbeddedFile& file : bundled_calibration_files()) {
      if (file.path != bands_path) continue;
      nlohmann::json bands = nlohmann::json::parse(file.contents);
      const std::vector<SchemaViolation> violations = validator->validate(bands);
      if (!violations.empty()) {
        throw std::logic_error(
            fmt::format("bundled {}: {} {}", bands_path, violations.front().pointer, violations.front().message));
      }
      return bands;
    }
    throw std::logic_error(fmt::format("{} is not embedded", bands_path));
  }();
  return document;
}

}  // namespace

bool same_architecture(const GpuSpec& a, const GpuSpec& b) {
  return a.vendor == b.vendor && a.architecture == b.architecture;
}

Calibration transfer_calibration(const Calibration& source, const GpuSpec& source_gpu, const GpuSpec& target) {
  Calibration out;
  out.gpu_id = target.id;
  out.gpu_name = target.name;
  out.hardware_origin = target.origin;
  out.roofs = Roofs::of(target);
  out.sources = source.sources;
  out.file = source.file;
  TransferOrigin origin{source.gpu_id, source.file, 0, 0, ""};
  // Fixed costs run at the SM clock.
  const double clock_ratio = source_gpu.boost_clock_mhz / target.boost_clock_mhz;
  for (const auto& [name, table] : source.tables) {
    // Everything but the points comes along as it is (the axis, and the rule past a series' ends
    // that the source's leave-one-out chose); the points are re-expressed below.
    CalibrationTable moved = table;
    moved.points.clear();
    moved.prepared.reset();
    for (const CalibrationPoint& p : table.points) {
      const std::optional<double> x = p.problem ? problem_time(*p.problem, out.roofs) : std::nullopt;
      if (!x || !(*x > 0)) {
        ++origin.points_dropped;
        continue;
      }
      const double best = best_of_curve(table, p);
      const double fixed_s = std::max(0.0, p.measured_s - p.ideal_s / best);
      const double time_s = *x / best + fixed_s * clock_ratio;
      CalibrationPoint q = p;
      q.ideal_s = *x;
      q.measured_s = time_s;
      q.efficiency = *x / time_s;
      q.loo_error.reset();  // a leave-one-out error is a measured figure of the source
      moved.points.push_back(std::move(q));
      ++origin.points;
    }
    if (moved.points.empty()) continue;
    sort_points(moved);
    out.tables.emplace(name, std::move(moved));
  }
  out.ceilings = transfer_ceilings(source.ceilings, source.roofs, out.roofs, source_gpu, target);
  if (source.collectives.empty()) {
    origin.collectives = "none measured";
  } else if (same_link(source_gpu, target)) {
    out.collectives = source.collectives;
    origin.collectives = fmt::format("transferred: the same scale-up link ({})", link_text(target));
  } else {
    origin.collectives = fmt::format("not transferred: measured over {} on {}, {} has {} (the ring model on its links)",
                                     link_text(source_gpu), source.gpu_id, target.id, link_text(target));
  }
  out.transfer = std::move(origin);
  return out;
}

std::vector<std::string> bundled_calibration_gpus() {
  std::vector<std::string> ids;
  for (const EmbeddedFile& file : bundled_calibration_files()) {
    if (const std::string_view id = gpu_of_path(file.path); !id.empty()) ids.emplace_back(id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::optional<Calibration> bundled_calibration(std::string_view gpu_id) {
  // Parsed (and validated) once per process: plan and op resolve auto once per GPU, and several
  // GPUs of one architecture transfer the same file.
  static std::mutex mutex;
  static std::map<std::string, Calibration, std::less<>> parsed;
  const std::lock_guard lock(mutex);
  if (const auto it = parsed.find(gpu_id); it != parsed.end()) return it->second;
  for (const EmbeddedFile& file : bundled_calibration_files()) {
    if (gpu_of_path(file.path) != gpu_id) continue;
    Calibration c = parse_calibration(file.contents, fmt::format("bundled:{}", file.path));
    if (c.gpu_id != gpu_id) {
      throw std::logic_error(fmt::format("bundled {} is a calibration of {}", file.path, c.gpu_id));
    }
    return parsed.emplace(std::string(gpu_id), std::move(c)).first->second;
  }
  return std::nullopt;
}

std::optional<std::string> transfer_band(std::string_view from_gpu, std::string_view to_gpu) {
  for (const nlohmann::json& band : bands_document()["bands"]) {
    if (band["from_gpu"] == from_gpu && band["to_gpu"] == to_gpu) {
      return fmt::format("{} ({})", band["summary"].get<std::string>(), band["reference"].get<std::string>());
    }
  }
  return std::nullopt;
}

std::string_view name_of(AutoCalibration::Kind kind) {
  switch (kind) {
    case AutoCalibration::Kind::measured: return "measured";
    case AutoCalibration::Kind::transferred: return "transferred";
    case AutoCalibration::Kind::none: return "none";
  }
  return "none";
}

AutoCalibration auto_calibration(const GpuSpec& gpu, const HardwareRegistry& registry) {
  AutoCalibration out;
  if (std::optional<Calibration> measured = bundled_calibration(gpu.id)) {
    out.kind = AutoCalibration::Kind::measured;
    out.band = measured->validation ? measured->validation->summary
                                    : std::string("no error band recorded (calibrate --layer-check)");
    out.note = fmt::format("--calibration auto: the bundled calibration {}", origin_text(*measured));
    out.calibration = std::move(measured);
    return out;
  }
  const GpuSpec* nearest = nullptr;
  double nearest_distance = std::numeric_limits<double>::infinity();
  const std::vector<std::string> measured_ids = bundled_calibration_gpus();
  for (const std::string& id : measured_ids) {
    const GpuSpec& candidate = registry.find(id);
    if (!same_architecture(candidate, gpu)) continue;
    const double d = distance(candidate, gpu);
    if (d < nearest_distance) {
      nearest = &candidate;
      nearest_distance = d;
    }
  }
  if (nearest == nullptr) {
    std::vector<std::string> measured;
    for (const std::string& id : measured_ids)
      measured.push_back(fmt::format("{} ({})", id, registry.find(id).architecture));
    out.note = fmt::format(
        "--calibration auto: no bundled calibration was measured on the {} architecture ({}; bundled: {}): {} keeps "
        "the roofline times",
        gpu.architecture, gpu.vendor, fmt::join(measured, ", "), gpu.id);
    out.band = "none: the roofline is a lower bound on time, not a prediction";
    return out;
  }
  const Calibration source = *bundled_calibration(nearest->id);
  out.kind = AutoCalibration::Kind::transferred;
  out.calibration = transfer_calibration(source, *nearest, gpu);
  const TransferOrigin& t = *out.calibration->transfer;
  out.band = transfer_band(nearest->id, gpu.id)
                 .value_or(fmt::format("not established yet for {} -> {} (docs/calibration.md, \"Error against "
                                       "published H100 results\")",
                                       nearest->id, gpu.id));
  out.note = fmt::format(
      "--calibration auto: none measured on {} is bundled; {} ({} points re-expressed on {}'s roofs, {} dropped; "
      "collectives {})",
      gpu.id, origin_text(*out.calibration), t.points, gpu.id, t.points_dropped, t.collectives);
  return out;
}

}  // namespace roofline
