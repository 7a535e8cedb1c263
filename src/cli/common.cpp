#include "common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"
#include "roofline/llm/model.hpp"
#include "roofline/plot/html.hpp"
#include "roofline/report/output_file.hpp"

namespace roofline::cli {

void add_common_options(CLI::App& command, CommonOptions& options, bool long_output) {
  command
      .add_option("--format", options.format,
                  "Output format: table (default), json, csv (one table), markdown, or html (one self-contained "
                  "page with the report's charts)")
      ->check(CLI::IsMember(std::vector<std::string>(format_names.begin(), format_names.end()), CLI::ignore_case))
      ->group("Output");
  command
      .add_option("--table", options.table,
                  "Only this table of the report (its JSON name under results), in csv, table or markdown output; "
                  "csv's default is the first")
      ->group("Output");
  command
      .add_option(long_output ? "-o,--output" : "-o", options.output,
                  "Write the report to FILE (atomically) instead of stdout; - is stdout")
      ->group("Output");
  command
      .add_option("--hardware-dir", options.hardware_dir,
                  "Also load GPU spec files (*.json) from DIR; a file with a bundled id replaces it. "
                  "ROOFLINE_HARDWARE_PATH (colon-separated) does the same")
      ->group("Hardware");
}

const HardwareRegistry& load_registry(const CommonOptions& options) {
  // Bundled files cannot change while the process runs; user directories are read again every
  // time, so that an edited file is seen.
  thread_local std::optional<HardwareRegistry> bundled;
  thread_local std::optional<HardwareRegistry> with_user_files;
  const HardwareSearch search = HardwareSearch::from_flag_and_environment(options.hardware_dir);
  if (search.directories.empty()) {
    if (!bundled) bundled = HardwareRegistry::load(search);
    return *bundled;
  }
  with_user_files = HardwareRegistry::load(search);
  for (const std::string& note : with_user_files->notes()) std::cerr << "roofline: note: " << note << '\n';
  return *with_user_files;
}

namespace {
thread_local ReportCapture* active_capture = nullptr;
}  // namespace

ReportCapture::ReportCapture(std::function<void(const Report&)> take) : take_(std::move(take)) {
  if (active_capture != nullptr) throw std::logic_error("a ReportCapture is already active on this thread");
  active_capture = this;
}

ReportCapture::~ReportCapture() {
  active_capture = nullptr;
}

void emit(const Report& report, const CommonOptions& options) {
  if (active_capture != nullptr) {
    active_capture->take(report);
    return;
  }
  const Format format = parse_format(options.format);
  std::ostringstream text;
  const std::unique_ptr<Printer> printer =
      format == Format::html && !options.table ? plot::make_html_printer() : make_printer({format, options.table});
  printer->print(report, text);
  if (options.output) {
    write_file_atomically(*options.output, text.str());
  } else {
    write_to_stdout(text.str());
  }
  // CSV has no place for the notes: they go to stderr once the report is written, so that a run
  // whose report cannot be written says only why.
  if (format == Format::csv) {
    for (const std::string& note : report.notes) std::cerr << "roofline: note: " << note << '\n';
  }
}

void deprecation_note(const std::string& old_name, const std::string& name) {
  std::cerr << fmt::format("roofline: note: {} is deprecated; it is now {}\n", old_name, name);
}

bool draws_figures(const CommonOptions& options) {
  return parse_format(options.format) == Format::html;
}

void add_what_if_option(CLI::App& command, std::vector<std::string>& assignments) {
  command
      .add_option("--set", assignments,
                  "What if: override a hardware figure, e.g. --set hbm_bandwidth_tbps=8 --set bf16_tflops=2000 "
                  "(any figure of the file, by path or unique name)")
      ->group("Hardware")
      ->take_all();
}

std::vector<GpuSpec> selected_gpus(const HardwareRegistry& registry, const std::string& gpu_list,
                                   const std::vector<std::string>& assignments) {
  const SelectedGpus selected(registry, gpu_list, assignments);
  return {selected.begin(), selected.end()};
}

SelectedGpus::SelectedGpus(const HardwareRegistry& registry, const std::string& gpu_list,
                           const std::vector<std::string>& assignments) {
  const std::vector<const GpuSpec*> named = registry.resolve_list(gpu_list);
  if (assignments.empty()) {
    for (const GpuSpec* gpu : named) specs_.emplace_back(*gpu);
    return;
  }
  overridden_.reserve(named.size());  // no reallocation: specs_ points at its elements
  for (const GpuSpec* gpu : named) overridden_.push_back(apply_overrides(*gpu, assignments));
  specs_.assign(overridden_.begin(), overridden_.end());
}

namespace {
template <typename Gpus>
void add_origins_of(Report& report, const Gpus& gpus) {
  for (const GpuSpec& gpu : gpus) report.hardware.push_back({gpu.id, gpu.origin});
}
}  // namespace

void add_hardware_origins(Report& report, const std::vector<GpuSpec>& gpus) {
  add_origins_of(report, gpus);
}

void add_hardware_origins(Report& report, const SelectedGpus& gpus) {
  add_origins_of(report, gpus);
}

void require_decimal_numbers(CLI::App& app) {
  // An empty description keeps --help as it was.
  const CLI::Validator decimal(
      [](std::string& text) -> std::string {
        return parse_decimal(text) ? std::string() : fmt::format("'{}' is not a decimal number", text);
      },
      "");
  const CLI::Validator decimal_integer(
      [](std::string& text) -> std::string {
        const std::size_t sign = text.starts_with('-') || text.starts_with('+') ? 1 : 0;
        const std::size_t digits = text.size() - sign;
        if (digits == 0 || text.find_first_not_of("0123456789", sign) != std::string::npos) {
          return fmt::format("'{}' is not a decimal integer", text);
        }
        const std::size_t first = std::min(text.find_first_not_of('0', sign), text.size() - 1);
        text.erase(sign, first - sign);
        return {};
      },
      "");
  for (CLI::Option* option : app.get_options()) {
    // "INT:INT in [1 - 2147483647]" for an option with a Range check: the type is before the colon.
    const std::string full = option->get_type_name();
    const std::string type = full.substr(0, full.find(':'));
    if (type == "FLOAT") option->check(decimal);
    // transform, not check: check hands the validator a copy, and the leading zeros must go.
    if (type == "INT" || type == "UINT") option->transform(decimal_integer);
  }
  for (CLI::App* command : app.get_subcommands({})) require_decimal_numbers(*command);
}

namespace {

std::int64_t batch_of(const std::string& text, std::string_view flag, std::string_view alternatives) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < 1 || value > max_batch) {
    throw InputError(fmt::format("{}: '{}' is not a batch from 1 to {}{}", flag, text, max_batch, alternatives));
  }
  return value;
}

}  // namespace

std::int64_t parse_batch(const std::string& text, std::string_view flag) {
  return batch_of(text, flag, "");
}

std::int64_t parse_batch_or_max(const std::string& text, std::string_view flag) {
  if (text == "max") return 0;
  return batch_of(text, flag, " or 'max'");
}

std::vector<double> parse_positive_numbers(const std::string& flag, const std::string& text) {
  std::vector<double> values;
  for (const std::string& piece : split(text, ',')) {
    const std::optional<double> parsed = parse_decimal(piece);
    const double value = parsed.value_or(0);
    if (!parsed || !std::isfinite(value) || value <= 0) {
      throw InputError(fmt::format("{}: '{}' is not a positive finite number", flag, piece));
    }
    values.push_back(value);
  }
  return values;
}

}  // namespace roofline::cli
