#pragma once

#include <optional>
#include <string>
#include <vector>

#include "../common.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/plot/plot.hpp"
#include "roofline/report/report.hpp"
#include "roofline/validate/measured.hpp"

namespace roofline::cli {

struct PlotOptions {
  std::string gpu;
  std::optional<std::string> dtypes;          // comma-separated; unset: every format the GPU states
  std::vector<std::string> points;            // --point LABEL:AI:TFLOPS, model predictions
  std::vector<std::string> measured_points;   // --measured-point LABEL:AI:TFLOPS
  std::vector<std::string> ops;               // --op KIND:key=value,... (roofline/op_spec.hpp)
  std::vector<std::string> measured;          // --measured FILE: bench reports or selftest lines
  std::vector<std::string> measured_filters;  // --measured-filter TEXT: which benchmarks become markers
  std::optional<std::string> calibration;     // --calibration CAL.json: --op points at their calibrated time
  std::optional<std::string> l2_tbps;         // L2 and shared-memory roofs only when given
  std::optional<std::string> smem_tbps;
  std::optional<std::string> title;
  std::vector<std::string> what_if;  // --set
  CommonOptions common;              // --format is svg (the default), json, table or csv
};

// The chart the options describe: compute roofs from the GPU's hardware file, its memory
// bandwidth as the first memory roof; measured roofs (HBM, L2, shared memory, peaks) from
// --measured files, L2 and shared memory from the flags (which win over measured ones); points
// from --op (the model), --measured (timed benchmarks) and the point flags. `notes` receives
// what a reader should know (calibrated or not, a flag that replaced a measured roof).
struct ChartBuild {
  plot::Chart chart;
  std::vector<std::string> notes;
};
[[nodiscard]] ChartBuild build_chart(const PlotOptions& options, const GpuSpec& gpu, const HardwareRegistry& registry);
// The same with the measured runs given (options.measured is not read).
[[nodiscard]] ChartBuild build_chart(const PlotOptions& options, const GpuSpec& gpu, const HardwareRegistry& registry,
                                     std::span<const MeasuredRun> runs);
[[nodiscard]] plot::Chart make_chart(const PlotOptions& options, const GpuSpec& gpu);

// The chart's data as a report (--format json|table|csv).
[[nodiscard]] Report run_plot(const PlotOptions& options, const HardwareRegistry& registry);

// The chart as a standalone SVG document (--format svg, the default).
[[nodiscard]] std::string run_plot_svg(const PlotOptions& options, const HardwareRegistry& registry);

// A bench report's figure for --format html (the report as JSON, as validate reads it): its timed
// kernels on the roofline of the GPU it ran on.
[[nodiscard]] std::vector<Figure> bench_figures(const nlohmann::json& bench_report, const HardwareRegistry& registry);

}  // namespace roofline::cli
