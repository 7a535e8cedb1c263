// roofline hw: list, show and check the hardware database.
#include "hw.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "commands.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"

namespace roofline::cli {
namespace {

using nlohmann::json;

constexpr std::array<ColumnOf<GpuSpec>, 11> list_columns{{
    {{"id", "id", 0}, [](const GpuSpec& g) { return Cell{g.id}; }},
    {{"name", "name", 0}, [](const GpuSpec& g) { return Cell{g.name}; }},
    {{"architecture", "arch", 0}, [](const GpuSpec& g) { return Cell{g.architecture}; }},
    {{"release_year", "year", 0}, [](const GpuSpec& g) { return Cell{std::int64_t{g.release_year}}; }},
    {{"units", "SMs/CUs", 0}, [](const GpuSpec& g) { return Cell{std::int64_t{g.units}}; }},
    {{"bf16_tflops", "bf16 [TFLOP/s]", 1}, [](const GpuSpec& g) { return optional_cell(g.peak_tflops[5]); }},
    {{"fp8_tflops", "fp8 [TFLOP/s]", 1}, [](const GpuSpec& g) { return optional_cell(g.peak_tflops[6]); }},
    {{"memory_capacity_gb", "memory [GB]", 0}, [](const GpuSpec& g) { return Cell{g.memory_capacity_gb}; }},
    {{"memory_bandwidth_tbps", "HBM [TB/s]", 2}, [](const GpuSpec& g) { return Cell{g.memory_bandwidth_tbps}; }},
    {{"l2_mb", "L2 [MB]", 0}, [](const GpuSpec& g) { return Cell{g.l2_mb}; }},
    {{"aliases", "aliases", 0}, [](const GpuSpec& g) { return Cell{fmt::format("{}", fmt::join(g.aliases, " "))}; }},
}};
static_assert(static_cast<std::size_t>(PeakClass::bf16) == 5 && static_cast<std::size_t>(PeakClass::fp8) == 6);

struct FigureRow {
  std::string key;
  Cell value;
  std::string source;
  std::string note;
};

constexpr std::array<ColumnOf<FigureRow>, 4> figure_columns{{
    {{"key", "figure", 0}, [](const FigureRow& r) { return Cell{r.key}; }},
    {{"value", "value", 2}, [](const FigureRow& r) { return r.value; }},
    {{"source", "source", 0}, [](const FigureRow& r) { return Cell{r.source}; }},
    {{"note", "note", 0}, [](const FigureRow& r) { return Cell{r.note}; }},
}};

void collect_rows(const json& node, const std::string& path, const json& sources, std::vector<FigureRow>& rows) {
  for (const auto& [key, child] : node.items()) {
    const std::string dotted = path.empty() ? key : path + "." + key;
    if (key == "sources" || key == "schema" || key == "notes") continue;
    if (child.is_object() && child.contains("value")) {
      const std::string source = child.at("source").get<std::string>();
      const std::string title = sources.contains(source) ? sources.at(source).at("title").get<std::string>() : source;
      Cell value = child.at("value").is_number_integer() ? Cell{child.at("value").get<std::int64_t>()}
                                                         : Cell{child.at("value").get<double>()};
      rows.push_back({dotted, value, title, child.value("note", "")});
    } else if (child.is_object()) {
      collect_rows(child, dotted, sources, rows);
    } else if (child.is_array()) {
      std::vector<std::string> items;
      for (const json& item : child) items.push_back(item.is_string() ? item.get<std::string>() : item.dump());
      rows.push_back({dotted, Cell{fmt::format("{}", fmt::join(items, " "))}, "", ""});
    } else {
      rows.push_back({dotted, child.is_string() ? Cell{child.get<std::string>()} : Cell{child.dump()}, "", ""});
    }
  }
}

struct FindingRow {
  std::string file;
  std::string level;
  std::string key;
  std::string message;
};

constexpr std::array<ColumnOf<FindingRow>, 4> finding_columns{{
    {{"file", "file", 0}, [](const FindingRow& r) { return Cell{r.file}; }},
    {{"level", "level", 0}, [](const FindingRow& r) { return Cell{r.level}; }},
    {{"key", "key", 0}, [](const FindingRow& r) { return Cell{r.key}; }},
    {{"message", "message", 0}, [](const FindingRow& r) { return Cell{r.message}; }},
}};

FindingRow to_row(const HardwareFinding& f) {
  return {f.file, f.level == HardwareFinding::Level::error ? "error" : "warning", f.key, f.message};
}

}  // namespace

Report run_hw_list(const HardwareRegistry& registry) {
  Report report;
  report.kind = "hw-list";
  report.inputs = json::object();
  report.tables.push_back(
      Table::from_rows<GpuSpec>("gpus", "Known GPUs (dense peaks; 1 GB = 1e9 B)", list_columns, registry.all()));
  add_hardware_origins(report, registry.all());
  return report;
}

Report run_hw_show(const HwShowOptions& options, const HardwareRegistry& registry) {
  const GpuSpec gpu = apply_overrides(registry.find(options.gpu), options.what_if);
  Report report;
  report.kind = "hw-show";
  report.inputs = {{"gpu", options.gpu}, {"set", options.what_if}};
  std::vector<FigureRow> rows;
  collect_rows(gpu.document, "", gpu.document.at("sources"), rows);
  report.tables.push_back(
      Table::from_rows<FigureRow>("figures", fmt::format("{} ({})", gpu.name, gpu.id), figure_columns, rows));
  report.extra_results["spec"] = gpu.document;
  if (gpu.document.contains("notes")) report.notes.push_back(gpu.document.at("notes").get<std::string>());
  report.notes.push_back(fmt::format("{} memory: {:.1f} GiB as nvidia-smi/rocm-smi count it ({} GB decimal)", gpu.id,
                                     gpu.memory_capacity_bytes() / (1024.0 * 1024.0 * 1024.0), gpu.memory_capacity_gb));
  report.hardware.push_back({gpu.id, gpu.origin});
  return report;
}

HwCheckResult run_hw_check(const HwCheckOptions& options, const HardwareRegistry& registry) {
  if (!(options.tolerance_percent > 0 && options.tolerance_percent < 100)) {
    throw InputError(fmt::format("--tolerance: {} is not a percentage in (0, 100)", options.tolerance_percent));
  }
  const double tolerance = options.tolerance_percent / 100.0;
  std::vector<FindingRow> rows;
  std::size_t checked = 0;
  std::size_t invalid = 0;
  std::size_t warnings = 0;
  const auto record = [&](const std::vector<HardwareFinding>& findings) {
    for (const HardwareFinding& f : findings) {
      rows.push_back(to_row(f));
      if (f.level == HardwareFinding::Level::warning) ++warnings;
    }
  };
  if (options.files.empty()) {
    for (const GpuSpec& gpu : registry.all()) {
      ++checked;
      record(check_physics(gpu, tolerance));
    }
  } else {
    for (const std::string& file : options.files) {
      ++checked;
      std::string text;
      try {
        text = read_input_file(file);
      } catch (const InputError& e) {
        ++invalid;
        std::string why = e.what();
        why = why.substr(std::min(why.size(), file.size() + 2));  // the row names the file
        rows.push_back({file, "error", "", why});
        continue;
      }
      LoadResult result = load_hardware_document(text, file);
      if (!result.spec) {
        ++invalid;
        record(result.errors);
        continue;
      }
      record(check_physics(*result.spec, tolerance));
    }
  }
  Report report;
  report.kind = "hw-check";
  report.inputs = {{"files", options.files}, {"tolerance_percent", options.tolerance_percent}};
  report.tables.push_back(Table::from_rows<FindingRow>("findings", "Findings", finding_columns, rows));
  report.extra_results["summary"] = {{"checked", checked}, {"invalid", invalid}, {"warnings", warnings}};
  report.notes.push_back(fmt::format("{} file(s) checked: {} invalid, {} warning(s); physics tolerance {}%", checked,
                                     invalid, warnings, options.tolerance_percent));
  if (!rows.empty() && warnings > 0) {
    report.notes.push_back(
        "warnings are explained in docs/hardware.md: a vendor figure quoted at another clock stands");
  }
  return {std::move(report), invalid > 0};
}

void setup_hw_command(CLI::App& app) {
  CLI::App* hw = app.add_subcommand("hw", "The hardware database: list, show and check GPU spec files");
  hw->require_subcommand(1);

  auto list_common = std::make_shared<CommonOptions>();
  CLI::App* list = hw->add_subcommand("list", "List the known GPUs");
  add_common_options(*list, *list_common);
  list->callback([list_common] { emit(run_hw_list(load_registry(*list_common)), *list_common); });

  auto show = std::make_shared<HwShowOptions>();
  CLI::App* show_command = hw->add_subcommand("show", "Every figure of one GPU with its source");
  show_command->add_option("gpu", show->gpu, "GPU id or alias")->required();
  add_what_if_option(*show_command, show->what_if);
  add_common_options(*show_command, show->common);
  show_command->callback([show] { emit(run_hw_show(*show, load_registry(show->common)), show->common); });

  auto check = std::make_shared<HwCheckOptions>();
  CLI::App* check_command = hw->add_subcommand(
      "check", "Validate spec files (default: all known) and their physics; exit 1 if any file is invalid");
  check_command->add_option("files", check->files, "Spec files to check");
  check_command->add_option("--tolerance", check->tolerance_percent, "Physics mismatch that warns, in percent")
      ->capture_default_str();
  add_common_options(*check_command, check->common);
  check_command->callback([check] {
    HwCheckResult result = run_hw_check(*check, load_registry(check->common));
    emit(result.report, check->common);
    if (result.any_invalid) throw CheckFailed("hw check: invalid hardware file(s)");
  });
}

}  // namespace roofline::cli
