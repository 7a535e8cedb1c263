// roofline profile -- CMD ARGS: runs Nsight Compute on a program and places each of its kernels
// on the roofline: FLOP/s per pipe, bytes per memory level, intensity, bound, % of the roof.
// See docs/profile.md.
#include "profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <regex>
#include <sstream>

#include "commands.hpp"
#include "roofline/bench/bench.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"
#include "roofline/plot/plot.hpp"
#include "roofline/profile/ncu_run.hpp"
#include "roofline/profile/placement.hpp"
#include "roofline/report/output_file.hpp"

namespace roofline::cli {
namespace {

using ncu::Placement;

std::optional<double> rate(const std::optional<double>& bytes, double seconds) {
  return bytes ? std::optional(*bytes / seconds) : std::nullopt;
}

std::optional<double> ratio(double flops, const std::optional<double>& bytes) {
  if (!bytes || !(*bytes > 0) || !(flops > 0)) return std::nullopt;
  return flops / *bytes;
}

constexpr std::array<ColumnOf<Placement>, 29> kernel_columns{{
    {{"id", "ID", 0}, [](const Placement& p) { return Cell{p.kernel->id}; }},
    {{"kernel", "kernel", 0}, [](const Placement& p) { return Cell{p.kernel->short_name}; }},
    {{"name", "name", 0}, [](const Placement& p) { return Cell{p.kernel->name}; }},
    {{"grid", "grid", 0}, [](const Placement& p) { return Cell{p.kernel->grid}; }},
    {{"block", "block", 0}, [](const Placement& p) { return Cell{p.kernel->block}; }},
    {{"duration_us", "time [us]", 2}, [](const Placement& p) { return Cell{p.kernel->duration_s * 1e6}; }},
    {{"flops", "FLOPs", 0}, [](const Placement& p) { return Cell{p.kernel->flops()}; }},
    {{"tflops", "TFLOP/s", 2},
     [](const Placement& p) { return Cell{p.kernel->flops() / p.kernel->duration_s / 1e12}; }},
    {{"fp32_tflops", "fp32 TFLOP/s", 2},
     [](const Placement& p) { return Cell{p.kernel->fp32_flops / p.kernel->duration_s / 1e12}; }},
    {{"fp64_tflops", "fp64 TFLOP/s", 2},
     [](const Placement& p) { return Cell{p.kernel->fp64_flops / p.kernel->duration_s / 1e12}; }},
    {{"fp16_tflops", "fp16 TFLOP/s", 2},
     [](const Placement& p) { return Cell{p.kernel->fp16_flops / p.kernel->duration_s / 1e12}; }},
    {{"tensor_tflops", "tensor TFLOP/s", 2},
     [](const Placement& p) { return Cell{p.kernel->tensor_flops() / p.kernel->duration_s / 1e12}; }},
    {{"pipe", "pipe", 0}, [](const Placement& p) { return Cell{p.pipe}; }},
    {{"dram_bytes", "DRAM [B]", 0}, [](const Placement& p) { return optional_cell(p.kernel->dram_bytes); }},
    {{"l2_bytes", "L2->SM [B]", 0}, [](const Placement& p) { return optional_cell(p.kernel->l2_bytes); }},
    {{"l1_bytes", "L1->reg [B]", 0}, [](const Placement& p) { return optional_cell(p.kernel->l1_bytes); }},
    {{"dram_tbps", "DRAM TB/s", 3},
     [](const Placement& p) { return optional_cell(rate(p.kernel->dram_bytes, p.kernel->duration_s), 1e-12); }},
    {{"l2_tbps", "L2 TB/s", 3},
     [](const Placement& p) { return optional_cell(rate(p.kernel->l2_bytes, p.kernel->duration_s), 1e-12); }},
    {{"l1_tbps", "L1 TB/s", 3},
     [](const Placement& p) { return optional_cell(rate(p.kernel->l1_bytes, p.kernel->duration_s), 1e-12); }},
    {{"intensity_dram_flop_per_byte", "AI DRAM", 2}, [](const Placement& p) { return optional_cell(p.intensity); }},
    {{"intensity_l2_flop_per_byte", "AI L2", 2},
     [](const Placement& p) { return optional_cell(ratio(p.kernel->flops(), p.kernel->l2_bytes)); }},
    {{"intensity_l1_flop_per_byte", "AI L1", 2},
     [](const Placement& p) { return optional_cell(ratio(p.kernel->flops(), p.kernel->l1_bytes)); }},
    {{"peak_class", "peak", 0},
     [](const Placement& p) { return p.peak ? Cell{std::string(name_of(*p.peak_class))} : Cell{}; }},
    {{"peak_tflops", "peak [TFLOP/s]", 1}, [](const Placement& p) { return optional_cell(p.peak, 1e-12); }},
    {{"bandwidth_tbps", "HBM [TB/s]", 2}, [](const Placement& p) { return Cell{p.bandwidth * 1e-12}; }},
    {{"bound", "bound", 0}, [](const Placement& p) { return p.bound ? Cell{std::string(name_of(*p.bound))} : Cell{}; }},
    {{"attainable_tflops", "attainable [TFLOP/s]", 2},
     [](const Placement& p) { return optional_cell(p.attainable, 1e-12); }},
    {{"roof_pct", "% of roof", 1}, [](const Placement& p) { return optional_cell(p.roof_fraction, 100); }},
    {{"note", "note", 0}, [](const Placement& p) { return Cell{p.note}; }},
}};

struct TensorRow {
  const ncu::Kernel* kernel;
  const ncu::TensorOps* ops;
};

constexpr std::array<ColumnOf<TensorRow>, 6> tensor_columns{{
    {{"id", "ID", 0}, [](const TensorRow& r) { return Cell{r.kernel->id}; }},
    {{"kernel", "kernel", 0}, [](const TensorRow& r) { return Cell{r.kernel->short_name}; }},
    {{"source", "source type", 0}, [](const TensorRow& r) { return Cell{r.ops->source}; }},
    {{"floating", "floating point", 0}, [](const TensorRow& r) { return Cell{r.ops->floating}; }},
    {{"ops", "operations", 0}, [](const TensorRow& r) { return Cell{r.ops->ops}; }},
    {{"tops", "TOP/s", 2}, [](const TensorRow& r) { return Cell{r.ops->ops / r.kernel->duration_s / 1e12}; }},
}};

// The first line of `text` containing `marker`, or empty.
std::string line_with(const std::string& text, std::string_view marker) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(marker) != std::string::npos) return line;
  }
  return {};
}

const GpuSpec& gpu_of(const ProfileOptions& options, const std::vector<ncu::Kernel>& kernels,
                      const HardwareRegistry& registry, const std::string& source) {
  if (options.gpu) return registry.find(*options.gpu);
  std::string device;
  for (const ncu::Kernel& k : kernels) {
    if (!k.device.empty()) device = k.device;
  }
  if (device.empty()) {
    throw InputError(fmt::format("{}: the ncu table names no device: name the GPU with --gpu", source));
  }
  const HardwareMatch match = match_hardware(device, registry);
  if (match.spec == nullptr) throw InputError(fmt::format("{}: {}", source, match.detail));
  return *match.spec;
}

// --kernel goes to ncu as --kernel-name regex:R; a pattern that does not even compile as an
// ECMAScript regular expression made ncu profile nothing (exit 3, "no kernel") instead of naming
// the mistake.
void check_kernel_regex(const std::string& pattern) {
  try {
    (void)std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw InputError(fmt::format("--kernel: '{}' is not a regular expression ({})", pattern, e.what()));
  }
}

// The program after -- must be there before ncu is looked for: ncu would start, fail to launch it
// and profile nothing, which read as "no GPU" (exit 3) for what is a typing mistake.
void check_program(const std::string& program) {
  if (ncu::find_program(program)) return;
  if (program.find('/') == std::string::npos) {
    throw InputError(fmt::format("profile: {}: no such program on PATH", program));
  }
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(program, ec);
  if (!std::filesystem::exists(status)) throw InputError(fmt::format("profile: {}: no such file", program));
  if (std::filesystem::is_directory(status)) throw InputError(fmt::format("profile: {}: is a directory", program));
  throw InputError(fmt::format("profile: {}: is not executable", program));
}

void run_profile(const ProfileOptions& options) {
  if (options.from_csv && !options.program.empty()) {
    throw InputError("profile: give a program to run (after --) or --from-csv FILE, not both");
  }
  if (options.from_csv && options.save_csv) throw InputError("--save-csv keeps what ncu printed: not with --from-csv");
  if (!options.from_csv && options.program.empty()) {
    throw InputError("profile: nothing to profile: give the program after --, e.g. roofline profile -- ./app args");
  }
  if (options.from_csv && options.kernel) {
    throw InputError("--kernel: tells ncu which kernels to profile; with --from-csv nothing is profiled");
  }
  if (options.from_csv && (options.launch_count || options.launch_skip)) {
    throw InputError(
        "--launch-count and --launch-skip: tell ncu which launches to profile; with --from-csv nothing "
        "is profiled");
  }
  if (options.kernel) check_kernel_regex(*options.kernel);
  if (options.launch_count && *options.launch_count < 1) throw InputError("--launch-count: must be at least 1");
  if (options.launch_skip && *options.launch_skip < 0) throw InputError("--launch-skip: must be at least 0");
  if (!options.from_csv) check_program(options.program.front());
  const HardwareRegistry registry = load_registry(options.common);
  if (options.gpu) (void)registry.find(*options.gpu);  // a bad name is bad input before anything runs
  std::string text;
  std::string source;
  if (options.from_csv) {
    text = read_input_file(*options.from_csv, max_data_file_bytes);
    source = *options.from_csv;
  } else {
    std::vector<std::string> argv{ncu::find_ncu(options.ncu)};
    for (std::string& a : ncu_arguments(options)) argv.push_back(std::move(a));
    for (const std::string& a : options.program) argv.push_back(a);
    const ncu::ProcessResult run = ncu::run_process(argv);
    const std::string all = run.out + "\n" + run.err;
    if (all.find("ERR_NVGPUCTRPERM") != std::string::npos) {
      throw NoDeviceError(
          "profile: ncu cannot read the GPU's performance counters (ERR_NVGPUCTRPERM): run as root, or let every user "
          "profile (NVreg_RestrictProfilingToAdminUsers=0)");
    }
    std::cerr << run.err;
    text = run.out;
    source = "ncu";
    if (run.out.find("\"Kernel Name\"") == std::string::npos) {
      std::string why = line_with(all, "==ERROR==");
      if (why.empty()) why = line_with(all, "==WARNING==");
      throw NoDeviceError(fmt::format("profile: ncu profiled no kernel (exit code {}){}{}", run.exit_code,
                                      why.empty() ? "" : ": ", why));
    }
    if (run.exit_code != 0) {
      std::cerr << fmt::format("roofline: note: ncu exited with code {} (the program's own exit code?)\n",
                               run.exit_code);
    }
    if (options.save_csv) write_file_atomically(*options.save_csv, run.out, "--save-csv");
  }
  const ncu::RawCsv csv = ncu::parse_raw_csv(text, source);
  if (!options.from_csv) {
    for (const std::string& line : csv.other_lines) std::cerr << line << '\n';  // the program's own output
  }
  const std::vector<ncu::Kernel> kernels = ncu::kernels(csv, source);
  if (kernels.empty()) {
    const std::string message = fmt::format("profile: {} holds no kernel", source);
    if (options.from_csv) throw InputError(message);  // the file is wrong, not the machine
    throw NoDeviceError(message);
  }
  const GpuSpec& gpu = gpu_of(options, kernels, registry, source);
  Report report = profile_report(options, kernels, gpu, source);
  if (options.chart) write_file_atomically(*options.chart, profile_chart(kernels, gpu), "--chart");
  emit(report, options.common);
}

}  // namespace

std::vector<std::string> ncu_arguments(const ProfileOptions& options) {
  std::vector<std::string> args{"--clock-control", "none", "--print-units", "base", "--csv", "--page", "raw"};
  for (const std::string& section : ncu::sections()) {
    args.emplace_back("--section");
    args.push_back(section);
  }
  if (options.kernel) {
    args.emplace_back("--kernel-name");
    args.push_back("regex:" + *options.kernel);
  }
  if (options.launch_count) {
    args.emplace_back("--launch-count");
    args.push_back(std::to_string(*options.launch_count));
  }
  if (options.launch_skip) {
    args.emplace_back("--launch-skip");
    args.push_back(std::to_string(*options.launch_skip));
  }
  return args;
}

Report profile_report(const ProfileOptions& options, const std::vector<ncu::Kernel>& kernels, const GpuSpec& gpu,
                      const std::string& source) {
  const std::vector<Placement> placed = ncu::place_all(kernels, Roofs::of(gpu));
  Report report;
  report.kind = "profile";
  const auto optional_text = [](const std::optional<std::string>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  report.inputs = {
      {"program", options.program},
      {"from_csv", optional_text(options.from_csv)},
      {"ncu_arguments", options.from_csv ? nlohmann::json(nullptr) : nlohmann::json(ncu_arguments(options))},
      {"gpu", optional_text(options.gpu)},
      {"kernel", optional_text(options.kernel)},
      {"chart", optional_text(options.chart)}};
  report.hardware.push_back({gpu.id, gpu.origin});
  Table table = Table::from_rows<Placement>(
      "kernels", fmt::format("Kernels on the roofline of {} (from {})", gpu.id, source), kernel_columns, placed);
  if (parse_format(options.common.format) == Format::table) {
    // The human table keeps what places a kernel; JSON and CSV carry every column.
    const std::vector<std::string_view> keep{"id",    "kernel",    "duration_us", "tflops",
                                             "pipe",  "dram_tbps", "l2_tbps",     "intensity_dram_flop_per_byte",
                                             "bound", "roof_pct",  "note"};
    Table narrow{table.name, table.title, {}, {}};
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      if (std::find(keep.begin(), keep.end(), table.columns[i].key) != keep.end()) index.push_back(i);
    }
    for (std::size_t i : index) narrow.columns.push_back(table.columns[i]);
    for (const auto& row : table.rows) {
      std::vector<Cell> cells;
      for (std::size_t i : index) cells.push_back(row[i]);
      narrow.rows.push_back(std::move(cells));
    }
    table = std::move(narrow);
  }
  report.tables.push_back(std::move(table));
  std::vector<TensorRow> tensor;
  for (const ncu::Kernel& k : kernels) {
    for (const ncu::TensorOps& t : k.tensor) tensor.push_back({&k, &t});
  }
  report.tables.push_back(
      Table::from_rows<TensorRow>("tensor_ops", "Tensor-core operations by source type", tensor_columns, tensor));
  report.notes.push_back(
      "FLOPs: fp32 = fadd + fmul + 2 ffma, fp64 = dadd + dmul + 2 dfma, fp16 = 2 hadd + 2 hmul + 4 hfma (half2) "
      "thread instructions, plus floating-point tensor-core operations (sm__ops_path_tensor_src_*); integer tensor "
      "operations are listed apart");
  report.notes.push_back(
      "bytes: DRAM (dram__bytes, read + write), L2->SM (lts2xbar), L1->registers (LSU writeback of global, local, "
      "shared loads): each rate x the kernel's duration; intensity = FLOPs / DRAM bytes");
  report.notes.push_back(fmt::format(
      "roofs of {} (hardware file): the peak of the pipe that did most FLOPs, and {:.2f} TB/s; % of roof = achieved / "
      "min(peak, intensity x bandwidth) (a kernel with no FLOPs: DRAM bandwidth / the file's bandwidth)",
      gpu.id, gpu.memory_bandwidth_tbps));
  report.notes.push_back("measured with --clock-control none: the clocks the GPU chose, as in a real run");
  return report;
}

std::string profile_chart(const std::vector<ncu::Kernel>& kernels, const GpuSpec& gpu) {
  const Roofs roofs = Roofs::of(gpu);
  const std::vector<Placement> placed = ncu::place_all(kernels, roofs);
  plot::Chart chart;
  chart.title = fmt::format("Nsight Compute profile on {}", gpu.name);
  std::vector<PeakClass> peaks;
  for (const Placement& p : placed) {
    if (p.peak && std::find(peaks.begin(), peaks.end(), *p.peak_class) == peaks.end()) peaks.push_back(*p.peak_class);
  }
  if (peaks.empty() && roofs.peak(PeakClass::fp32)) peaks.push_back(PeakClass::fp32);
  for (PeakClass peak : peaks) {
    std::string label(name_of(peak));
    std::replace(label.begin(), label.end(), '_', ' ');
    chart.compute_roofs.push_back({label, *roofs.peak(peak), plot::Provenance::datasheet});
  }
  chart.memory_roofs.push_back({gpu.memory_type, roofs.bandwidth, plot::Provenance::datasheet});
  for (const Placement& p : placed) {
    if (!p.intensity) continue;
    chart.points.push_back(
        {p.label, *p.intensity, p.kernel->flops() / p.kernel->duration_s, plot::PointKind::measured});
  }
  plot::validate(chart);
  return plot::render_svg(chart);
}

void setup_profile_command(CLI::App& app) {
  auto options = std::make_shared<ProfileOptions>();
  CLI::App* command = app.add_subcommand(
      "profile",
      "Run Nsight Compute (ncu) on a program and place each kernel on the roofline: FLOP/s per pipe, bytes per memory "
      "level, intensity, bound, % of the roof. Usage: roofline profile [flags] -- CMD ARGS...");
  command->add_option("program", options->program, "The program to profile and its arguments (after --)");
  command->add_option("--from-csv", options->from_csv,
                      "Read a saved `ncu --page raw --csv` table instead of running ncu (no GPU needed)");
  command->add_option("--ncu", options->ncu, "The ncu executable (default: ncu on PATH, then /usr/local/cuda/bin)");
  command->add_option("--gpu", options->gpu, "The hardware file for the roofs, when the device name matches none");
  command->add_option("--kernel", options->kernel, "Profile only kernels whose name matches this regex");
  command->add_option("--launch-count", options->launch_count, "Profile at most this many kernel launches");
  command->add_option("--launch-skip", options->launch_skip, "Skip this many kernel launches first");
  command->add_option("--chart", options->chart, "Also write the kernels' roofline chart to this SVG file");
  command->add_option("--save-csv", options->save_csv,
                      "Also keep what ncu printed (its raw CSV table), to read again with --from-csv");
  add_common_options(*command, options->common);
  command->callback([options] { run_profile(*options); });
}

}  // namespace roofline::cli
