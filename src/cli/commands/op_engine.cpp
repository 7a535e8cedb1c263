// The machinery every op subcommand shares (op_engine.hpp): its setup from the common flags, the
// time of an operation on a GPU's roofs, and the notes.
#include "op_engine.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "roofline/core/error.hpp"

namespace roofline::cli {

namespace op_detail {

namespace {

// The vector (CUDA-core) rates a hardware file states are fp64 and fp32; the others are
// tensor-core rates.
constexpr bool is_vector_peak(PeakClass peak) {
  return peak == PeakClass::fp64 || peak == PeakClass::fp32;
}

}  // namespace

std::string_view binding_name(const std::optional<PeakClass>& peak, Bound bound) {
  if (bound == Bound::memory || !peak) return "HBM bandwidth";
  // Built once: rows hold views of these texts.
  static const std::array<std::string, peak_class_names.size()> names = [] {
    std::array<std::string, peak_class_names.size()> built;
    for (std::size_t i = 0; i < built.size(); ++i) {
      const auto p = static_cast<PeakClass>(i);
      built[i] = fmt::format("{} {} peak", name_of(p), is_vector_peak(p) ? "vector" : "tensor");
    }
    return built;
  }();
  return names[static_cast<std::size_t>(*peak)];
}

Timing time_on(const OpCost& cost, const Roofs& roofs, const MathRoof& math,
               const std::optional<Efficiency>& efficiency) {
  Timing t;
  t.cost = cost;
  t.roofs = &roofs;
  t.peak = math.resolve(roofs);
  if (t.has_peak()) {
    t.time = roofline_time(cost, t.peak_flops(), roofs.bandwidth);
    if (efficiency) t.expected_s = expected_time_s(t.time, *efficiency);
  } else {
    t.time.memory_s = cost.bytes() / roofs.bandwidth;
  }
  return t;
}

const Calibration* OpSetup::calibration_for(std::string_view gpu_id) const {
  for (const CalibrationChoice& choice : calibrations) {
    if (choice.flag != auto_calibration_flag || choice.gpu == gpu_id) {
      return choice.calibration ? &*choice.calibration : nullptr;
    }
  }
  return nullptr;
}

void apply_calibration(Timing& t, const OpSetup& setup, const Basis& basis) {
  if (!setup.calibrated()) return;
  const Calibration* calibration = setup.calibration_for(t.roofs->gpu_id);
  if (calibration == nullptr) {
    t.expected_s = 0;
    t.calibration_note = "--calibration auto: no calibration of this GPU's architecture (roofline only)";
    return;
  }
  CalibratedOrNot c = calibrated_time(*calibration, basis, *t.roofs);
  if (CalibratedTime* found = std::get_if<CalibratedTime>(&c)) {
    t.expected_s = found->time_s;
    if (found->clamped) t.calibration_note = found->detail;
    t.calibrated = std::move(*found);
  } else {
    t.expected_s = 0;
    t.calibration_note = std::move(std::get<NotCalibrated>(c).reason);
  }
}

OpSetup setup_op(std::string kind, const OpCommonOptions& options, const HardwareRegistry& registry) {
  OpSetup setup;
  setup.format = parse_format(options.common.format);
  setup.gpus = SelectedGpus(registry, options.gpus, options.what_if);
  for (const GpuSpec& gpu : setup.gpus) setup.roofs.push_back(Roofs::of(gpu));
  if (options.efficiency && options.calibration) {
    throw InputError("--efficiency and --calibration both set the expected time: give one of them");
  }
  if (options.efficiency) setup.efficiency = parse_efficiency(*options.efficiency);
  if (options.calibration) {
    // A file is one GPU's: loaded once. Auto resolves each GPU's own (from the hardware files as
    // bundled: --set what-ifs change the roofs a calibration is applied on, not which one applies).
    const bool per_gpu = *options.calibration == auto_calibration_flag;
    for (const GpuSpec& gpu : setup.gpus) {
      setup.calibrations.push_back(choose_calibration(*options.calibration, registry.find(gpu.id), registry));
      if (!per_gpu) break;
    }
  }
  setup.report.kind = std::move(kind);
  nlohmann::json efficiency = nullptr;
  if (setup.efficiency) efficiency = {{"compute", setup.efficiency->compute}, {"memory", setup.efficiency->memory}};
  setup.report.inputs = {{"gpu", options.gpus},
                         {"dtype", options.dtype},
                         {"set", options.what_if},
                         {"efficiency", efficiency},
                         {"calibration", options.calibration ? nlohmann::json(*options.calibration) : nullptr}};
  add_hardware_origins(setup.report, setup.gpus);
  nlohmann::json blocks = nlohmann::json::array();
  for (const CalibrationChoice& choice : setup.calibrations) {
    blocks.push_back(calibration_block(choice));
    if (!choice.calibration) {
      setup.report.notes.push_back(choice.note);
      continue;
    }
    setup.report.notes.push_back(fmt::format(
        "expected: calibrated with {} ({}); error band: {}: the roofline time divided by the efficiency the best "
        "implementation measured reached at this size (its table), interpolated in log(size) and clamped at the ends "
        "(past a series' own sizes, where its table says so, carried on by its neighbouring series' trend) and no "
        "faster than the table's fastest measured problem where it keeps that floor",
        choice.calibration->file, choice.note, choice.band));
    if (choice.flag == auto_calibration_flag) continue;
    for (const GpuSpec& gpu : setup.gpus) {
      if (gpu.id != choice.calibration->gpu_id) {
        setup.report.notes.push_back(fmt::format("{}: the calibration is for {}, so its expected time is left empty",
                                                 gpu.id, choice.calibration->gpu_id));
      }
    }
  }
  if (!setup.calibrations.empty()) setup.report.extra_results["calibration"] = std::move(blocks);
  return setup;
}

void check_report_rows(std::uint64_t rows) {
  if (rows > max_report_rows) {
    throw InputError(
        fmt::format("the sweep gives {} rows; table and JSON output hold at most {} "
                    "(use --format csv, which streams any number)",
                    rows, max_report_rows));
  }
}

void add_roof_notes(Report& report, std::span<const Roofs> roofs, const MathRoof& math, std::string_view math_text) {
  report.notes.push_back(fmt::format(
      "time >= max(FLOPs / peak, bytes / HBM bandwidth) with the {}; bytes = read + written; 1 TB/s = 1e12 B/s; "
      "peaks are dense (no 2:4 sparsity)",
      math_text));
  for (const Roofs& gpu : roofs) {
    if (!math.resolve(gpu)) {
      report.notes.push_back(
          fmt::format("{} states no peak for this math: its peak and time columns are empty", gpu.gpu_id));
    }
  }
}

void add_dtype_notes(Report& report, std::initializer_list<DType> types) {
  std::vector<DType> seen;
  for (DType type : types) {
    if (std::find(seen.begin(), seen.end(), type) != seen.end()) continue;
    seen.push_back(type);
    const DTypeInfo& i = info(type);
    if (i.block_elements == 0) continue;
    report.notes.push_back(
        fmt::format("{} counts {:g} bits per element: {:g} of payload and a {:g}-bit scale per {} "
                    "elements",
                    i.name, i.bytes_per_element() * 8, i.element_bits, i.scale_bits_per_block, i.block_elements));
  }
}

void write_notes(std::ostream& notes, const Report& report) {
  for (const std::string& note : report.notes) notes << "roofline: note: " << note << '\n';
}

std::int64_t max_of(const std::vector<std::int64_t>& values) {
  return *std::max_element(values.begin(), values.end());
}

std::int64_t min_of(const std::vector<std::int64_t>& values) {
  return *std::min_element(values.begin(), values.end());
}

}  // namespace op_detail

}  // namespace roofline::cli
