// roofline ridge: the arithmetic intensity where a GPU turns from memory- to compute-bound.
#include "ridge.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "commands.hpp"
#include "roofline/basis/basis.hpp"
#include "roofline/core/roofline.hpp"
#include "roofline/core/text.hpp"

namespace roofline::cli {
namespace {

struct RidgeRow {
  std::string gpu;
  int year = 0;
  std::string peak;  // the peak class used
  std::optional<double> peak_tflops;
  double bandwidth_tbps = 0;
  std::optional<double> ridge;
  std::optional<double> peak_growth;       // memory wall: x the first GPU's peak
  std::optional<double> bandwidth_growth;  // memory wall: x the first GPU's bandwidth
};

constexpr std::array<ColumnOf<RidgeRow>, 5> ridge_columns{{
    {{"gpu", "GPU", 0}, [](const RidgeRow& r) { return Cell{r.gpu}; }},
    {{"peak_class", "peak", 0}, [](const RidgeRow& r) { return Cell{r.peak}; }},
    {{"peak_tflops", "peak [TFLOP/s]", 1}, [](const RidgeRow& r) { return optional_cell(r.peak_tflops); }},
    {{"bandwidth_tbps", "HBM [TB/s]", 2}, [](const RidgeRow& r) { return Cell{r.bandwidth_tbps}; }},
    {{"ridge_flop_per_byte", "ridge [FLOP/B]", 1}, [](const RidgeRow& r) { return optional_cell(r.ridge); }},
}};

constexpr std::array<ColumnOf<RidgeRow>, 8> memory_wall_columns{{
    {{"gpu", "GPU", 0}, [](const RidgeRow& r) { return Cell{r.gpu}; }},
    {{"year", "year", 0}, [](const RidgeRow& r) { return Cell{std::int64_t{r.year}}; }},
    {{"peak_class", "peak", 0}, [](const RidgeRow& r) { return Cell{r.peak}; }},
    {{"peak_tflops", "peak [TFLOP/s]", 1}, [](const RidgeRow& r) { return optional_cell(r.peak_tflops); }},
    {{"bandwidth_tbps", "HBM [TB/s]", 2}, [](const RidgeRow& r) { return Cell{r.bandwidth_tbps}; }},
    {{"ridge_flop_per_byte", "ridge [FLOP/B]", 1}, [](const RidgeRow& r) { return optional_cell(r.ridge); }},
    {{"peak_growth", "peak x", 1}, [](const RidgeRow& r) { return optional_cell(r.peak_growth); }},
    {{"bandwidth_growth", "HBM x", 1}, [](const RidgeRow& r) { return optional_cell(r.bandwidth_growth); }},
}};

RidgeRow make_row(const GpuSpec& gpu, std::optional<PeakClass> peak) {
  RidgeRow row{gpu.id,
               gpu.release_year,
               peak ? std::string(name_of(*peak)) : "-",
               std::nullopt,
               gpu.memory_bandwidth_tbps,
               std::nullopt,
               std::nullopt,
               std::nullopt};
  const Roofs roofs = Roofs::of(gpu);
  if (peak) {
    if (auto flops = roofs.peak(*peak)) {
      row.peak_tflops = *flops / 1e12;
      row.ridge = ridge_point(*flops, roofs.bandwidth);
    }
  }
  return row;
}

// The 16-bit tensor rate: bf16, or fp16 where the GPU has no bf16 (V100).
std::optional<PeakClass> sixteen_bit_peak(const Roofs& roofs) {
  if (roofs.peak(PeakClass::bf16)) return PeakClass::bf16;
  if (roofs.peak(PeakClass::fp16)) return PeakClass::fp16;
  return std::nullopt;
}

}  // namespace

Report run_ridge(const RidgeOptions& options, const HardwareRegistry& registry) {
  std::vector<GpuSpec> gpus = selected_gpus(registry, options.gpus, options.what_if);
  const bool memory_wall = to_lower(options.gpus) == "all";
  const std::optional<DType> dtype = options.dtype ? std::optional(parse_dtype(*options.dtype)) : std::nullopt;

  Report report;
  report.kind = "ridge";
  report.inputs = {{"gpu", options.gpus},
                   {"dtype", options.dtype ? nlohmann::json(name_of(*dtype)) : nullptr},
                   {"set", options.what_if}};
  add_hardware_origins(report, gpus);

  std::vector<RidgeRow> rows;
  if (memory_wall) {
    std::stable_sort(gpus.begin(), gpus.end(),
                     [](const GpuSpec& a, const GpuSpec& b) { return a.release_year < b.release_year; });
    for (const GpuSpec& gpu : gpus) {
      const Roofs roofs = Roofs::of(gpu);
      rows.push_back(make_row(gpu, dtype ? roofs.matrix_class(*dtype) : sixteen_bit_peak(roofs)));
    }
    const auto first =
        std::find_if(rows.begin(), rows.end(), [](const RidgeRow& r) { return r.peak_tflops.has_value(); });
    if (first != rows.end()) {
      for (RidgeRow& row : rows) {
        if (row.peak_tflops) row.peak_growth = *row.peak_tflops / *first->peak_tflops;
        row.bandwidth_growth = row.bandwidth_tbps / first->bandwidth_tbps;
      }
    }
    report.tables.push_back(
        Table::from_rows<RidgeRow>("memory_wall",
                                   fmt::format("The memory wall: {} peak vs HBM bandwidth, oldest first",
                                               dtype ? name_of(*dtype) : "16-bit tensor"),
                                   memory_wall_columns, rows));
    if (!dtype) report.notes.push_back("16-bit tensor peak: bf16, or fp16 where the GPU has no bf16");
    report.notes.push_back("growth columns are relative to the oldest GPU with a peak in this format");
  } else {
    for (const GpuSpec& gpu : gpus) {
      const Roofs roofs = Roofs::of(gpu);
      if (dtype) {
        rows.push_back(make_row(gpu, roofs.matrix_class(*dtype)));
        continue;
      }
      for (std::size_t i = 0; i < peak_class_names.size(); ++i) {
        const auto peak = static_cast<PeakClass>(i);
        if (roofs.peak(peak)) rows.push_back(make_row(gpu, peak));
      }
    }
    report.tables.push_back(Table::from_rows<RidgeRow>(
        "ridge", "Ridge point: peak / HBM bandwidth (FLOP per byte moved, read + write)", ridge_columns, rows));
  }
  for (const RidgeRow& row : rows) {
    if (!row.ridge)
      report.notes.push_back(fmt::format("{} states no peak for {}", row.gpu, options.dtype.value_or("16-bit")));
  }
  report.notes.push_back("peaks are dense (no 2:4 sparsity); 1 TB/s = 1e12 B/s");
  return report;
}

void setup_ridge_command(CLI::App& app) {
  auto options = std::make_shared<RidgeOptions>();
  CLI::App* command = app.add_subcommand(
      "ridge", "Ridge point (FLOP/byte) per data type; --gpu all prints the memory wall across generations");
  command->add_option("--gpu", options->gpus, "GPU id or alias, a comma-separated list, or 'all'")->required();
  command->add_option("--dtype", options->dtype,
                      "Data type (bf16, fp8, fp64, ...); default: every type the GPU states");
  add_what_if_option(*command, options->what_if);
  add_common_options(*command, options->common);
  command->callback([options] { emit(run_ridge(*options, load_registry(options->common)), options->common); });
}

}  // namespace roofline::cli
