#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "roofline/hardware/hardware.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli {

// The flags every command takes: --format, --table, -o and --hardware-dir.
struct CommonOptions {
  std::string format = "table";
  std::optional<std::string> table;
  std::optional<std::string> output;
  std::optional<std::string> hardware_dir;
};

// `long_output` false leaves out the --output spelling of -o, for a command whose own --output
// means something else (plan: output tokens per request).
void add_common_options(CLI::App& command, CommonOptions& options, bool long_output = true);

// The hardware registry for this run: bundled files, ROOFLINE_HARDWARE_PATH, --hardware-dir.
// Notes about overridden files go to stderr. Valid until the next call on this thread; a registry
// of bundled files only is kept, so that a process running many commands (the Python module)
// parses each bundled GPU once.
[[nodiscard]] const HardwareRegistry& load_registry(const CommonOptions& options);

// Renders the report in the chosen format to stdout, or atomically to -o FILE; while a
// ReportCapture lives on this thread, hands the report to it instead.
void emit(const Report& report, const CommonOptions& options);

// Takes the report a command emits instead of printing it: the Python module (python/) runs a
// command's own flags and callback and returns its report. One per thread at a time.
class ReportCapture {
 public:
  ReportCapture();
  ReportCapture(const ReportCapture&) = delete;
  ReportCapture& operator=(const ReportCapture&) = delete;
  ~ReportCapture();

  std::optional<Report> report;  // the last report emitted while this capture lived
};

// True when the report will be drawn as HTML: only then does a command draw its figures.
[[nodiscard]] bool draws_figures(const CommonOptions& options);

// The one note a deprecated spelling prints (stderr, never into the report).
void deprecation_note(const std::string& old_name, const std::string& name);

// A flag renamed: `name` is the flag (and its config key); `old_name` still sets the same value,
// left out of --help, with one note on stderr naming the new flag. Give one of them: both is bad
// input. `name` may be required: the old spelling satisfies it.
template <typename T>
CLI::Option* add_renamed_option(CLI::App& command, const std::string& name, const std::string& old_name, T& value,
                                const std::string& description) {
  CLI::Option* option = command.add_option(name, value, description);
  CLI::Option* old = command.add_option(old_name, value, "Deprecated: " + name)->group("")->configurable(false);
  old->each([option, old_name, name](const std::string& text) {
    if (option->count() > 0) {
      throw CLI::ValidationError(old_name + " is the old name of " + name + ": give " + name + " only");
    }
    // The new flag counts as given, so that its `required` holds.
    option->add_result(text);
    deprecation_note(old_name, name);
  });
  return option;
}

// "What if" overrides of hardware figures: --set KEY=VALUE, repeatable.
void add_what_if_option(CLI::App& command, std::vector<std::string>& assignments);

// Resolves --gpu (a list or "all") and applies the --set overrides to each GPU.
[[nodiscard]] std::vector<GpuSpec> selected_gpus(const HardwareRegistry& registry, const std::string& gpu_list,
                                                 const std::vector<std::string>& assignments);

// Records where each GPU came from in the report.
void add_hardware_origins(Report& report, const std::vector<GpuSpec>& gpus);

// CLI11 reads a number flag with strtold or strtoll(base 0): "--rps 0x10" was 16 and "--tp 010"
// was 8 (octal). Every FLOAT and INT option of `app` and its subcommands is made decimal: hex is
// refused, and an integer's leading zeros are dropped before CLI11 reads it ("010" is 10).
void require_decimal_numbers(CLI::App& app);

// Parses a comma-separated list of positive finite numbers for `flag`; throws InputError.
[[nodiscard]] std::vector<double> parse_positive_numbers(const std::string& flag, const std::string& text);

}  // namespace roofline::cli
