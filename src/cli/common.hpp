#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "roofline/hardware/hardware.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli {

// The flags every command takes: --format, -o and --hardware-dir.
struct CommonOptions {
  std::string format = "table";
  std::optional<std::string> output;
  std::optional<std::string> hardware_dir;
};

// `long_output` false leaves out the --output spelling of -o, for a command whose own --output
// means something else (plan: output tokens per request).
void add_common_options(CLI::App& command, CommonOptions& options, bool long_output = true);

// The hardware registry for this run: bundled files, ROOFLINE_HARDWARE_PATH, --hardware-dir.
// Notes about overridden files go to stderr.
[[nodiscard]] HardwareRegistry load_registry(const CommonOptions& options);

// Renders the report in the chosen format to stdout, or atomically to -o FILE.
void emit(const Report& report, const CommonOptions& options);

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
