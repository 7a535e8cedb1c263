// roofline attainable: min(peak, intensity x bandwidth) at a given arithmetic intensity.
#include "attainable.hpp"

#include <fmt/format.h>

#include "commands.hpp"
#include "roofline/basis/basis.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/roofline.hpp"

namespace roofline::cli {
namespace {

struct AttainableRow {
  std::string gpu;
  std::string dtype;
  double intensity = 0;
  double peak_tflops = 0;
  double bandwidth_tbps = 0;
  double ridge = 0;
  Attainable point;
};

constexpr std::array<ColumnOf<AttainableRow>, 9> columns{{
    {{"gpu", "GPU", 0}, [](const AttainableRow& r) { return Cell{r.gpu}; }},
    {{"dtype", "dtype", 0}, [](const AttainableRow& r) { return Cell{r.dtype}; }},
    {{"intensity_flop_per_byte", "AI [FLOP/B]", 2}, [](const AttainableRow& r) { return Cell{r.intensity}; }},
    {{"peak_tflops", "peak [TFLOP/s]", 1}, [](const AttainableRow& r) { return Cell{r.peak_tflops}; }},
    {{"bandwidth_tbps", "HBM [TB/s]", 2}, [](const AttainableRow& r) { return Cell{r.bandwidth_tbps}; }},
    {{"ridge_flop_per_byte", "ridge [FLOP/B]", 1}, [](const AttainableRow& r) { return Cell{r.ridge}; }},
    {{"attainable_tflops", "attainable [TFLOP/s]", 2},
     [](const AttainableRow& r) { return Cell{r.point.flops / 1e12}; }},
    {{"bound", "bound", 0}, [](const AttainableRow& r) { return Cell{std::string(name_of(r.point.bound))}; }},
    {{"fraction_of_peak", "of peak", 3}, [](const AttainableRow& r) { return Cell{r.point.fraction_of_peak}; }},
}};

}  // namespace

Report run_attainable(const AttainableOptions& options, const HardwareRegistry& registry) {
  const std::vector<GpuSpec> gpus = selected_gpus(registry, options.gpus, options.what_if);
  const DType dtype = parse_dtype(options.dtype);
  const std::vector<double> intensities = parse_positive_numbers("--ai", options.intensities);

  Report report;
  report.kind = "attainable";
  report.inputs = {
      {"gpu", options.gpus}, {"dtype", name_of(dtype)}, {"ai_flop_per_byte", intensities}, {"set", options.what_if}};
  add_hardware_origins(report, gpus);

  std::vector<AttainableRow> rows;
  for (const GpuSpec& gpu : gpus) {
    const Roofs roofs = Roofs::of(gpu);
    const std::optional<PeakClass> peak_class = roofs.matrix_class(dtype);
    if (!peak_class) {
      throw InputError(fmt::format("--dtype {}: {} states no peak rate for this format", name_of(dtype), gpu.id));
    }
    const double peak = *roofs.peak(*peak_class);
    const double bandwidth = roofs.bandwidth;
    for (double ai : intensities) {
      rows.push_back({gpu.id, std::string(name_of(dtype)), ai, peak / 1e12, gpu.memory_bandwidth_tbps,
                      ridge_point(peak, bandwidth), attainable(peak, bandwidth, ai)});
    }
  }
  report.tables.push_back(Table::from_rows<AttainableRow>(
      "attainable", "Attainable FLOP/s = min(peak, AI x HBM bandwidth)", columns, rows));
  report.notes.push_back("AI counts FLOPs per byte read + written from HBM; peaks are dense");
  return report;
}

void setup_attainable_command(CLI::App& app) {
  auto options = std::make_shared<AttainableOptions>();
  CLI::App* command =
      app.add_subcommand("attainable", "Attainable FLOP/s at an arithmetic intensity: min(peak, AI x bandwidth)");
  command->add_option("--gpu", options->gpus, "GPU id or alias, a comma-separated list, or 'all'")->required();
  command->add_option("--ai", options->intensities, "Arithmetic intensity in FLOP/byte; a comma-separated list")
      ->required();
  command->add_option("--dtype", options->dtype, "Data type of the math")->capture_default_str();
  add_what_if_option(*command, options->what_if);
  add_common_options(*command, options->common);
  command->callback([options] { emit(run_attainable(*options, load_registry(options->common)), options->common); });
}

}  // namespace roofline::cli
