// roofline plot: the roofline chart of a GPU as SVG, or the chart's data as a report.
#include "plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "roofline/basis/calibration.hpp"
#include "roofline/basis/op_spec.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/roofline.hpp"
#include "roofline/core/text.hpp"
#include "roofline/plot/report_figures.hpp"
#include "roofline/report/output_file.hpp"
#include "roofline/validate/calibrate.hpp"
#include "roofline/validate/validate.hpp"

namespace roofline::cli {
namespace {

using plot::Chart;

struct ComputeRow {
  const plot::ComputeRoof* roof = nullptr;
  double ridge = 0;  // on main memory
};

struct MemoryRow {
  const plot::MemoryRoof* roof = nullptr;
  double ridge = 0;  // under the highest compute roof
};

constexpr std::array<ColumnOf<ComputeRow>, 4> compute_columns{{
    {{"label", "compute roof", 0}, [](const ComputeRow& r) { return Cell{r.roof->label}; }},
    {{"peak_tflops", "peak [TFLOP/s]", 1}, [](const ComputeRow& r) { return Cell{r.roof->peak_flops / 1e12}; }},
    {{"ridge_flop_per_byte", "ridge [FLOP/B]", 1}, [](const ComputeRow& r) { return Cell{r.ridge}; }},
    {{"provenance", "from", 0},
     [](const ComputeRow& r) { return Cell{std::string(plot::name_of(r.roof->provenance))}; }},
}};

constexpr std::array<ColumnOf<MemoryRow>, 4> memory_columns{{
    {{"label", "memory roof", 0}, [](const MemoryRow& r) { return Cell{r.roof->label}; }},
    {{"bandwidth_tbps", "bandwidth [TB/s]", 2},
     [](const MemoryRow& r) { return Cell{r.roof->bandwidth_bytes_per_s / 1e12}; }},
    {{"ridge_flop_per_byte", "ridge [FLOP/B]", 1}, [](const MemoryRow& r) { return Cell{r.ridge}; }},
    {{"provenance", "from", 0},
     [](const MemoryRow& r) { return Cell{std::string(plot::name_of(r.roof->provenance))}; }},
}};

constexpr std::array<ColumnOf<plot::Point>, 4> point_columns{{
    {{"label", "point", 0}, [](const plot::Point& p) { return Cell{p.label}; }},
    {{"kind", "kind", 0}, [](const plot::Point& p) { return Cell{std::string(plot::name_of(p.kind))}; }},
    {{"intensity_flop_per_byte", "AI [FLOP/B]", 2}, [](const plot::Point& p) { return Cell{p.intensity}; }},
    {{"tflops", "TFLOP/s", 2}, [](const plot::Point& p) { return Cell{p.flops / 1e12}; }},
}};

// One positive finite number, or InputError naming `flag`.
double parse_one(const std::string& flag, const std::string& text) {
  const std::vector<double> values = parse_positive_numbers(flag, text);
  if (values.size() != 1) throw InputError(fmt::format("{}: '{}' is not one number", flag, text));
  return values.front();
}

// LABEL:AI:TFLOPS; the label may itself contain colons, so the numbers are read from the right.
plot::Point parse_point(std::string_view flag, const std::string& text, plot::PointKind kind) {
  const std::size_t last = text.rfind(':');
  const std::size_t middle = last == std::string::npos || last == 0 ? std::string::npos : text.rfind(':', last - 1);
  if (middle == std::string::npos || middle == 0) {
    throw InputError(fmt::format("{} '{}': expected LABEL:AI:TFLOPS, e.g. 'GEMV batch 1:1:3.35'", flag, text));
  }
  const std::string where = fmt::format("{} '{}'", flag, text);
  const double intensity = parse_one(where + " AI", text.substr(middle + 1, last - middle - 1));
  const double tflops = parse_one(where + " TFLOPS", text.substr(last + 1));
  return {text.substr(0, middle), intensity, tflops * 1e12, kind};
}

using plot::roof_label;

std::vector<PeakClass> chosen_peaks(const PlotOptions& options, const GpuSpec& gpu) {
  std::vector<PeakClass> peaks;
  if (!options.dtypes) {
    for (std::size_t i = 0; i < peak_class_names.size(); ++i) {
      const auto peak = static_cast<PeakClass>(i);
      if (gpu.peak_flops(peak)) peaks.push_back(peak);
    }
    return peaks;
  }
  for (const std::string& name : split(*options.dtypes, ',')) {
    const DType dtype = parse_dtype(name);
    const std::optional<PeakClass> peak = gpu.matrix_peak_class(dtype);
    if (!peak) {
      throw InputError(fmt::format("--dtype {}: {} states no peak rate for this format", name_of(dtype), gpu.id));
    }
    if (std::find(peaks.begin(), peaks.end(), *peak) == peaks.end()) peaks.push_back(*peak);
  }
  return peaks;
}

GpuSpec the_gpu(const PlotOptions& options, const HardwareRegistry& registry) {
  std::vector<GpuSpec> gpus = selected_gpus(registry, options.gpu, options.what_if);
  if (gpus.size() != 1) {
    throw InputError(fmt::format("--gpu {}: a chart shows one GPU; this names {}", options.gpu, gpus.size()));
  }
  return std::move(gpus.front());
}

// --measured-filter TEXT[=LABEL]: the benchmarks whose id contains TEXT, shown as LABEL.
struct MeasuredFilter {
  std::string text;
  std::string label;  // empty: the benchmark's id
};

std::vector<MeasuredFilter> split_filters(const std::vector<std::string>& values) {
  std::vector<MeasuredFilter> out;
  for (const std::string& value : values) {
    for (const std::string& piece : split(value, ',')) {
      const std::size_t eq = piece.find('=');
      MeasuredFilter f{piece.substr(0, eq), eq == std::string::npos ? std::string() : piece.substr(eq + 1)};
      if (f.text.empty() || (eq != std::string::npos && f.label.empty())) {
        throw InputError(fmt::format("--measured-filter: '{}' is not TEXT or TEXT=LABEL", piece));
      }
      out.push_back(std::move(f));
    }
  }
  return out;
}

// The first filter that keeps `id`: nullptr without filters (all are kept), nullopt when none does.
std::optional<const MeasuredFilter*> kept(std::string_view id, const std::vector<MeasuredFilter>& filters) {
  if (filters.empty()) return nullptr;
  for (const MeasuredFilter& f : filters) {
    if (id.find(f.text) != std::string_view::npos) return &f;
  }
  return std::nullopt;
}

// A roof for an L2 or shared-memory level: the flag wins over a measured ceiling, and says so.
void add_level_roof(Chart& chart, std::vector<std::string>& notes, std::string label,
                    const std::optional<std::string>& flag_value, std::string_view flag,
                    const std::optional<double>& measured) {
  if (flag_value) {
    chart.memory_roofs.push_back({label, parse_one(std::string(flag), *flag_value) * 1e12, plot::Provenance::user});
    if (measured) {
      notes.push_back(fmt::format("{} {} replaces the {} ceiling measured in the run ({:.3g} TB/s)", flag, *flag_value,
                                  label, *measured / 1e12));
    }
  } else if (measured) {
    chart.memory_roofs.push_back({std::move(label), *measured, plot::Provenance::measured});
  }
}

}  // namespace

ChartBuild build_chart(const PlotOptions& options, const GpuSpec& gpu, const HardwareRegistry& registry) {
  std::vector<MeasuredRun> runs;
  for (const std::string& file : options.measured) runs.push_back(load_measured(file));
  return build_chart(options, gpu, registry, runs);
}

ChartBuild build_chart(const PlotOptions& options, const GpuSpec& gpu, const HardwareRegistry& registry,
                       std::span<const MeasuredRun> runs) {
  ChartBuild out;
  Chart& chart = out.chart;
  chart.title = options.title.value_or(fmt::format("Roofline: {}", gpu.name));
  const std::vector<PeakClass> peaks = chosen_peaks(options, gpu);
  for (const PeakClass peak : peaks) {
    chart.compute_roofs.push_back({roof_label(peak), *gpu.peak_flops(peak), plot::Provenance::datasheet});
  }
  chart.memory_roofs.push_back({gpu.memory_type, gpu.memory_bandwidth_bytes_per_s(), plot::Provenance::datasheet});

  const std::vector<MeasuredFilter> filters = split_filters(options.measured_filters);
  if (!filters.empty() && runs.empty()) {
    throw InputError("--measured-filter: selects benchmarks of --measured files; give one");
  }
  MeasuredCeilings ceilings;
  if (!runs.empty()) {
    // The registry owns the spec; the name is kept by value only because g++ 13 takes the
    // std::nullopt argument for a temporary the reference could dangle into.
    const std::string measured_on = gpu_of_runs(runs, registry, std::nullopt).id;
    if (measured_on != gpu.id) {
      throw InputError(
          fmt::format("--measured {}: measured on {}, but the chart is of {}", runs.front().file, measured_on, gpu.id));
    }
    ceilings = measured_ceilings(runs);
    for (const PeakClass peak : peaks) {
      if (const auto& measured = ceilings.peaks[static_cast<std::size_t>(peak)]) {
        chart.compute_roofs.push_back(
            {fmt::format("{} measured", roof_label(peak)), *measured, plot::Provenance::measured});
      }
    }
    if (ceilings.stream_bytes_per_s) {
      chart.memory_roofs.push_back(
          {fmt::format("{} measured", gpu.memory_type), *ceilings.stream_bytes_per_s, plot::Provenance::measured});
    }
  }
  add_level_roof(chart, out.notes, "L2", options.l2_tbps, "--l2-tbps", ceilings.l2_bytes_per_s);
  add_level_roof(chart, out.notes, "shared memory", options.smem_tbps, "--smem-tbps", ceilings.smem_bytes_per_s);

  std::optional<Calibration> calibration;
  if (options.calibration) calibration = load_calibration(*options.calibration);
  const Roofs roofs = Roofs::of(gpu);
  for (const std::string& text : options.ops) {
    const OpSpec spec = parse_op_spec(text);
    if (!(spec.basis.cost.flops > 0)) {
      throw InputError(fmt::format("--op '{}': does no FLOPs, so a roofline chart has no place for it", text));
    }
    const IdealTime ideal = ideal_time(spec.basis, roofs);
    // Without a peak the time is the memory time alone, and FLOPs over it an absurd rate above
    // every roof (an fp4 GEMM on an H200 at 52,429 TFLOP/s): op leaves such a time empty.
    if (ideal.peak_missing) {
      throw InputError(fmt::format(
          "--op '{}': {} states no peak for this math, so the chart has no compute roof for it", text, gpu.id));
    }
    double seconds = ideal.time_s;
    std::string label = spec.label;
    if (calibration) {
      const CalibratedOrNot c = calibrated_time(*calibration, spec.basis, roofs);
      if (const CalibratedTime* t = std::get_if<CalibratedTime>(&c)) {
        seconds = t->time_s;
        label += " (calibrated)";
      } else {
        out.notes.push_back(fmt::format("--op {}: at the roofline, not calibrated ({})", spec.label,
                                        std::get<NotCalibrated>(c).reason));
      }
    }
    chart.points.push_back(
        {label, spec.basis.cost.intensity(), spec.basis.cost.flops / seconds, plot::PointKind::model});
  }
  if (!options.ops.empty()) {
    out.notes.push_back(
        calibration ? fmt::format("--op points: FLOPs / the calibrated time of {} (the roofline where none applies)",
                                  calibration->file)
                    : "--op points: the roofline's attainable FLOP/s at each operation's intensity (HBM bytes)");
  } else if (calibration) {
    throw InputError("--calibration: calibrates --op points; give one");
  }
  std::size_t markers = 0;
  for (const MeasuredRun& run : runs) {
    for (const Measurement& m : run.results) {
      const std::optional<const MeasuredFilter*> filter = kept(m.id, filters);
      if (!m.timed() || !filter) continue;
      const BasisOrReason basis = benchmark_basis(m);
      const Basis* b = std::get_if<Basis>(&basis);
      if (b == nullptr || !(b->cost.flops > 0)) continue;
      const std::string label = *filter != nullptr && !(*filter)->label.empty() ? (*filter)->label : m.id;
      chart.points.push_back(
          {label, b->cost.intensity(), b->cost.flops / m.timing->median_s, plot::PointKind::measured});
      ++markers;
    }
  }
  if (!runs.empty()) {
    if (markers == 0 && !filters.empty()) {
      throw InputError(fmt::format("--measured-filter {}: keeps no timed benchmark that does FLOPs",
                                   fmt::join(options.measured_filters, ",")));
    }
    out.notes.push_back(fmt::format(
        "--measured: {} benchmark(s) as markers at the model's FLOPs / HBM bytes (intensity) and FLOPs / median time; "
        "dashed roofs are ceilings measured in the run",
        markers));
  }
  for (const std::string& text : options.points) {
    chart.points.push_back(parse_point("--point", text, plot::PointKind::model));
  }
  for (const std::string& text : options.measured_points) {
    chart.points.push_back(parse_point("--measured-point", text, plot::PointKind::measured));
  }
  plot::validate(chart);
  return out;
}

Chart make_chart(const PlotOptions& options, const GpuSpec& gpu) {
  static const HardwareRegistry bundled = HardwareRegistry::bundled_only();
  return build_chart(options, gpu, bundled).chart;
}

Report run_plot(const PlotOptions& options, const HardwareRegistry& registry) {
  const GpuSpec gpu = the_gpu(options, registry);
  const ChartBuild build = build_chart(options, gpu, registry);
  const Chart& chart = build.chart;
  const plot::Ranges ranges = plot::auto_ranges(chart);

  Report report;
  report.kind = "plot";
  const auto optional_text = [](const std::optional<std::string>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  report.inputs = {
      {"gpu", options.gpu},
      {"dtype", optional_text(options.dtypes)},
      {"point", options.points},
      {"measured_point", options.measured_points},
      {"l2_tbps", options.l2_tbps ? nlohmann::json(parse_one("--l2-tbps", *options.l2_tbps)) : nullptr},
      {"smem_tbps", options.smem_tbps ? nlohmann::json(parse_one("--smem-tbps", *options.smem_tbps)) : nullptr},
      {"title", optional_text(options.title)},
      {"set", options.what_if},
      {"op", options.ops},
      {"measured", options.measured},
      {"measured_filter", options.measured_filters},
      {"calibration", optional_text(options.calibration)}};
  add_hardware_origins(report, {gpu});

  const double main_bandwidth = chart.memory_roofs.front().bandwidth_bytes_per_s;
  double top_peak = 0;
  std::vector<ComputeRow> compute;
  for (const plot::ComputeRoof& roof : chart.compute_roofs) {
    compute.push_back({&roof, ridge_point(roof.peak_flops, main_bandwidth)});
    top_peak = std::max(top_peak, roof.peak_flops);
  }
  std::vector<MemoryRow> memory;
  for (const plot::MemoryRoof& roof : chart.memory_roofs) {
    memory.push_back({&roof, ridge_point(top_peak, roof.bandwidth_bytes_per_s)});
  }
  report.tables.push_back(Table::from_rows<ComputeRow>(
      "compute_roofs", fmt::format("Compute roofs of {}, ridge on {}", gpu.id, chart.memory_roofs.front().label),
      compute_columns, compute));
  report.tables.push_back(Table::from_rows<MemoryRow>(
      "memory_roofs", "Memory roofs, ridge under the highest compute roof", memory_columns, memory));
  report.tables.push_back(
      Table::from_rows<plot::Point>("points", "Points", point_columns, std::span<const plot::Point>(chart.points)));
  report.extra_results["title"] = chart.title;
  report.extra_results["axes"] = {{"intensity_min_flop_per_byte", ranges.intensity_lo},
                                  {"intensity_max_flop_per_byte", ranges.intensity_hi},
                                  {"performance_min_tflops", ranges.flops_lo / 1e12},
                                  {"performance_max_tflops", ranges.flops_hi / 1e12}};
  for (const std::string& note : build.notes) report.notes.push_back(note);
  if ((!options.l2_tbps || !options.smem_tbps) && options.measured.empty()) {
    report.notes.push_back(
        "L2 and shared-memory roofs are drawn only when given (--l2-tbps, --smem-tbps) or measured (--measured)");
  }
  report.notes.push_back("peaks are dense (no 2:4 sparsity); bandwidth counts bytes read + written; 1 TB/s = 1e12 B/s");
  return report;
}

std::string run_plot_svg(const PlotOptions& options, const HardwareRegistry& registry) {
  const ChartBuild build = build_chart(options, the_gpu(options, registry), registry);
  for (const std::string& note : build.notes) std::cerr << "roofline: note: " << note << '\n';
  const plot::Layout layout = plot::layout_chart(build.chart);
  if (!layout.unplaced.empty()) std::cerr << "roofline: note: " << plot::unplaced_summary(layout) << '\n';
  return plot::render_svg(layout);
}

std::vector<Figure> bench_figures(const nlohmann::json& bench_report, const HardwareRegistry& registry) {
  const std::vector<MeasuredRun> runs{measured_from_bench_report(bench_report, "this run")};
  const GpuSpec& gpu = gpu_of_runs(runs, registry, std::nullopt);
  PlotOptions options;
  options.gpu = gpu.id;
  const ChartBuild build = build_chart(options, gpu, registry, runs);
  if (build.chart.points.empty()) return {};
  const plot::Layout layout = plot::layout_chart(build.chart);
  std::string caption =
      "Every timed benchmark that does FLOPs at the model's FLOPs / HBM bytes and FLOPs / its median time; dashed "
      "roofs are the ceilings this run measured. The filter box keeps the markers whose name matches.";
  if (!layout.unplaced.empty()) caption += " " + plot::unplaced_summary(layout) + ".";
  return {{"roofline", fmt::format("Measured kernels on the roofline of {}", gpu.name),
           plot::inline_svg(plot::render_svg(layout)), std::move(caption)}};
}

void setup_plot_command(CLI::App& app) {
  auto options = std::make_shared<PlotOptions>();
  CLI::App* command = app.add_subcommand(
      "plot", "Roofline chart (SVG): compute roofs per data type, memory roofs, ridge points and your points");
  command->add_option("--gpu", options->gpu, "GPU id or alias")->required();
  command->add_option("--dtype", options->dtypes,
                      "Data types whose compute roofs to draw, comma-separated (bf16,fp8,...); "
                      "default: every peak the GPU states");
  command->add_option("--point", options->points,
                      "A model point LABEL:AI:TFLOPS (AI in FLOP/byte read + written), repeatable");
  command->add_option("--measured-point", options->measured_points,
                      "A measured kernel LABEL:AI:TFLOPS, drawn as a marker distinct from model points; repeatable");
  command->add_option("--op", options->ops,
                      "A point from the operation model, KIND:key=value,... e.g. gemm:m=4096,n=4096,k=4096 or "
                      "attention:heads=64,kv_heads=8,head_dim=128,seq=4096,causal (keys: the op flags; label=TEXT "
                      "last); repeatable");
  command->add_option("--measured", options->measured,
                      "A bench JSON report (or compute selftest JSON lines) of this GPU: its timed kernels as markers, "
                      "its measured ceilings (HBM, L2, shared memory, peaks) as dashed roofs; repeatable");
  command->add_option("--measured-filter", options->measured_filters,
                      "Only the --measured benchmarks whose id contains one of these texts (comma-separated); "
                      "TEXT=LABEL also names their markers");
  command->add_option("--calibration", options->calibration,
                      "A calibration file: --op points at their calibrated expected time instead of the roofline");
  command->add_option("--l2-tbps", options->l2_tbps, "Draw an L2 roof at this bandwidth [TB/s, read + write]");
  command->add_option("--smem-tbps", options->smem_tbps,
                      "Draw a shared-memory roof at this bandwidth [TB/s, read + write, whole GPU]");
  command->add_option("--title", options->title, "Chart title; default: 'Roofline: <GPU name>'");
  add_what_if_option(*command, options->what_if);
  add_common_options(*command, options->common);
  // The chart itself is the default output; the report formats give its data.
  command->remove_option(command->get_option("--format"));
  options->common.format = "svg";
  command
      ->add_option("--format", options->common.format,
                   "Output: svg (default, the chart), the chart's data as json, table, csv or markdown, or html "
                   "(the chart and its data on one page)")
      ->check(CLI::IsMember({"svg", "json", "table", "csv", "markdown", "html"}, CLI::ignore_case))
      ->group("Output");
  command->callback([options] {
    const HardwareRegistry registry = load_registry(options->common);
    if (to_lower(options->common.format) != "svg") {
      Report report = run_plot(*options, registry);
      if (draws_figures(options->common)) {
        report.figures.push_back({"roofline", report.extra_results.at("title").get<std::string>(),
                                  plot::inline_svg(run_plot_svg(*options, registry)),
                                  "The chart roofline plot draws; its roofs and points are the tables below."});
      }
      emit(report, options->common);
      return;
    }
    const std::string svg = run_plot_svg(*options, registry);
    if (options->common.output) {
      write_file_atomically(*options->common.output, svg);
    } else {
      write_to_stdout(svg);
    }
  });
}

}  // namespace roofline::cli
