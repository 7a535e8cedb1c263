#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
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
// command's own flags and callback and makes its result from the report while it lives (no copy
// of it). One per thread at a time.
class ReportCapture {
 public:
  explicit ReportCapture(std::function<void(const Report&)> take);
  ReportCapture(const ReportCapture&) = delete;
  ReportCapture& operator=(const ReportCapture&) = delete;
  ~ReportCapture();

  void take(const Report& report) const { take_(report); }

 private:
  std::function<void(const Report&)> take_;
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

// The GPUs --gpu names (a list or "all"), with the --set overrides applied: without overrides the
// registry's own specs, not copies (a spec holds its whole file: copying it was a third of a small
// `op` call run in process), with them copies. Valid while the registry is; moves, never copies.
class SelectedGpus {
 public:
  SelectedGpus() = default;  // none
  SelectedGpus(const HardwareRegistry& registry, const std::string& gpu_list,
               const std::vector<std::string>& assignments);
  SelectedGpus(SelectedGpus&&) = default;
  SelectedGpus& operator=(SelectedGpus&&) = default;
  SelectedGpus(const SelectedGpus&) = delete;
  SelectedGpus& operator=(const SelectedGpus&) = delete;
  ~SelectedGpus() = default;

  [[nodiscard]] std::size_t size() const { return specs_.size(); }
  [[nodiscard]] auto begin() const { return specs_.begin(); }
  [[nodiscard]] auto end() const { return specs_.end(); }

 private:
  std::vector<GpuSpec> overridden_;  // the copies --set changed; specs_ points into it
  std::vector<std::reference_wrapper<const GpuSpec>> specs_;
};

// Records where each GPU came from in the report.
void add_hardware_origins(Report& report, const std::vector<GpuSpec>& gpus);
void add_hardware_origins(Report& report, const SelectedGpus& gpus);

// CLI11 reads a number flag with strtold or strtoll(base 0): "--rps 0x10" was 16 and "--tp 010"
// was 8 (octal). Every FLOAT and INT option of `app` and its subcommands is made decimal: hex is
// refused, and an integer's leading zeros are dropped before CLI11 reads it ("010" is 10).
void require_decimal_numbers(CLI::App& app);

// Parses a comma-separated list of positive finite numbers for `flag`; throws InputError.
[[nodiscard]] std::vector<double> parse_positive_numbers(const std::string& flag, const std::string& text);

// A batch (concurrent requests) for `flag`: a decimal integer from 1 to max_batch (llm/model.hpp);
// throws InputError naming the flag otherwise.
[[nodiscard]] std::int64_t parse_batch(const std::string& text, std::string_view flag);
// The same, or "max", returned as 0: the largest batch whose KV cache fits.
[[nodiscard]] std::int64_t parse_batch_or_max(const std::string& text, std::string_view flag);

}  // namespace roofline::cli
